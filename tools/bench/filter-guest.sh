#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# filter-guest.sh MODULE.ko - issue 9's two side-by-side benchmarks, in one
# boot, on the source event raw_syscalls:sys_enter driven by
# tools/bench/syscall_loop.c (raw getppid()/getpid() calls):
#
#  1. A filter that keeps about 10% of the events ("id == __NR_getpid",
#     one call in ten is getpid()). The kernel's options/stacktrace writes
#     a kernel_stack record after each kept record only; ours must write
#     stack ids for kept records only too. Bytes as the ring buffer holds
#     them (selftests/guest/rbraw.py).
#       filtered_kept_events          source records kept by the filter
#       filtered_stackid_per_kept     stack_id records per kept source
#                                     record (1.00 when filters are honoured)
#       filtered_ringbuf_bytes_ratio  bytes of source + kernel_stack records
#                                     (options/stacktrace) / bytes of source
#                                     + our records
#  2. The cost of a traced event, no filter: the mean wall time of one
#     system call with the event off, on, on with options/stacktrace, and
#     on with stack ids (options/stackmap), each measured ROUNDS times
#     ($FSM_BENCH_ROUNDS, 9), interleaved (odd rounds in reverse order),
#     median taken.
#       ns_per_event_{off,event,stacktrace,stackmap}
#       probe_overhead_ratio  median over the rounds of the round's
#                             ns_per_event_stackmap / ns_per_event_stacktrace
#                             (the issue's figure; target <= 1), with _min,
#                             _q1, _q3, _max: the spread of the rounds
#       ratio_of_medians      median stackmap / median stacktrace
#       stack_cost_ratio      (stackmap - event) / (stacktrace - event): the
#                             added cost of the stack alone
# Ratios only: under TCG absolute times mean little. Run as root on the
# kernel the module was built for.
set -euo pipefail

ko=${1:?usage: filter-guest.sh MODULE.ko}
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
here=$(cd "$(dirname "$0")" && pwd)
rbraw=$here/../../selftests/guest/rbraw.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -o "$tmp/loop" "$here/syscall_loop.c"
E=$T/events/raw_syscalls/sys_enter
calls=${FSM_BENCH_CALLS:-20000}
rounds=${FSM_BENCH_ROUNDS:-9}

reset_trace() {
	echo 0 > $T/tracing_on
	echo 0 > $T/events/enable
	echo 0 > $T/options/stacktrace
	echo 0 > $T/options/stackmap
	echo 0 > $E/filter
	echo > $T/trace
}

# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"	# tsum, type_ids

grep -q '^ftrace_stackmap ' /proc/modules || insmod "$ko"
echo raw_syscalls:sys_enter > $T/stack_map_events
src=$(<$E/id)
type_ids	# ks, sid, ours (lib.sh)

# 1. a filter that keeps about 10%
filtered() { # MODE
	reset_trace
	echo 16384 > $T/buffer_size_kb
	echo "id == $("$tmp/loop" --nr-getpid)" > $E/filter
	echo 1 > "$T/options/$1"
	echo 1 > $E/enable
	echo 1 > $T/tracing_on
	"$tmp/loop" "$calls" 10 > /dev/null
	echo 0 > $T/tracing_on
	/usr/bin/python3 "$rbraw" $T > "$tmp/$1"
	reset_trace
}
filtered stacktrace
filtered stackmap
awk -v sb="$(tsum "$tmp/stacktrace" "$src" bytes)" -v kb="$(tsum "$tmp/stacktrace" "$ks" bytes)" \
	-v ob="$(tsum "$tmp/stackmap" "$src" bytes)" -v mb="$(tsum "$tmp/stackmap" "$ours" bytes)" \
	-v on="$(tsum "$tmp/stackmap" "$src" count)" -v idn="$(tsum "$tmp/stackmap" "$sid" count)" 'BEGIN {
	printf "filtered_kept_events=%d\n", on
	printf "filtered_stackid_per_kept=%.2f\n", on ? idn / on : 0
	printf "filtered_ringbuf_bytes_ratio=%.2f\n", (sb + kb) / (ob + mb)
}'

# 2. time per traced event
timed() { # MODE: off event stacktrace stackmap
	reset_trace
	echo 1408 > $T/buffer_size_kb
	echo 1 > $T/options/overwrite
	case $1 in
	stacktrace | stackmap) echo 1 > "$T/options/$1" ;;
	esac
	[ "$1" = off ] || echo 1 > $E/enable
	echo 1 > $T/tracing_on
	"$tmp/loop" "$calls" | sed -n 's/^ns_per_call=//p' >> "$tmp/t.$1"
	reset_trace
}
# odd rounds in the reverse order: neither side always runs first
for ((r = 0; r < rounds; r++)); do
	if ((r % 2)); then order="stackmap stacktrace event off"; else order="off event stacktrace stackmap"; fi
	for m in $order; do timed "$m"; done
done
med() { sort -n "$tmp/t.$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# the ratio of each round (its two runs are neighbours in time), then the
# median and the spread of those ratios
paste "$tmp/t.stacktrace" "$tmp/t.stackmap" | awk '{ print $2 / $1 }' |
	sort -n > "$tmp/ratios"
awk -v o="$(med off)" -v e="$(med event)" -v s="$(med stacktrace)" -v m="$(med stackmap)" \
	-v n="$rounds" 'BEGIN {
	printf "ns_per_event_off=%.1f\nns_per_event_event=%.1f\n", o, e
	printf "ns_per_event_stacktrace=%.1f\nns_per_event_stackmap=%.1f\n", s, m
	printf "bench_rounds=%d\n", n
	printf "ratio_of_medians=%.2f\n", m / s
	if (s > e)
		printf "stack_cost_ratio=%.2f\n", (m - e) / (s - e)
}'
awk '{ a[NR] = $1 } END {
	printf "probe_overhead_ratio=%.2f\n", a[int((NR + 1) / 2)]
	printf "probe_overhead_ratio_min=%.2f\nprobe_overhead_ratio_max=%.2f\n", a[1], a[NR]
	printf "probe_overhead_ratio_q1=%.2f\nprobe_overhead_ratio_q3=%.2f\n", a[int((NR + 3) / 4)], a[int((3 * NR + 3) / 4)]
}' "$tmp/ratios"
echo > $T/stack_map_events
rmmod ftrace_stackmap
