#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools_extract.sh MODULE.ko - stackmap-ctl extract, the flight recorder's
# read-out (Documentation/flight-recorder.rst), checked by reading the
# tracefs files directly:
#  - usage: extract without -o, -o with another command: exit 2; no
#    module, no such instance: exit 1
#  - instance fx (64 KiB per CPU, kernel and user stacks, three sources)
#    wrapped by prog/wrap_load.c; `extract -o fx1.dat`: exit 0, fx1.dat
#    and fx1.dat.fsmb written; the instance, its sources, its options, its
#    events, its map (same generation, no fewer entries) and tracing_on
#    are as before
#  - fx1.dat alone: trace-cmd report parses it, stackmap-report stats
#    resolves >= 99.9% of its id records (kernel, user, files); the
#    snapshot is accepted with --map
#  - more workload, a second extract: fx2.dat resolves on its own too (the
#    first read consumed the buffer and its definitions; extract tells the
#    module so)
#  - tracing_on 0 before extract stays 0; the top level extracts too
#  - the contrast: trace-cmd extract -B fx removes the instance
# shellcheck disable=SC2016,SC2317 # eval '...' expands later; functions run through check
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SC=$HERE/../../build/tools/stackmap-ctl
SR=$HERE/../../build/tools/stackmap-report
P=$TMPD/wrap_load
I=$T/instances/fx

check "stackmap-ctl and stackmap-report built (make tools)" test -x "$SC" -a -x "$SR"
check "--help names extract" eval '"$SC" --help | grep -q "extract -o FILE"'
check_eq "extract without -o: exit 2" "$("$SC" extract 2>/dev/null; echo $?)" 2
check_eq "-o with another command: exit 2" "$("$SC" status -o x 2>/dev/null; echo $?)" 2
check "gcc wrap_load.c" gcc -O1 -fno-omit-frame-pointer -o "$P" "$HERE/prog/wrap_load.c"
cd "$TMPD" || exit 1

is_loaded && unload
check_eq "module not loaded: exit 1" "$("$SC" extract -o n.dat 2>/dev/null; echo $?)" 1
check "insmod" load bits=14
check_eq "-B nosuch extract: exit 1" "$("$SC" -B nosuch extract -o n.dat 2>ni.err; echo $?)" 1
check "  ... no such instance" grep -q "no such instance 'nosuch'" ni.err

EV="kmem:kmem_cache_alloc sched:sched_switch raw_syscalls:sys_enter"
# shellcheck disable=SC2086 # the events are words
check "-B fx enable --user (three sources)" "$SC" -B fx enable --user $EV
echo 64 >"$I/buffer_size_kb"

# state: what must not change across an extract
state() {
	echo "events=$(<"$I/stack_map_events")"
	echo "stackmap=$(<"$I/options/stackmap") user=$(<"$I/options/stackmap_user")"
	echo "enabled=$(<"$I/events/kmem/kmem_cache_alloc/enable")$(<"$I/events/sched/sched_switch/enable")$(<"$I/events/raw_syscalls/sys_enter/enable")"
	echo "tracing_on=$(<"$I/tracing_on") buffer_size_kb=$(<"$I/buffer_size_kb")"
	echo "generation=$(stat_get "$I/stack_map_stat" generation)"
}

# resolved NAME: at most 0.1% of NAME.stats's records unresolved, each kind
resolved() {
	local rec k n
	rec=$(stat_get "$1.stats" records) || return 1
	[ "$rec" -gt 0 ] || return 1
	for k in unresolved user_unresolved file_unresolved; do
		n=$(stat_get "$1.stats" "$k") || return 1
		[ $((n * 1000)) -le "$rec" ] || return 1
	done
}

check "workload" eval '"$P" 3000 64 >wl1.out'
state >before1
entries=$(stat_get "$I/stack_map_stat" entries)
check "extract -o fx1.dat" eval '"$SC" -B fx extract -o fx1.dat >ex1.out 2>ex1.err'
while IFS= read -r l; do diag "$l"; done <ex1.out
check "  ... fx1.dat written" test -s fx1.dat
check "  ... its snapshot fx1.dat.fsmb beside it" test -s fx1.dat.fsmb
check "  ... says the instance and its map are in place" grep -q "in place" ex1.out
check "  ... no temporary file left" eval '! ls fx1.dat.*cpu* 2>/dev/null | grep -q .'
check "  ... the instance is there" test -d "$I"
state >after1
check_eq "  ... sources, options, events, tracing_on, generation unchanged" \
	"$(<after1)" "$(<before1)"
check "  ... the map kept its stacks" \
	test "$(stat_get "$I/stack_map_stat" entries)" -ge "$entries"

trace-cmd report -i fx1.dat >fx1.txt 2>fx1.terr
check "trace-cmd report reads fx1.dat" eval 'grep -q "stack_id_user: " fx1.txt'
check "  ... no [FAILED TO PARSE]" eval '! grep -q "FAILED TO PARSE" fx1.txt'
"$SR" stats -i fx1.dat --top 0 >fx1.stats 2>fx1.err
diag "fx1.dat: $(head -4 fx1.stats | tr '\n' ' ')"
check "stats of fx1.dat alone: >= 99.9% resolved" resolved fx1
check "  ... the snapshot is accepted (--map)" \
	eval '"$SR" stats -i fx1.dat --map fx1.dat.fsmb >fx1m.stats 2>fx1m.err'

check "more workload" eval '"$P" 3000 64 >wl2.out'
check "second extract -o fx2.dat" eval '"$SC" -B fx extract -o fx2.dat >ex2.out 2>ex2.err'
"$SR" stats -i fx2.dat --top 0 >fx2.stats 2>fx2.err
diag "fx2.dat: $(head -4 fx2.stats | tr '\n' ' ')"
check "stats of fx2.dat alone: >= 99.9% resolved" resolved fx2

echo 0 >"$I/tracing_on"
check "extract with tracing off" eval '"$SC" -B fx extract -o fx3.dat >ex3.out 2>ex3.err'
check_eq "  ... tracing_on stays 0" "$(<"$I/tracing_on")" 0
echo 1 >"$I/tracing_on"

check "extract the top level" eval '"$SC" extract -o top.dat >top.out 2>top.err'
check "  ... top.dat and top.dat.fsmb" test -s top.dat -a -s top.dat.fsmb

# The contrast that extract exists for (trace-cmd 3.1.6).
if command -v trace-cmd >/dev/null; then
	echo 0 >"$I/tracing_on"
	trace-cmd extract -B fx -o tc.dat >tc.out 2>&1
	check "trace-cmd extract -B fx removes the instance (and its map)" test ! -d "$I"
fi

finish
