#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools_report.sh MODULE.ko - stackmap-report (build/tools, `make tools`)
# on a recording made here with one trace-cmd run: the top level and a -B
# instance (not on the debug kernel, for time), both with user stacks of
# the chain programs (selftests/guest/ustack/chain.c, 64-bit and -m32),
# then stack_map_bin snapshots. Checks, each against a count or lookup
# made without the tool:
#  - every id record (stack_id, stack_id_user, stack_fallback) counted by
#    `trace-cmd report` is counted once in `folded` and in `stats`;
#    filters --comm/--instance/--event agree with counts of the same lines
#  - kernel frames of `report --addr` equal /proc/kallsyms lookups
#  - the chain programs' user stacks resolve to main, ustack_f1..f6,
#    ustack_sys (libdwfl, DWARF of the -g builds)
#  - a program whose path now names another file is found by build-id
#    (--debug-dir), the other file is not used
#  - --map of the same boot is accepted, one of another instance or
#    generation, or with another boot's reference address, is refused;
#    `dump` agrees with fsmb.py
#  - truncated or corrupted inputs and a trace without stackmap events
#    give an error (exit 1), never a crash
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SR=$HERE/../../build/tools/stackmap-report
CFLAGS=(-g -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread)
CHAIN='main;ustack_f1;ustack_f2;ustack_f3;ustack_f4;ustack_f5;ustack_f6;ustack_sys;'
N=20
DEBUG=0
case ${FSM_VM_KERNEL:-} in debug | *-debug) DEBUG=1 ;; esac

if ! command -v trace-cmd >/dev/null; then
	echo "ok 1 - # SKIP trace-cmd not installed"
	echo "1..1"
	exit 0
fi
check "stackmap-report built (make tools)" test -x "$SR"
check "stackmap-report --help" eval '"$SR" --help | grep -q "folded"'
for c in report dump; do
	check "stackmap-report $c --help" eval '"$SR" $c --help | grep -q "usage: stackmap-report $c"'
done
check_eq "unknown command: exit 2" "$("$SR" nosuch 2>/dev/null; echo $?)" 2

diag "help: ${SECONDS} s"
cd "$TMPD" || exit 1
check "gcc 64-bit chain" gcc "${CFLAGS[@]}" -o chain64 "$HERE/ustack/chain.c"
check "gcc -m32 chain" "$HERE/../../scripts/m32-cc" "${CFLAGS[@]}" -o chain32 "$HERE/ustack/chain.c"
check "insmod" load bits=12 events=sched:sched_switch

