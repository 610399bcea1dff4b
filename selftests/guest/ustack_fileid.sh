#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack_fileid.sh MODULE.ko - file identities of user stack frames
# (src/kernel/fileid.c, Documentation/ustack.rst "File identities"):
#
#  1. file_table_bits is validated like bits (out of range or not a number:
#     -EINVAL and one dmesg line) and sizes the table;
#  2. one id per file, not per process: 20 processes of one binary give one
#     stack_map file line, and fewer file table refills than processes;
#  3. damaged build-id notes (mutated copies made by elfmut.py) give no
#     build-id or the right one, never other bytes;
#  5. (run before 4) a file whose name holds a newline and a stack line,
#     run by nobody: stack_map prints its path escaped, as the trace does;
#  4. a file whose FUSE server stops answering (ustack/hangfs.c): a traced
#     program that runs code from it, other traced tasks, cat stack_map and
#     rmmod all finish within bounded time; its build-id is "-" while its
#     first page is not cached and appears once the page was read.
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

CFLAGS=(-O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread)
U=$T/instances/ufid
P=$TMPD/chain64
MNT=$TMPD/mnt
NPROC=20

# bid_of ELF: its build-id as readelf prints it ("-": none)
bid_of() {
	local l out
	out=$(readelf -n "$1" 2>/dev/null)
	while IFS= read -r l; do
		case $l in *"Build ID: "*) echo "${l##*Build ID: }" && return ;; esac
	done <<<"$out"
	echo -
}
# map_files MAPCOPY PATH: "ID BID" of every file line of PATH
# (awk: the copy holds every stack line too, and a bash loop over them
# took a minute of the debug guest)
map_files() {
	awk -v p="$2" '$1 == "file" {
		id = $2; bid = $3
		sub(/^file [^ ]+ [^ ]+ /, "")
		if ($0 == p) print id, bid
	}' "$1"
}
# finished PID SECONDS: PID ended within SECONDS (polls; never blocks)
finished() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		nap 0.2
	done
	return 1
}
# readline FD SECONDS: one line from FD within SECONDS into $line
readline() { line=; read -r -t "$2" -u "$1" line; }
# source 0|1: the source event of $U off or on. On only while traced
# programs run: sources attached as tracepoint probes (Debian's arm64
# kernel) do not honour tracing_on, and with it on every syscall of the
# checks (bash's read, gcc) took a kernel stack (most of the suite's time
# in the arm64 guest, Documentation/testing.rst).
source_on() { echo "$1" >"$U/events/raw_syscalls/sys_enter/enable"; }

tracing_clean

# ---- 1. the parameter ----
for v in 5 15 x; do
	kmsg_mark
	check_fail "file_table_bits=$v refused" load "file_table_bits=$v"
	check_eq "file_table_bits=$v: one line of ours in dmesg" "$(kmsg_since | count_ours)" 1
done
check "load file_table_bits=7" load file_table_bits=7
check_eq "file_table_bits reads 7" "$(</sys/module/ftrace_stackmap/parameters/file_table_bits)" 7
check_eq "stack_map_stat: file_table_slots 128" "$(stat_get "$T/stack_map_stat" file_table_slots)" 128
unload

# ---- 2. and 3. one id per file; damaged notes ----
check "gcc chain64" gcc "${CFLAGS[@]}" -o "$P" "$HERE/ustack/chain.c"
mapfile -t muts < <($PY -S "$HERE/elfmut.py" "$P" "$TMPD/m_")
check_eq "elfmut.py made 6 copies" "${#muts[@]}" 6
pbid=$(bid_of "$P")
check "chain64 has a build-id ($pbid)" eval '[ "$pbid" != - ]'
check "load" load
mkdir "$U"
echo 'raw_syscalls:sys_enter' >"$U/stack_map_events"
echo 8192 >"$U/buffer_size_kb"
echo 1 >"$U/events/raw_syscalls/sys_enter/enable"
echo 1 >"$U/options/stackmap"
echo 1 >"$U/options/stackmap_user"
r0=$(stat_get "$U/stack_map_stat" file_map_refills)
pids=()
for ((i = 0; i < NPROC; i++)); do
	"$P" 3 &
	pids+=($!)
