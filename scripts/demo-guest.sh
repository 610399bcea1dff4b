#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# demo-guest.sh MODULE.ko - the demo steps, run as root on the kernel the
# module was built for (inside the QEMU guest, or on a real machine).
set -euo pipefail

ko=${1:?usage: demo-guest.sh MODULE.ko}
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; eval "$@"; }

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
	say "workload: for i in \$(seq 200); do sleep 0.001; done; ls -R /usr/lib > /dev/null"
	for _ in $(seq 200); do sleep 0.001; done
	ls -R /usr/lib > /dev/null 2>&1 || true
	echo 0 > $T/tracing_on
	run "grep -m 6 -E 'sched_switch|stack_id' $T/trace"
	run "head -n 30 $T/stack_map"
	run cat $T/stack_map_stat
	run "echo 0 > $T/options/stackmap"
	echo 0 > $T/events/enable
	echo 1 > $T/tracing_on
	echo > $T/trace
fi

run rmmod ftrace_stackmap
run "lsmod | grep -c '^ftrace_stackmap' || true"