# idrecs FILE [PATTERN]: id records in `trace-cmd report` output
idrecs() {
	local n
	n=$(grep -cE "${2:-}.* (stack_id|stack_id_user|stack_fallback): " "$1")
	echo "${n:-0}"
}
# fsum FILE: the sum of the counts of a folded file
fsum() {
	local l s=0
	while IFS= read -r l; do s=$((s + ${l##* })); done <"$1"
	echo $s
}
# record NAME [-B INST] -- CMD...: trace-cmd record, report, the tool
EV=(-e stackmap -e sched:sched_switch -e raw_syscalls:sys_enter)
record() {
	local n=$1
	shift
	trace-cmd record -q -b 2048 -o "$n.dat" "$@" >"$n.rec" 2>&1
	check "$n: trace-cmd record" test -s "$n.dat"
	trace-cmd report -i "$n.dat" >"$n.txt" 2>/dev/null
	check "$n: trace-cmd report" test -s "$n.txt"
	"$SR" folded -i "$n.dat" >"$n.folded" 2>"$n.ferr"
	check_eq "$n: folded exit status" $? 0
	"$SR" stats -i "$n.dat" --top 0 >"$n.stats" 2>"$n.serr"
	check_eq "$n: stats exit status" $? 0
	"$SR" report -i "$n.dat" --addr >"$n.report" 2>"$n.rerr"
	check_eq "$n: report exit status" $? 0
	local total
	total=$(idrecs "$n.txt")
	diag "$n: $total id records (trace-cmd report)"
	check "$n: id records found" [ "$total" -gt 0 ]
	check_eq "$n: folded total = id records of trace-cmd report" "$(fsum "$n.folded")" "$total"
	check_eq "$n: stats records = id records" "$(stat_get "$n.stats" records)" "$total"
	local l s=0
	while IFS= read -r l; do
		l=${l%% records*}
		s=$((s + ${l##* }))
	done < <(grep '^event ' "$n.stats")
	check_eq "$n: per-event totals of stats add up" "$s" "$total"
	check_eq "$n: report: one source line per id record" \
		"$(grep -cvE '^ (=>|<)' "$n.report")" "$total"
	check_eq "$n: no unresolved kernel stack (self-contained)" "$(stat_get "$n.stats" unresolved)" 0
	check "$n: kernel frames marked _[k]" grep -qE '_\[k\] [0-9]+$' "$n.folded"
}

diag "gcc, insmod: ${SECONDS} s"
T0=$SECONDS
# One recording, two buffers: the top level (sys_enter, sched_switch) and a
# -B instance made here (sys_enter), both with user stacks; trace-cmd
# removes the instance at the end.
echo 'raw_syscalls:sys_enter sched:sched_switch' >"$T/stack_map_events"
echo 1 >"$T/options/stackmap_user"
B=()
if [ $DEBUG = 0 ]; then
	mkdir "$T/instances/tcb"
	echo 'raw_syscalls:sys_enter' >"$T/instances/tcb/stack_map_events"
	echo 1 >"$T/instances/tcb/options/stackmap_user"
	B=(-B tcb -e stackmap -e raw_syscalls:sys_enter)
fi
record top "${EV[@]}" "${B[@]}" bash -c "$TMPD/chain64 $N; $TMPD/chain32 $N"
cat "$T/stack_map_bin" >top.fsmb
echo reset >"$T/stack_map"
cat "$T/stack_map_bin" >gen2.fsmb
echo 0 >"$T/options/stackmap_user"
echo >"$T/stack_map_events"
[ -d "$T/instances/tcb" ] && rmdir "$T/instances/tcb"
check "top: chain64's user stack resolves to the chain" grep -q "^chain64;.*$CHAIN" top.folded
check "top: chain32's (-m32) user stack resolves to the chain" grep -q "^chain32;.*$CHAIN" top.folded
check_eq "top: --comm chain64 = chain64's id records" \
	"$("$SR" folded -i top.dat --comm chain64 2>/dev/null >c.f; fsum c.f)" \
	"$(idrecs top.txt '^(tcb: )? *chain64-[0-9]+ ')"
a=$(grep '^event sched:sched_switch: ' top.stats)
a=${a%% records*}
check_eq "top: --event sched_switch = its stats line" \
	"$("$SR" folded -i top.dat --event sched_switch 2>/dev/null >a.f; fsum a.f)" "${a##* }"
check "top: report shows user frames with source lines" \
	grep -q "=> ustack_sys (.*chain.c:[0-9]*) \[$TMPD/chain64+0x" top.report
if [ $DEBUG = 0 ]; then
	check_eq "-B: --instance tcb = the instance's id records" \
		"$("$SR" folded -i top.dat --instance tcb 2>/dev/null >i.f; fsum i.f)" "$(idrecs top.txt '^tcb: ')"
	check "-B: instance records found" [ "$(fsum i.f)" -gt 0 ]
	check "-B: chain64's syscall chain in the instance" \
		eval '"$SR" folded -i top.dat --instance tcb --comm chain64 2>/dev/null | grep -q "^chain64;.*$CHAIN"'
fi
diag "record: $((SECONDS - T0)) s"

# user files found by build-id (--debug-dir), not by a path that now
# names another file (its build-id differs: not used)
if [ $DEBUG = 0 ]; then
	bid=$(readelf -n chain64 | grep -o 'Build ID: [0-9a-f]*')
	bid=${bid#Build ID: }
	mkdir -p "dbg/.build-id/${bid:0:2}"
	mv chain64 "dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	cp chain32 chain64
	check "a file with another build-id at the recorded path is not used" \
		eval '! "$SR" folded -i top.dat 2>/dev/null | grep -q "^chain64;.*$CHAIN"'
	check "--debug-dir: the program found by its build-id" \
		eval '"$SR" folded -i top.dat --debug-dir "$TMPD/dbg" 2>/dev/null | grep -q "^chain64;.*$CHAIN"'
fi
diag "build-id: $((SECONDS - T0)) s"

# snapshots
check "--map of the same boot, instance and generation accepted" \
	eval '"$SR" stats -i top.dat --map top.fsmb >m.stats 2>m.err'
check_eq "--map: records unchanged" "$(stat_get m.stats records)" "$(stat_get top.stats records)"
# the refusals and the text dump do not depend on the kernel: stock only
if [ $DEBUG = 0 ]; then
	cp top.fsmb boot.fsmb
	printf '\x01' | dd of=boot.fsmb bs=1 seek=33 conv=notrunc status=none	# ref_symbol_addr
	check_fail "--map of a later generation (after a reset) refused" \
		eval '"$SR" stats -i top.dat --map gen2.fsmb 2>gen2.err >/dev/null'
	check "  ... saying why" grep -q "refused: its generation 2" gen2.err
	cp top.fsmb inst.fsmb
	printf 'nosuch\0' | dd of=inst.fsmb bs=1 seek=40 conv=notrunc status=none	# instance
	check_fail "--map of an instance without a buffer in the trace refused" \
		eval '"$SR" stats -i top.dat --map inst.fsmb 2>inst.err >/dev/null'
	check "  ... saying why" grep -q "instance 'nosuch', which has no buffer" inst.err
	check_fail "--map with another boot's reference address refused" \
		eval '"$SR" stats -i top.dat --map boot.fsmb 2>boot.err >/dev/null'
	check "  ... saying so" grep -q "another boot" boot.err
	head -c 200 top.fsmb >trunc.fsmb
	check_fail "dump of a truncated snapshot: error" eval '"$SR" dump trunc.fsmb 2>trunc.err'
	check "  ... saying so" grep -q "trunc.fsmb: FSMB" trunc.err
	check "dump (same boot: /proc/kallsyms)" eval '"$SR" dump top.fsmb >dump.txt'
	check "dump: kernel frames symbolized" grep -Eq '^  \[[0-9]+\] __schedule\+0x' dump.txt
fi
check "dump --json" eval '"$SR" dump --json top.fsmb >dump.json'

diag "snapshots: $((SECONDS - T0)) s"

# Several inputs: a second trace after the module is loaded again, so its
# ids (generation 1, index 0, 1, ...) collide with the first trace's while
# they name other stacks. Each trace is resolved on its own: folded of
# both = the two folded outputs added.
check "several inputs: rmmod" unload
check "several inputs: insmod again" load bits=12 events=sched:sched_switch
# sched_switch from many places (the first trace's kernel stacks are
# mostly sched_switch's too): many ids, some in the first trace's slots
trace-cmd record -q -b 2048 -o two.dat -e stackmap -e sched:sched_switch \
	bash -c 'ls -lR /usr/lib/modules >/dev/null 2>&1 &
		 for i in 1 2 3; do sleep 0.0$i; cat /proc/meminfo >/dev/null; done; wait' \
	>two.rec 2>&1
check "two: trace-cmd record" test -s two.dat
"$SR" folded -i two.dat >two.folded 2>/dev/null
# defs ID IPS per trace: the ids both define, with other ips in the second
trace-cmd report -i top.dat 2>/dev/null | grep -o 'stack_def: .*' |
	sed -E 's/.*stack_id=([0-9]+) .* ips=/\1 /' | sort -u >top.defs
trace-cmd report -i two.dat 2>/dev/null | grep -o 'stack_def: .*' |
	sed -E 's/.*stack_id=([0-9]+) .* ips=/\1 /' | sort -u >two.defs
coll=$(join -o 0 <(cut -d' ' -f1 top.defs | sort -u) <(cut -d' ' -f1 two.defs | sort -u) | wc -l)
differ=$(awk 'NR == FNR { d[$1] = $0; next } ($1 in d) && d[$1] != $0' top.defs two.defs | wc -l)
diag "several inputs: $(wc -l <top.defs) and $(wc -l <two.defs) ids defined; $coll in both traces, $differ of them with other ips"
check "two traces whose ids collide with other stacks" [ "$differ" -gt 0 ]
addf() {
	awk '{ n = $NF; c[substr($0, 1, length($0) - length(n) - 1)] += n }
	     END { for (k in c) print k, c[k] }' "$@" | LC_ALL=C sort
}
# top.dat again: the build-id checks above changed what its user files resolve to
"$SR" folded -i top.dat >top2.folded 2>/dev/null
"$SR" folded -i top.dat -i two.dat 2>/dev/null | LC_ALL=C sort >both.folded
addf top2.folded two.folded >sum.folded
check_eq "folded -i A -i B = folded A + folded B (each resolved on its own)" \
	"$(md5sum <both.folded)" "$(md5sum <sum.folded)"
diff both.folded sum.folded >both.diff
head -4 both.diff | while IFS= read -r l; do diag "${l:0:200}"; done
mkdir multi && ln -s ../top.dat ../two.dat multi/
check_eq "folded -i DIR = folded -i A -i B" \
	"$("$SR" folded -i multi 2>/dev/null | LC_ALL=C sort | md5sum)" "$(md5sum <both.folded)"
check "folded --by-host: every stack starts with the host (uname -n)" \
	eval '! "$SR" folded --by-host -i top.dat -i two.dat 2>/dev/null | grep -qv "^$(uname -n);"'
check_eq "folded --by-host: the same counts" \
	"$("$SR" folded --by-host -i top.dat -i two.dat 2>/dev/null | fsum /dev/stdin)" "$(fsum both.folded)"
"$SR" stats -i top.dat -i two.dat --top 0 >both.stats 2>/dev/null
check_eq "stats of both: records add up" "$(stat_get both.stats records)" \
	"$(($(fsum top.folded) + $(fsum two.folded)))"
check_eq "report of both: one '# host' heading per input" \
	"$("$SR" report -i top.dat -i two.dat 2>/dev/null | grep -c '^# host ')" 2
"$SR" flamegraph -i top.dat -i two.dat -o both.svg 2>/dev/null
check "flamegraph of both: total = the records" \
	grep -q "data-total=\"$(fsum both.folded)\"" both.svg
diag "several inputs: $((SECONDS - T0)) s"

# bad input
head -c $(($(size top.dat) / 2)) top.dat >half.dat
check_fail "truncated trace.dat: error" eval '"$SR" folded -i half.dat 2>half.err >/dev/null'
check "  ... with a message" grep -q "half.dat" half.err
crash=0
seeds=(1 2)
[ $DEBUG = 1 ] && seeds=(1)
for seed in "${seeds[@]}"; do
	cp top.dat flip.dat
	sz=$(size flip.dat)
	for k in 1 2 3 4 5 6 7 8; do
		printf '\xff' | dd of=flip.dat bs=1 seek=$(((seed * 7919 * k * 104729) % sz)) conv=notrunc status=none
	done
	"$SR" folded -i flip.dat >/dev/null 2>&1
	rc=$?
	[ $rc -le 1 ] || { crash=$((crash + 1)); diag "flipped trace (seed $seed): exit $rc"; }
done
check_eq "corrupted trace.dat files: exit 0 or 1, never a crash" $crash 0
trace-cmd record -q -o none.dat -e sched:sched_switch bash -c 'read -r -t 0.1 <> <(:)' >/dev/null 2>&1
check_fail "trace without stackmap events: error" eval '"$SR" folded -i none.dat 2>none.err'
check "  ... saying so" grep -q "no stackmap events" none.err

diag "all but the python checks: $((SECONDS - T0)) s"
# the python checks, once
checks=(ksyms top.kallsyms top.report -- json top.json dump.json top.fsmb)
py_checks report_check.py "${checks[@]}"
diag "python: $((SECONDS - T0)) s"
cd / || exit 1
check "rmmod" unload
finish