done
wait "${pids[@]}"
r1=$(stat_get "$U/stack_map_stat" file_map_refills)
for m in "${muts[@]}"; do "$TMPD/m_$m" 3; done
echo 0 >"$U/options/stackmap_user"
source_on 0
cp "$U/stack_map" "$TMPD/map1"
cp "$U/stack_map_stat" "$TMPD/stat1"
mapfile -t ids < <(map_files "$TMPD/map1" "$P")
check_eq "$NPROC processes of chain64: one file line" "${#ids[@]}" 1
check_eq "chain64's build-id" "${ids[0]#* }" "$pbid"
diag "file_map_refills ${r0:-?} -> ${r1:-?} for $NPROC processes"
check "file_map_refills grew, by less than $NPROC" eval \
	'[ -n "$r0" ] && [ -n "$r1" ] && [ $((r1 - r0)) -ge 1 ] && [ $((r1 - r0)) -lt $NPROC ]'
for m in "${muts[@]}"; do
	mapfile -t ids < <(map_files "$TMPD/map1" "$TMPD/m_$m")
	b=${ids[0]#* }
	check_eq "m_$m: one file line" "${#ids[@]}" 1
	check "m_$m: build-id '-' or chain64's (got '$b')" eval \
		'[ "$b" = - ] || [ "$b" = "$pbid" ]'
done
while IFS= read -r l; do case $l in file_*) diag "$l" ;; esac; done <"$TMPD/stat1"

# ---- 5. a file name that would forge stack_map lines ----
# Any user names the programs it runs: one whose name holds a newline and
# a stack line after it, run by nobody, must show in stack_map escaped
# (%pE, as the trace prints it), its text never at the start of a line.
FORGED='stack_id 77777 [gen 0, index 77777, hits 9, depth 1]'
ED=$(mktemp -d /tmp/fsm-name.XXXXXX)
chmod 755 "$ED"
EVIL=$ED/x$'\n'$FORGED
cp "$P" "$EVIL" && chmod 755 "$EVIL"
source_on 1
echo 1 >"$U/options/stackmap_user"
check "nobody runs a program named 'x\\n$FORGED'" \
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$EVIL" 3
echo 0 >"$U/options/stackmap_user"
source_on 0
cp "$U/stack_map" "$TMPD/map5"
check_eq "stack_map: no line starts with the forged text" \
	"$(grep -c "^${FORGED%% *} 77777 " "$TMPD/map5")" 0
check "stack_map: its file line, escaped" \
	grep -qF "$ED/x\\n$FORGED" "$TMPD/map5"
check "stack_map: its frames, escaped (path+0xoffset)" \
	grep -qE "^  \[[0-9]+\] $ED/x\\\\n${FORGED%%[*}\\[gen 0, index 77777, hits 9, depth 1\\]\+0x" "$TMPD/map5"
rm -rf "$ED"

# ---- 4. a FUSE file whose server stops answering ----
F=$TMPD/fusefn.so
check "gcc fusefn.so" gcc -O1 -fPIC -shared -nostdlib -Wl,--build-id=sha1 \
	-Wl,-z,separate-code -o "$F" "$HERE/ustack/fusefn.c"
check "gcc fusecall" gcc -O1 -o "$TMPD/fusecall" "$HERE/ustack/fusecall.c"
# shellcheck disable=SC2046 # pkg-config prints several words
check "gcc hangfs (libfuse3)" gcc -O1 -o "$TMPD/hangfs" "$HERE/ustack/hangfs.c" \
	$(pkg-config --cflags --libs fuse3)
fbid=$(bid_of "$F")
fn=
while read -r _ v _ _ _ _ _ name; do
	[ "$name" = fsm_fuse_fn ] && fn=$v
