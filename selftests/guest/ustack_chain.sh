#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack_chain.sh MODULE.ko - deferred user stacks end to end: a test
# program with a known call chain (selftests/guest/ustack/chain.c, built
# here 64-bit and, on x86, -m32 through scripts/m32-cc; on arm64 the
# AArch32 -marm and -mthumb builds come from the host) issues raw syscalls
# and page faults; the user_stack records, resolved through the file_map records
# (path + offset, addr2line), name exactly that chain, innermost first.
# Also: one walk per kernel entry (stat), fork/threads/signals/exec,
# rmmod right after the load with works pending.
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

CFLAGS=(-O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread)
SRC=$HERE/ustack/chain.c
U=$T/instances/ust

# AArch32 programs: Debian's arm64 gcc has no 32-bit target, so they are
# cross-built on the host (scripts/build-aarch32, run by
# scripts/build-module arm64|arm64-debug) into build/aarch32 (or
# $FSM_AARCH32_DIR); the guest sees the host's checkout.
A32DIR=${FSM_AARCH32_DIR:-$HERE/../../build/aarch32}

build() {
	check "gcc 64-bit chain" gcc "${CFLAGS[@]}" -o "$TMPD/chain64" "$SRC"
	case $ARCH in
	x86_64)
		# scripts/deps installs gcc-12-multilib: a missing -m32
		# toolchain is a failure, not a skip.
		check "gcc -m32 chain (scripts/m32-cc)" \
			"$HERE/../../scripts/m32-cc" "${CFLAGS[@]}" -o "$TMPD/chain32" "$SRC"
		;;
	aarch64)
		# pointer authentication: every function signs its return
		# address (paciasp) before saving it in its frame record
		check "gcc -mbranch-protection=pac-ret+leaf chain" gcc "${CFLAGS[@]}" \
			-mbranch-protection=pac-ret+leaf -o "$TMPD/chain-pac" "$SRC"
		# a missing binary is a failure: the host step did not run
		local m
		for m in arm thumb; do
			check "AArch32 -m$m chain built on the host ($A32DIR/chain-$m; scripts/build-aarch32)" \
				cp "$A32DIR/chain-$m" "$TMPD/chain-$m"
		done
		;;
	esac
}
# sources 0|1: the source events of $U off or on. On only while a program
# runs: sources attached as tracepoint probes (Debian's arm64 kernel) do
# not honour tracing_on, and with them on every syscall and page
# allocation of the checks between runs (bash, grep, addr2line) took a
# kernel and a user stack: four fifths of the suite's time in the arm64
# guest (Documentation/testing.rst), and the user map filled up.
sources() {
	echo "$1" >"$U/events/raw_syscalls/sys_enter/enable"
	echo "$1" >"$U/events/$UFAULT_DIR/enable"
}
# setup: instance with raw syscalls + user page faults as sources
setup() {
	mkdir "$U"
	echo "raw_syscalls:sys_enter $UFAULT_EV" >"$U/stack_map_events"
	echo 8192 >"$U/buffer_size_kb"
	check "echo 1 > options/stackmap" eval "echo 1 > $U/options/stackmap"
	check "echo 1 > options/stackmap_user" eval "echo 1 > $U/options/stackmap_user"
	check_eq "options/stackmap_user reads 1" "$(<"$U/options/stackmap_user")" 1
	check_eq "user_stack enabled with it" "$(<"$U/events/stackmap/user_stack/enable")" 1
	check_eq "file_map enabled with it" "$(<"$U/events/stackmap/file_map/enable")" 1
}

# text_bias PROG: the virtual address minus the file offset of PROG's first
# LOAD segment: 0 for a position-independent program, 0x10000 for a static
# AArch32 one (Debian's armhf toolchain has no -static-pie). The user_stack
# frames are file offsets; addr2line wants addresses.
text_bias() {
	local t off va
	while read -r t off va _; do
		[ "$t" = LOAD ] && { echo $((va - off)); return; }
	done < <(readelf -lW "$1")
	echo 0
}

