#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ringbuf-guest.sh MODULE.ko [EVENT] - ring-buffer cost of kernel stacks:
# the core's options/stacktrace (a kernel_stack record after every event)
# against ftrace_stackmap (a 16-byte stack_id record, the stack once per id
# in a stack_def record), side by side in one boot, same source event, same
# workload. Bytes are those the ring buffer holds, parsed from the
# per_cpu/cpu*/trace_pipe_raw pages (selftests/guest/rbraw.py): event
# headers included, time extends and page padding left out. Run as root on
# the kernel the module was built for. Prints name=value:
#   source_bytes_per_event  E: ring-buffer bytes of one source record
#   kernel_stack_bytes      K: mean bytes of a kernel_stack record
#   stackid_record_bytes    bytes of one stack_id record (record format 2)
#   stackmap_bytes_per_event  our bytes per source event: id records plus
#                           stack_def records, over source events
#   ringbuf_bytes_ratio     (E + K) / (E + stackmap_bytes_per_event), large
#                           buffer, no overrun
#   events_retained_limit   (E + K) / (E + 16): what a 16-byte record allows
#   events_retained_ratio   source events still in a small overwriting
#                           buffer after a long workload, stack ids /
#                           stacktrace (measured; compare with the limit)
#   mean_depth              mean kernel stack depth (weighted by hits)
set -euo pipefail

ko=${1:?usage: ringbuf-guest.sh MODULE.ko [sys:event]}
event=${2:-sched:sched_switch}
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
sys=${event%%:*} ev=${event#*:}
rbraw=$(cd "$(dirname "$0")/../../selftests/guest" && pwd)/rbraw.py
tmp=$(mktemp -d)

workload() { # $1 = rounds: pipe ping-pong (context switches, syscalls)
	local i
	for ((i = 0; i < $1; i++)); do
		head -c 65536 /dev/zero | cat > /dev/null
	done
}

reset_trace() {
	echo 0 > $T/tracing_on
	echo 0 > $T/events/enable
	echo 0 > $T/options/stacktrace
	[ -e $T/options/stackmap ] && echo 0 > $T/options/stackmap
	echo > $T/trace
}

# run MODE KB ROUNDS: the rbraw.py lines of one recording in $tmp/MODE.KB
run() {
	local mode=$1 kb=$2 rounds=$3
	reset_trace
	echo "$kb" > $T/buffer_size_kb
	echo 1 > $T/options/overwrite
	case $mode in
	stacktrace) echo 1 > $T/options/stacktrace ;;
	stackmap) echo 1 > $T/options/stackmap ;;
	esac
	echo 1 > "$T/events/$sys/$ev/enable"
	echo 1 > $T/tracing_on
	workload "$rounds"
	echo 0 > $T/tracing_on
	/usr/bin/python3 "$rbraw" $T > "$tmp/$mode.$kb"
	reset_trace
}

# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"	# tsum

grep -q '^ftrace_stackmap ' /proc/modules || insmod "$ko" bits=14
echo "$event" > $T/stack_map_events
src=$(<"$T/events/$sys/$ev/id")
type_ids	# ks, sid, ours (lib.sh)

# 1. bytes per source event, large buffer (every record kept)
rounds=${FSM_BENCH_ROUNDS:-20}
run stacktrace 16384 "$rounds"
run stackmap 16384 "$rounds"
awk -v eb="$(tsum $tmp/stackmap.16384 "$src" bytes)" -v en="$(tsum $tmp/stackmap.16384 "$src" count)" \
	-v kb="$(tsum $tmp/stacktrace.16384 "$ks" bytes)" -v kn="$(tsum $tmp/stacktrace.16384 "$ks" count)" \
	-v ib="$(tsum $tmp/stackmap.16384 "$sid" bytes)" -v icount="$(tsum $tmp/stackmap.16384 "$sid" count)" \
	-v ob="$(tsum $tmp/stackmap.16384 "$ours" bytes)" 'BEGIN {
	e = eb / en; k = kb / kn; s = ob / en
	printf "source_bytes_per_event=%.1f\n", e
	printf "kernel_stack_bytes=%.1f\n", k
	printf "stackid_record_bytes=%.1f\n", ib / icount
	printf "stackmap_bytes_per_event=%.1f\n", s
	printf "ringbuf_bytes_ratio=%.2f\n", (e + k) / (e + s)
	printf "events_retained_limit=%.2f\n", (e + k) / (e + 16)
}'

depth=$(awk '/^stack_id/ { gsub(/[\[\],]/, ""); h = $4; d = $6; s += h * d; n += h }
	END { if (n) printf "%.1f", s / n; else print 0 }' $T/stack_map)
echo "event=$event"
echo "mean_depth=$depth"

# 2. events retained in a small overwriting buffer after a long workload
run stacktrace 256 $((rounds * 4))
run stackmap 256 $((rounds * 4))
awk -v a="$(tsum $tmp/stacktrace.256 "$src" count)" -v b="$(tsum $tmp/stackmap.256 "$src" count)" 'BEGIN {
	printf "stacktrace_events_retained=%d\n", a
	printf "stackmap_events_retained=%d\n", b
	printf "events_retained_ratio=%.2f\n", b / a
}'
rm -rf "$tmp"
echo 1408 > $T/buffer_size_kb
rmmod ftrace_stackmap
