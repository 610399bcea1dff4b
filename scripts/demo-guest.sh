#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# demo-guest.sh MODULE.ko - the demo steps, run as root on the kernel the
# module was built for (inside the QEMU guest, or on a real machine).
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

# User stacks: a test program with a known call chain (main -> ustack_f1 ..
# ustack_f6 -> ustack_sys, frame pointers on) issues raw syscalls; its user
# stack, recorded once per kernel entry, is shown from stack_map as
# path+offset frames and resolved to function names with addr2line.
src=$(cd "$(dirname "$0")/.." && pwd)/selftests/guest/ustack/chain.c
prog=/tmp/fsm-demo-chain
if [ -e $T/options/stackmap_user ] && command -v gcc >/dev/null &&
	command -v addr2line >/dev/null; then
	U=$T/instances/demo
	run "gcc -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread -o $prog $src"
	run mkdir $U
	for _ in $(seq 50); do [ -e $U/options/stackmap_user ] && break; sleep 0.1; done
	run "echo raw_syscalls:sys_enter > $U/stack_map_events"
	run "echo 1 > $U/events/raw_syscalls/sys_enter/enable"
	run "echo 1 > $U/options/stackmap"
	run "echo 1 > $U/options/stackmap_user"
	run "$prog $((20 * scale))"
	run "echo 0 > $U/options/stackmap_user"
	run "echo 0 > $U/options/stackmap"
	echo 0 > $U/events/raw_syscalls/sys_enter/enable
	run "grep -m 4 -E '^ *fsm-demo-chain-[0-9]+ .* (stack_id_user|user_stack): ' $U/trace | cut -c1-200"
	run "grep -m 2 -E ' file_map: .*fsm-demo-chain' $U/trace | cut -c1-200"
	# the first user stack whose innermost frame is in the program
	awk -v p="$prog+" '
		/^ustack_id / { if (done) exit; hdr = $0; n = 0; keep = 0; next }
		/^  \[[0-9]+\] / && hdr != "" {
			if ($1 == "[0]" && index($2, p) == 1) keep = 1
			if (keep) { if (!n++) print hdr; print }
			else hdr = ""
			next
		}
		{ if (keep) done = 1 }
	' $U/stack_map >/tmp/fsm-demo-ustack || true
	say "head -n 30 $U/stack_map  # (the chain's user stack, each frame + addr2line)"
	while IFS= read -r l; do
		case $l in
		ustack_id*) echo "$l" ;;
		*+0x*)
			f=${l##* }
			printf '%-48s %s\n' "$l" "$(addr2line -f -e "${f%+0x*}" "0x${f##*+0x}" 2>/dev/null | sed -n 1p)"
			;;
		*) echo "$l" ;;
		esac
	done </tmp/fsm-demo-ustack
	run "grep -E '^user_' $U/stack_map_stat || true"
	rmdir $U
fi

run rmmod ftrace_stackmap
run "lsmod | grep -c '^ftrace_stackmap' || true"
echo
echo "demo: done"