done < <(readelf -sW "$F")
check "fsm_fuse_fn at ${fn:-?}, build-id $fbid" eval '[ -n "$fn" ] && [ "$fbid" != - ]'
[ -e /dev/fuse ] || modprobe fuse 2>/dev/null
check "/dev/fuse exists" test -c /dev/fuse
mkdir -p "$MNT"
"$TMPD/hangfs" "$F" "$MNT" -f -s &
srv=$!
check "hangfs mounted" wait_for "$MNT/lib.so" 30
L=$MNT/lib.so

coproc FC { exec "$TMPD/fusecall" "$L" "$fn"; }
fcpid=$FC_PID
readline "${FC[0]}" 60
check_eq "fusecall runs code from the FUSE file" "$line" ready
kill -USR1 "$srv"	# from now on the server answers nothing
nap 0.5
echo >"$U/trace"
source_on 1
echo 1 >"$U/options/stackmap_user"
echo "call 5" >&"${FC[1]}"
readline "${FC[0]}" 60
check_eq "traced calls from the hung FUSE file return (walk done)" "$line" "done"
"$P" 5 &
other=$!
check "another traced task finishes" finished $other 30
cat "$U/stack_map" >"$TMPD/map2" &
rd=$!
check "cat stack_map finishes" finished $rd 30
stat_get "$U/stack_map_stat" file_bid_uncached >"$TMPD/unc" &
rd=$!
check "cat stack_map_stat finishes" finished $rd 30
mapfile -t ids < <(map_files "$TMPD/map2" "$L")
check_eq "lib.so: one file line while the server hangs" "${#ids[@]}" 1
check_eq "lib.so: no build-id while its first page is not cached" "${ids[0]#* }" -
check "file_bid_uncached > 0 ($(<"$TMPD/unc"))" eval '[ "$(<"$TMPD/unc")" -gt 0 ]'

kill -USR2 "$srv"	# answers again
echo read >&"${FC[1]}"
readline "${FC[0]}" 60
check_eq "fusecall read the first page" "$line" "done"
echo >"$U/trace"	# the file_map record with the build-id comes next
echo "call 5" >&"${FC[1]}"
readline "${FC[0]}" 60
check_eq "traced calls again" "$line" "done"
# stop first: parsing with bash's read is thousands of traced syscalls
echo 0 >"$U/options/stackmap_user"
echo 0 >"$U/tracing_on"
source_on 0
check "copy the trace" timeout 300 cp "$U/trace" "$TMPD/trace3"
cp "$U/stack_map" "$TMPD/map3"
mapfile -t ids < <(map_files "$TMPD/map3" "$L")
check_eq "lib.so: the build-id once the page is cached" "${ids[0]#* }" "$fbid"
diag "trace: $(wc -l <"$TMPD/trace3") lines, $(wc -c <"$TMPD/trace3") bytes; busiest tasks and events:"
awk '$1 !~ /^#/ { t[$1]++; e[$5]++ } END { for (k in t) print t[k], k; for (k in e) print e[k], k }' \
	"$TMPD/trace3" | sort -rn | head -8 | while IFS= read -r l; do diag "  $l"; done
fm=no
while IFS= read -r l; do
	diag "  ${l##* file_map: }"
	case $l in
	*" path=$L build_id="*)
		b=${l##* build_id=}
		[ "${b// /}" = "$fbid" ] && fm=yes
		;;
	esac
done < <(grep -F ' file_map: ' "$TMPD/trace3")
check_eq "a file_map record of lib.so with its build-id" "$fm" yes

# hang again, then unload with the server killed
kill -USR1 "$srv"
echo 0 >"$U/options/stackmap_user"
echo 0 >"$U/options/stackmap"
eval "exec ${FC[1]}>&-"
finished "$fcpid" 30
kill -9 "$srv"
wait "$srv" 2>/dev/null
umount -l "$MNT" 2>/dev/null
rmdir "$U"
unload &
rd=$!
check "rmmod finishes" finished $rd 30
wait $rd
check "module unloaded" eval '! is_loaded'
finish