# user_frames TRACE PROG LABEL: the user_stack records of TRACE whose
# frame 0 is in PROG, resolved through the file_map records, one line each
# in $TMPD/LABEL.f: "NR FLAGS ID_REASON ADDR...", NR the record's frames,
# ADDR the addresses in PROG (for addr2line) of its leading frames in PROG;
# and a line "unknown" for each id-only record of PROG's task whose id has
# no inline record in TRACE.
user_frames() {
	local trace=$1 prog=$2 L=$3 l id g path fr fl ir i off bias
	local -A paths known
	local -a a offs
	bias=$(text_bias "$prog")
	# one grep, then bash on the few lines that matter
	grep -E ' (user_stack|file_map): ' "$trace" >"$TMPD/$L.u"
	: >"$TMPD/$L.f"
	while IFS= read -r l; do
		case $l in
		*" file_map: "*)
			id=${l#* file_id=}; id=${id%% *}
			path=${l#* path=}; path=${path%% build_id=*}
			paths[$id]=$path
			;;
		*" user_stack: "*)
			fr=${l#* frames=\{}; fr=${fr%\}*}
			# deduplicated: frames only in the first record of an id
			# in this recording; later ones carry the id alone
			id=${l#* ustack_id=}; id=${id%% *}
			g=${l#* gen=}; g=${g%% *}
			if [ -n "$fr" ]; then
				[ "$id" != 4294967295 ] && known[$g.$id]=$fr
			elif [ "$id" != 4294967295 ]; then
				fr=${known[$g.$id]}
				# the program's own ids start in this recording
				# (other tasks' ids may come from older ones)
				[[ -n $fr || $l != *" ${prog##*/}-"[0-9]* ]] ||
					echo unknown >>"$TMPD/$L.f"
			fi
			# numbers and commas only: split without a here-string
			# (a temporary file per record under TCG)
			# shellcheck disable=SC2206
			a=(${fr//,/ })
			[ ${#a[@]} -ge 2 ] || continue
			[ "${paths[${a[0]}]}" = "$prog" ] || continue
			fl=${l#* flags=}; fl=${fl%% *}
			ir=${l#* id_reason=}; ir=${ir%% *}
			offs=()
			for ((i = 0; 2 * i + 1 < ${#a[@]}; i++)); do
				[ "${paths[${a[$((2 * i))]}]}" = "$prog" ] || break
				off=$((a[2 * i + 1] & 0xffffffffffffff))
				((i > 0)) && off=$((off - 1))
				printf -v off '0x%x' $((off + bias))
				offs+=("$off")
			done
			echo "$((${#a[@]} / 2)) $fl $ir ${offs[*]}" >>"$TMPD/$L.f"
			;;
		esac
	done <"$TMPD/$L.u"
}

# resolve TRACE PROG LABEL: every user_stack whose frame 0 is in PROG
# names ustack_sys|ustack_touch, ustack_f6 .. ustack_f1, main
resolve() {
	local trace=$1 prog=$2 L=$3 l nr n=0 bad=0 unknown=0 want got
	local -a offs
	user_frames "$trace" "$prog" "$L"
	while read -r nr _ _ l; do
		if [ "$nr" = unknown ]; then
			unknown=$((unknown + 1))
			continue
		fi
		[ "$nr" -ge 8 ] || continue
		# shellcheck disable=SC2206 # addresses: one per word
		offs=($l)
		offs=("${offs[@]:0:8}")
		n=$((n + 1))
		if [ ${#offs[@]} -ne 8 ]; then
			# signal mode: rt_sigreturn restores an interrupted
			# context before the walk, which may be anywhere in
			# the chain (e.g. in ustack_f6: 7 program frames,
			# then libc). Judged below with addr2line: its
			# program frames must be a suffix of the chain.
			if [ "$L" = signal ]; then
				echo "${offs[*]}" >>"$TMPD/$L.ioffs"
				continue
			fi
			bad=$((bad + 1))
			[ $bad -le 3 ] && diag "$L: frames outside $prog: ${offs[*]}"
			continue
		fi
		echo "${offs[*]}" >>"$TMPD/$L.offs"
	done <"$TMPD/$L.f"
	check "$L: user stacks of the program found ($n)" [ "$n" -gt 0 ]
	check_eq "$L: every id-only user_stack follows its id's inline record" "$unknown" 0
	check_eq "$L: all 8 innermost frames in the program" "$bad" 0
	if [ -s "$TMPD/$L.ioffs" ]; then
		# interrupted contexts: caller frames (1..) name the chain's
		# outer part in order: ... ustack_f1 main
		local ibad=0 ni=0 tail
		sort -u "$TMPD/$L.ioffs" >"$TMPD/$L.iuoffs"
		names "$prog" "$TMPD/$L.iuoffs" "$TMPD/$L.inames"
		while IFS= read -r got; do
			ni=$((ni + 1))
			# the callers: frame 0 left out
			if [[ $got == *" "* ]]; then got=${got#* }; else got=; fi
			tail='ustack_f6 ustack_f5 ustack_f4 ustack_f3 ustack_f2 ustack_f1 main'
			case " $tail" in
			" $tail" | *" $got") ;;
			*) ibad=$((ibad + 1)); diag "$L: interrupted stack callers '$got'" ;;
			esac
		done <"$TMPD/$L.inames"
		check_eq "$L: $ni interrupted-context stacks (after rt_sigreturn): callers are the chain's tail" "$ibad" 0
	fi
	[ -s "$TMPD/$L.offs" ] || return
	# one addr2line per distinct stack
	sort -u "$TMPD/$L.offs" >"$TMPD/$L.uoffs"
	names "$prog" "$TMPD/$L.uoffs" "$TMPD/$L.names"
	want='ustack_f6 ustack_f5 ustack_f4 ustack_f3 ustack_f2 ustack_f1 main'
	while IFS= read -r got; do
		case $got in
		# threads: the chain starts in thread_fn instead of main
		"ustack_sys $want" | "ustack_touch $want" | \
			"ustack_sys ${want% main} thread_fn" | \
			"ustack_touch ${want% main} thread_fn") ok "$L: chain $got" ;;
		# signal: an interrupted context restored by rt_sigreturn can
		# also be inside ustack_nop (8 frames end at ustack_f1), or at
		# its first instruction, where the walker skips the caller
		# (documented limit: ustack_sys/ustack_touch is missing)
		"ustack_nop ustack_sys ${want% main}" | \
			"ustack_nop ustack_touch ${want% main}" | \
			"ustack_nop $want")
			if [ "$L" = signal ]; then
				ok "$L: chain (interrupted) $got"
			else
				nok "$L: chain: got '$got'"
			fi
			;;
		*) nok "$L: chain: got '$got', want 'ustack_sys|ustack_touch $want'" ;;
		esac
	done <"$TMPD/$L.names"
}

# resolve_prefix TRACE PROG LABEL: GCC -mthumb code, where r7 points at the
# locals below the frame record: the walk stops early (Documentation/
# ustack.rst "AArch32"). Every user_stack of PROG whose frame 0 is
# ustack_sys or ustack_touch must be flagged aarch32 and unreliable
# (0x1|0x80), reach at least ustack_f6, and name a prefix of the known chain
# (nothing wrong, possibly incomplete).
resolve_prefix() {
	local trace=$1 prog=$2 L=$3 fl ir l got n=0 bad=0 flagbad=0
	local want='ustack_f6 ustack_f5 ustack_f4 ustack_f3 ustack_f2 ustack_f1 main'
	user_frames "$trace" "$prog" "$L"
	sed -n 's/^[0-9][0-9]* //p' "$TMPD/$L.f" >"$TMPD/$L.offs"
	sort -u "$TMPD/$L.offs" >"$TMPD/$L.uoffs"
	cut -d' ' -f3- "$TMPD/$L.uoffs" >"$TMPD/$L.poffs"
	names "$prog" "$TMPD/$L.poffs" "$TMPD/$L.names"
	while read -r fl ir _ && IFS= read -r got <&3; do
		case $got in
		ustack_sys* | ustack_touch*) ;;
		*) continue ;;
		esac
		n=$((n + 1))
		[ $((fl & 0x81)) = $((0x81)) ] || { flagbad=$((flagbad + 1)); diag "$L: flags $fl: $got"; }
		case "${got#* } " in
		"$want "*) ok "$L: chain (complete) $got" ;;
		ustack_f6\ *)
			if [[ "$want " == "${got#* } "* ]]; then
				ok "$L: chain (a prefix, flags $fl, id_reason $ir) $got"
			else
				nok "$L: chain: got '$got', not a prefix of 'ustack_sys|ustack_touch $want'"
			fi
			;;
		*) bad=$((bad + 1)); nok "$L: chain: got '$got', want at least 'ustack_sys|ustack_touch ustack_f6'" ;;
		esac
	done <"$TMPD/$L.uoffs" 3<"$TMPD/$L.names"
	check "$L: user stacks of the program from ustack_sys/ustack_touch found ($n)" [ "$n" -gt 0 ]
	check_eq "$L: each flagged aarch32|unreliable (0x81)" "$flagbad" 0
}

# flags_all TRACE PROG MASK LABEL: every user_stack record that carries a
# walk (reason 0) starting in PROG has the flag bits MASK (e.g. 0x1: a
# compat stack, aarch32 or ia32). By frame 0's file, not by comm: the trace
# prints the comm a pid has when it is read, so the syscalls of the shell
# child before it exec'd PROG show PROG's name too (64-bit stacks, no 0x1).
flags_all() {
	local l fl id f n=0 bad=0
	local -A ids
	while IFS= read -r l; do
		case $l in
		*" file_map: "*)
			f=${l#* path=}; f=${f%% build_id=*}
			id=${l#* file_id=}; id=${id%% *}
			[ "$f" = "$2" ] && ids[$id]=1
			;;
		*" user_stack: "*" reason=0 "*" frames={"[0-9a-fx]*)
			f=${l#* frames=\{}; f=${f%%,*}
			[ -n "${ids[$f]:-}" ] || continue
			n=$((n + 1))
			fl=${l#* flags=}; fl=${fl%% *}
			[ $((fl & $3)) = $(($3)) ] && continue
			bad=$((bad + 1))
			[ $bad -le 3 ] && diag "$4: flags $fl: ${l:0:300}"
			;;
		esac
	done <"$1"
	check "$4: user_stack records starting in ${2##*/} ($n) all have flags $3" [ "$n" -gt 0 -a "$bad" = 0 ]
}

tracing_clean
build
check "load" load
setup
run_prog() {
	local bin=$1 L=$2
	shift 2
	echo >"$U/trace"
	sources 1
	echo 1 >"$U/tracing_on"
	# bounded: a livelock fails this check instead of hanging the guest
	check "$L: run $*" timeout 300 "$bin" "$@"
	echo 0 >"$U/tracing_on"
	sources 0
	cp "$U/trace" "$TMPD/$L.trace"
	cp "$U/stack_map_stat" "$TMPD/$L.stat"
	diag "$L: user_entries $(stat_get "$TMPD/$L.stat" user_entries) user_arena_used $(stat_get "$TMPD/$L.stat" user_arena_used)/$(stat_get "$TMPD/$L.stat" user_arena_size) user_fallbacks $(stat_get "$TMPD/$L.stat" user_fallbacks) user_drops_arena_full $(stat_get "$TMPD/$L.stat" user_drops_arena_full)"
	${RESOLVE:-resolve} "$TMPD/$L.trace" "$bin" "$L"
}
# cookies_announced LABEL TRACE: every user_stack cookie of chain64 was
# announced by a stack_id record: before it in the same CPU's buffer, or in
# another CPU's (a task that moved between its kernel entry and its return
# to user space; the merged order of two CPUs' records is only as good as
# their clocks, so not checked there). Cookie 0 is a definition written
# again (FSM_USF_REDEF), answering no request. One ok / not ok line; a
# failure names the first record out of line and says why.
cookies_announced() {
	local -A at before
	local l bad=0 first='' why='' w
	# where each cookie was announced: its CPU
	while IFS= read -r l; do
		cookie_of "$l"
		[ -n "$CK" ] && at[$CK]=$CKCPU
	done < <(grep -E ' (stack_id_user|stack_fallback): .*cookie=' "$2")
	while IFS= read -r l; do
		cookie_of "$l"
		[ -n "$CK" ] || continue
		case $l in
		*" stack_id_user: "* | *" stack_fallback: "*) before[$CK]=1 ;;
		*chain64-*" user_stack: "*)
			if [ -z "${at[$CK]}" ]; then
				w="never announced"
			elif [ "${at[$CK]}" = "$CKCPU" ] && [ -z "${before[$CK]}" ]; then
				w="announced later on the same CPU"
			else
				continue
			fi
			bad=$((bad + 1))
			[ -n "$first" ] || { first=$l; why=$w; }
			;;
		esac
	done <"$2"
	if [ $bad = 0 ]; then
		ok "${1}user_stack cookies match stack_id cookies"
	else
		nok "${1}user_stack cookies match stack_id cookies: $bad out of line, first ($why): ${first:0:300}"
	fi
}
run_prog "$TMPD/chain64" c64 20
s=$TMPD/c64.stat
while IFS= read -r l; do case $l in user*) diag "$l" ;; esac; done <"$s"
q=$(stat_get "$s" user_walks_queued)
r=$(stat_get "$s" user_requests)
# one request per kernel entry here (a syscall or a fault each; entries are
# never merged, even with equal registers): at most one walk per request.
# Reuse within an entry (several instances asking) is ustack_stress's.
check "walks queued ($q) <= requests ($r), and some ($q > 0)" [ "$q" -le "$r" -a "$q" -gt 0 ]
# the id record with a cookie: stack_id_user (record format 2)
check "cookies in stack_id_user records" eval 'grep -Eq "stack_id_user: .*cookie=0x[1-9a-f]" $TMPD/c64.trace'
cookies_announced "" "$TMPD/c64.trace"

# A task that moves: each CPU's buffer gets its own definition of a user
# stack id, so on the CPU the program moved to, the first use of an id
# defined on the other one is followed by a definition-only user_stack
# (cookie 0, FSM_USF_REDEF 0x100) in the program's own context. The
# cookie check skips those (it did not, and failed once in CI when the
# program moved during the c64 run), and checks a cookie against its own
# CPU's buffer only.
run_prog "$TMPD/chain64" moved 20 move
n=$(grep ' chain64-[0-9]* .* user_stack: ' "$TMPD/moved.trace" | grep -o '\[[0-9]*\]' | sort -u | wc -l)
check "moved: chain64's user_stack records on CPUs 0 and 1 ($n CPUs)" [ "$n" = 2 ]
n=0
while IFS= read -r l; do
	fl=${l#* flags=}; fl=${fl%% *}
	[ $((fl & 0x100)) = 0 ] || n=$((n + 1))
done < <(grep -E ' chain64-[0-9]* .* user_stack: cookie=0x0 ' "$TMPD/moved.trace")
check "moved: definitions written again (REDEF, cookie 0) in chain64's context ($n)" [ "$n" -gt 0 ]
cookies_announced "moved: " "$TMPD/moved.trace"
if [ -x "$TMPD/chain32" ]; then
	run_prog "$TMPD/chain32" c32 20
	flags_all "$TMPD/c32.trace" "$TMPD/chain32" 0x1 c32
fi
if [ -x "$TMPD/chain-pac" ]; then
	# AArch64 with pointer authentication: the walker strips the PACs
	# (the exact chain, as for chain64). Active only if the CPU has it
	# (HWCAP_PACA; scripts/vm-run: -cpu max) and a saved return address
	# really differs from its stripped value. The PAC field is narrow in
	# the guest (signed return addresses seen differ in bits 52-54
	# only), so about one in eight carries a PAC of 0: each run has new
	# keys (exec), up to 8 runs for one that shows a signature.
	for _ in 1 2 3 4 5 6 7 8; do
		pac=$("$TMPD/chain-pac" 1 pac)
		diag "chain-pac: $pac"
		raw=${pac#* raw=}; raw=${raw%% *}
		stripped=${pac#* stripped=}
		[ "$raw" = "$stripped" ] || break
	done
	if [[ $pac != "pac: paca=1 "* ]]; then
		echo "ok $((_n + 1)) - pac: pointer authentication # SKIP the guest's CPU has no pointer authentication (HWCAP_PACA clear): $pac"
		_n=$((_n + 1))
	else
		check "pac: a saved return address is signed (raw $raw != stripped $stripped)" \
			[ "$raw" != "$stripped" -a "$stripped" != "" ]
		run_prog "$TMPD/chain-pac" pac 20
	fi
fi
if [ -x "$TMPD/chain-arm" ]; then
	# A32 (GCC -marm): the exact chain, as on x86
	run_prog "$TMPD/chain-arm" a32 20
	flags_all "$TMPD/a32.trace" "$TMPD/chain-arm" 0x1 a32
fi
if [ -x "$TMPD/chain-thumb" ]; then
	# Thumb (GCC -mthumb): a flagged prefix of the chain
	RESOLVE=resolve_prefix run_prog "$TMPD/chain-thumb" t32 20
	# 0x1 only: static glibc's assembly routines in it are A32 code, and
	# a walk that starts there is not flagged unreliable (seen: a fault
	# in one, flags 0x11); resolve_prefix wants 0x81 from our Thumb code
	flags_all "$TMPD/t32.trace" "$TMPD/chain-thumb" 0x1 t32
fi
run_prog "$TMPD/chain64" fork 10 fork
run_prog "$TMPD/chain64" thread 10 thread
run_prog "$TMPD/chain64" signal 50 signal
run_prog "$TMPD/chain64" exec 5 exec "$TMPD/chain64" 5

# rmmod with walks pending: processes running while the option is on.
# Queued task works hold module references, so rmmod either succeeds or
# fails with "in use" while works are queued (e.g. our own shell's walk),
# and never hangs (module exit cannot cancel a task work).
echo >"$U/trace"
sources 1
for i in 1 2 3 4; do "$TMPD/chain64" 200 thread & done
nap 0.2
out=$(timeout 60 rmmod ftrace_stackmap 2>&1)
rc=$?
if [ $rc = 124 ]; then
	nok "rmmod with the option on and walks pending: hung"
elif [ $rc = 0 ] || grep -q 'in use' <<<"$out"; then
	ok "rmmod with the option on and walks pending: rc=$rc, no hang"
else
	nok "rmmod with the option on and walks pending: rc=$rc: $out"
fi
# Works queued before the option went off are released as their tasks
# return to user space; the test programs (blocked in pthread_join/wait
# with a queued walk) do so when they finish. So does run.sh's sed, which
# reads this script's output: it may sit in read() with a walk it asked
# for while the option was on, until this script prints its next line.
echo 0 >"$U/options/stackmap_user" 2>/dev/null
rmdir "$U" 2>/dev/null
wait
diag "workload ended, option off: every task with a queued walk returns to user space"
nap 0.5
# shellcheck disable=SC2317 # called through check
unload_retry() {
	local i
	for i in $(seq 1 20); do
		rmmod ftrace_stackmap 2>/dev/null && return 0
		diag "rmmod: refcount $(cat /sys/module/ftrace_stackmap/refcnt 2>/dev/null)"
		nap 0.5
	done
	return 1
}
if grep -q '^ftrace_stackmap ' /proc/modules; then
	check "rmmod after the option is off and the workload ended" unload_retry
fi
check "load again" load
check "rmmod again" unload
finish
