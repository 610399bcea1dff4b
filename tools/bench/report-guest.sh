#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# report-guest.sh MODULE.ko [MB] - records, in the guest, the trace.dat
# that tools/bench/report.sh times on the host: `trace-cmd record -e
# stackmap -e raw_syscalls:sys_enter -e sched:sched_switch` (the top level,
# kernel and user stacks of raw_syscalls:sys_enter) around
# tools/bench/syscall_loop, sized from two short recordings to at least
# MB MiB (default 110; at most 2 million calls). Writes it to the run directory shared with the
# host (/run/fsm/report-bench.dat, scripts/vm-run with FSM_VM_KEEP=1) and
# prints name=value: trace_mb, record_s, copy_s. Then 20 recordings of the
# same loop whose sizes add up to about the big one's (the traces of many
# machines: stackmap-report -i DIR), in /run/fsm/multi/NN.dat: multi_mb.
set -euo pipefail

ko=${1:?usage: report-guest.sh MODULE.ko [MB]}
mb=${2:-110}
T=/sys/kernel/tracing
out=/run/fsm
[ -d "$out" ] || { echo "report-guest.sh: no $out (run it through scripts/vm-run)" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)

gcc -O2 -Wall -o "$tmp/loop" "$here/syscall_loop.c"
insmod "$ko" bits=14
echo 'raw_syscalls:sys_enter' >$T/stack_map_events
echo 1 >$T/options/stackmap_user

# rec N FILE: one recording of N calls. The ring buffer (128 MiB per CPU)
# holds the whole recording: under TCG trace-cmd's recorder drains it far
# slower than the loop fills it, and a smaller buffer loses most events.
# Uncompressed: libtracecmd 3.1.6 reads a compressed file in quadratic time
# (Documentation/stackmap-report.rst, "Limits"), trace-cmd report as well.
rec() {
	trace-cmd record -q -b 131072 --compression none -o "$2" \
		-e stackmap -e raw_syscalls:sys_enter \
		-e sched:sched_switch "$tmp/loop" "$1" >"$tmp/rec.out" 2>&1
}
# bytes per call: the difference of two short recordings (the fixed part,
# kallsyms and formats, cancels), then a tenth more calls than the size asks
n0=20000
rec $n0 "$tmp/a.dat"
rec $((2 * n0)) "$tmp/b.dat"
a=$(stat -c %s "$tmp/a.dat") b=$(stat -c %s "$tmp/b.dat")
rm -f "$tmp/a.dat" "$tmp/b.dat"
per=$(((b - a) / n0))
[ $per -ge 16 ] || { echo "report-guest.sh: $per bytes per call: events lost?" >&2; exit 1; }
n=$(((mb * 1048576 - a) / per * 11 / 10))
[ $n -le 2000000 ] || n=2000000
echo "# $per bytes per call: recording $n calls" >&2
t0=$EPOCHREALTIME
rec "$n" "$tmp/big.dat"
t1=$EPOCHREALTIME
echo "# recorded $(stat -c %s "$tmp/big.dat") bytes" >&2
cp "$tmp/big.dat" "$out/report-bench.dat"
t2=$EPOCHREALTIME
# 20 traces of about a twentieth of the size each: the fixed part (a's
# size less its calls) is in each of them
big=$(stat -c %s "$out/report-bench.dat")
fixed=$((a - n0 * per))
[ $fixed -ge 0 ] || fixed=0
m=$(((big / 20 - fixed) / per))
[ $m -ge 1000 ] || m=1000
echo "# 20 recordings of $m calls" >&2
mkdir -p "$out/multi"
for i in $(seq -w 1 20); do
	rec "$m" "$tmp/m.dat"
	cp "$tmp/m.dat" "$out/multi/$i.dat"
done
echo 0 >$T/options/stackmap_user
echo >$T/stack_map_events
rmmod ftrace_stackmap
sz=$(stat -c %s "$out/report-bench.dat")
awk -v s="$sz" -v a="$t0" -v b="$t1" -v c="$t2" -v n="$n" 'BEGIN {
	printf "calls=%d\n", n
	printf "trace_mb=%.1f\n", s / 1048576
	printf "record_s=%.1f\n", b - a
	printf "copy_s=%.1f\n", c - b
}'
echo "multi_mb=$(du -cb "$out"/multi/*.dat | awk 'END { printf "%.1f", $1 / 1048576 }')"
rm -rf "$tmp"
