#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ringbuf-guest.sh MODULE.ko [EVENT] - ring-buffer cost of kernel stacks:
# the core's options/stacktrace (a kernel_stack record after every event)
# against ftrace_stackmap (a stack_id record, frames only on first use),
# side by side in one boot, same source event, same workload, same buffer.
# Run as root on the kernel the module was built for. Prints name=value:
#   ringbuf_bytes_ratio     ring-buffer bytes per source event (source event
#                           included), stacktrace / stack ids (large
#                           buffer, no overrun)
#   stack_bytes_ratio       the same for the stack records alone (a third
#                           run without stacks gives the source event's bytes)
#   events_retained_ratio   source events still in a small overwriting buffer
#                           after a long workload, stack ids / stacktrace
#   mean_depth              mean kernel stack depth (weighted by hits)
set -euo pipefail

ko=${1:?usage: ringbuf-guest.sh MODULE.ko [sys:event]}
event=${2:-sched:sched_switch}
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
sys=${event%%:*} ev=${event#*:}

workload() { # $1 = rounds: pipe ping-pong (context switches, syscalls)
	local i
	for ((i = 0; i < $1; i++)); do
		head -c 65536 /dev/zero | cat > /dev/null
	done
}

# stat_sum FIELD: sum of FIELD over per_cpu/cpu*/stats
stat_sum() {
	cat $T/per_cpu/cpu*/stats | awk -v f="$1:" '$1 == f {s += $2} END {print s + 0}'
}

reset_trace() {
	echo 0 > $T/tracing_on
	echo 0 > $T/events/enable
	echo 0 > $T/options/stacktrace
	[ -e $T/options/stackmap ] && echo 0 > $T/options/stackmap
	echo > $T/trace
}

# run MODE KB ROUNDS OVERWRITE -> "bytes entries overrun"
run() {
	local mode=$1 kb=$2 rounds=$3
	reset_trace
	echo "$kb" > $T/buffer_size_kb
	echo "$4" > $T/options/overwrite
	echo 1 > "$T/events/$sys/$ev/enable"
	case $mode in
	stacktrace) echo 1 > $T/options/stacktrace ;;
	stackmap) echo 1 > $T/options/stackmap ;;
	esac
	echo 1 > $T/tracing_on
	workload "$rounds"
	echo 0 > $T/tracing_on
	echo "$(stat_sum bytes) $(stat_sum entries) $(stat_sum overrun)"
	reset_trace
}

grep -q '^ftrace_stackmap ' /proc/modules || insmod "$ko" bits=14
echo "$event" > $T/stack_map_events

# 1. bytes per source event, large buffer, no overwrite (every record kept)
rounds=${FSM_BENCH_ROUNDS:-20}
read -r p_bytes p_entries p_over < <(run plain 16384 "$rounds" 1)
read -r a_bytes a_entries a_over < <(run stacktrace 16384 "$rounds" 1)
read -r b_bytes b_entries b_over < <(run stackmap 16384 "$rounds" 1)
# each source event is followed by exactly one stack record in both modes
awk -v pb="$p_bytes" -v pe="$p_entries" -v ab="$a_bytes" -v ae="$a_entries" \
	-v bb="$b_bytes" -v be="$b_entries" -v o="$((p_over + a_over + b_over))" 'BEGIN {
	p = pb / pe; a = ab / (ae / 2); b = bb / (be / 2)
	printf "source_bytes_per_event=%.1f\n", p
	printf "stacktrace_bytes_per_event=%.1f\n", a
	printf "stackmap_bytes_per_event=%.1f\n", b
	printf "ringbuf_bytes_ratio=%.2f\n", a / b
	printf "stack_bytes_ratio=%.2f\n", (a - p) / (b - p)
	if (o > 0) printf "warning=overrun during the bytes run (%d)\n", o
}'

depth=$(awk '/^stack_id/ { gsub(/[\[\],]/, ""); h = $4; d = $6; s += h * d; n += h }
	END { if (n) printf "%.1f", s / n; else print 0 }' $T/stack_map)
echo "event=$event"
echo "mean_depth=$depth"

# 2. events retained in a small overwriting buffer after a long workload
read -r a_bytes a_entries a_over < <(run stacktrace 256 $((rounds * 4)) 1)
read -r b_bytes b_entries b_over < <(run stackmap 256 $((rounds * 4)) 1)
awk -v ae="$a_entries" -v be="$b_entries" -v ao="$a_over" -v bo="$b_over" 'BEGIN {
	printf "stacktrace_events_retained=%d\n", ae / 2
	printf "stackmap_events_retained=%d\n", be / 2
	printf "events_retained_ratio=%.2f\n", (be / 2) / (ae / 2)
	if (ao == 0 || bo == 0) printf "warning=small buffer did not overflow (%d, %d): run longer\n", ao, bo
}'
echo 1408 > $T/buffer_size_kb
rmmod ftrace_stackmap
