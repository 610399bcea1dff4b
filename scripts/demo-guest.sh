#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# demo-guest.sh MODULE.ko - the demo steps, run as root on the kernel the
# module was built for (inside the QEMU guest, or on a real machine).
#
# The results go into FSM_DEMO_OUT, else FSM_VM_OUT (vm-run --out: copied
# to the host when the guest ends), else /tmp/fsm-demo: trace.dat (the
# trace-cmd recording), report.txt (stackmap-report report), out.folded,
# flame.svg (stackmap-report flamegraph),
# profile.pb.gz (pprof), stacks.fsmb (the stack_map_bin snapshot,
# stackmap-ctl save) and kallsyms (this boot's, to decode the snapshot
# elsewhere: stackmap-report dump --kallsyms).
set -euo pipefail

ko=${1:?usage: demo-guest.sh MODULE.ko}
# FSM_DEMO_SCALE multiplies the workloads (the size of the traces): 1 by
# default; the demo must end the same way whatever the size.
scale=${FSM_DEMO_SCALE:-1}
case $scale in
'' | *[!0-9]* | 0) echo "demo: FSM_DEMO_SCALE must be a positive integer" >&2; exit 2 ;;
esac
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; eval "$*"; }

run uname -r
run insmod "$ko" bits=12
run "lsmod | grep -E '^(Module|ftrace_stackmap)'"
run cat /sys/module/ftrace_stackmap/parameters/bits
run "dmesg | grep -i ftrace_stackmap | tail -5"

if [ -e $T/stack_map_events ]; then
	run "echo 'sched:sched_switch sched:sched_wakeup' > $T/stack_map_events"
	run cat $T/stack_map_events
	run "echo 1 > $T/options/stackmap"
	run "echo 1 > $T/events/sched/sched_switch/enable"
	run "echo 1 > $T/events/sched/sched_wakeup/enable"
	say "workload: for i in \$(seq $((200 * scale))); do sleep 0.001; done; ls -R /usr/lib > /dev/null"
	for _ in $(seq $((200 * scale))); do sleep 0.001; done
	ls -R /usr/lib > /dev/null 2>&1 || true
	echo 0 > $T/tracing_on
	run "grep -m 12 -E -A3 'sched_switch|stack_(id|def)' $T/trace"
	run "head -n 30 $T/stack_map"
	run cat $T/stack_map_stat
	run "echo 0 > $T/options/stackmap"
	echo 0 > $T/events/enable
	echo 1 > $T/tracing_on
	echo > $T/trace
fi

# User stacks, recorded with trace-cmd and read with the tools (make tools:
# build/tools/stackmap-ctl, stackmap-report): a test program with a known
# call chain (main -> ustack_f1 .. ustack_f6 -> ustack_sys, frame pointers
# on) issues raw syscalls; stackmap-report names its user frames through
# libdwfl and its kernel frames from the kallsyms trace-cmd saved, and
# writes a folded file ready for flamegraph.pl or speedscope.
repo=$(cd "$(dirname "$0")/.." && pwd)
src=$repo/selftests/guest/ustack/chain.c
prog=/tmp/fsm-demo-chain
SC=$repo/build/tools/stackmap-ctl
SR=$repo/build/tools/stackmap-report
out=${FSM_DEMO_OUT:-${FSM_VM_OUT:-/tmp/fsm-demo}}
mkdir -p "$out"
if [ -e $T/options/stackmap_user ] && command -v gcc >/dev/null &&
	command -v trace-cmd >/dev/null && [ -x "$SC" ] && [ -x "$SR" ]; then
	cd /tmp || exit 1
	run "gcc -g -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread -o $prog $src"
	run "$SC enable --user raw_syscalls:sys_enter sched:sched_switch"
	run "trace-cmd record -q -o $out/trace.dat -e stackmap -e raw_syscalls:sys_enter -e sched:sched_switch $prog $((20 * scale)) > /dev/null"
	run "$SC status | grep -E '^(stackmap-ctl|  (options|source|entries|hits|records|user_entries))'"
	# the map of the top instance as it is after the recording (it stays
	# until the module is unloaded or the map reset)
	run "$SC save $out/stacks.fsmb"
	# this boot's kernel symbols, to decode the snapshot elsewhere (dump
	# --kallsyms: /proc/kallsyms of another boot does not match it)
	cat /proc/kallsyms > "$out/kallsyms"
	run "$SR dump $out/stacks.fsmb | sed -n 1,8p | cut -c1-160"
	run "$SR report -i $out/trace.dat --comm fsm-demo-chain --event sys_enter > $out/report.txt"
	run "sed -n 1,24p $out/report.txt | cut -c1-160"
	run "$SR folded -i $out/trace.dat > $out/out.folded"
	run "wc -l < $out/out.folded; grep -m 2 '^fsm-demo-chain;.*;main;ustack_f1;.*ustack_sys;' $out/out.folded | cut -c1-240"
	run "$SR flamegraph -i $out/trace.dat --title 'make demo' -o $out/flame.svg"
	run "$SR pprof -i $out/trace.dat -o $out/profile.pb.gz"
	run "$SR stats -i $out/trace.dat --top 2 | sed -n 1,20p | cut -c1-160"
	run "$SC disable"
	echo > $T/stack_map_events
	echo 0 > $T/events/enable
	run "ls -l $out"
fi

run rmmod ftrace_stackmap
run "lsmod | grep -c '^ftrace_stackmap' || true"
echo
echo "demo: done"
