#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack-guest.sh MODULE.ko - user stacks: the core's options/userstacktrace
# (a user stack record after every event, walked in the probe) against
# ftrace_stackmap's deferred user stacks (a cookie in the stack_id_user record,
# one stackmap:user_stack per kernel entry, file_map records), same source
# events, same workload (selftests/guest/ustack/stress.c burst: raw
# openat/read/close from a known call chain, many events per syscall),
# same buffer, one boot. Run as root on the kernel the module was built
# for. Prints name=value:
#   events_per_entry          stack_id requests per kernel entry that asked
#                             (user_requests / user_walks_queued)
#   unwinds_per_entry         user-stack walks / kernel entries that asked
#                             (distinct cookies in the trace) and could be
#                             walked (not exiting or exec'ed in between,
#                             entries_aborted): 1.00 expected
#   ustack_bytes_ratio        ring-buffer bytes, userstacktrace / ours
#                             (source events included)
#   ustack_stack_bytes_ratio  the same for the stack records alone (a run
#                             without stacks gives the source events' bytes)
#   file_map_refills_per_1k_walks  file table descriptions (path + build-id,
#                             stack_map_stat file_map_refills) per 1000 user
#                             stack walks, while FSM_BENCH_PROCS (64) separate
#                             processes (exec'ed, 8 at a time) run the burst
set -euo pipefail

ko=${1:?usage: ustack-guest.sh MODULE.ko}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../selftests/guest/ustack/stress.c
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
events='raw_syscalls:sys_enter raw_syscalls:sys_exit kmem:kmalloc kmem:kfree'
rounds=${FSM_BENCH_ROUNDS:-30}
tmp=$(mktemp -d /tmp/ustack-bench.XXXXXX)
st=$tmp/stress
gcc -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
	-pthread -o "$st" "$src"

# stat_sum FIELD: sum of FIELD over per_cpu/cpu*/stats
stat_sum() {
	cat $T/per_cpu/cpu*/stats | awk -v f="$1:" '$1 == f {s += $2} END {print s + 0}'
}
# mstat KEY: a value of stack_map_stat
mstat() { awk -v k="$1:" '$1 == k {print $2}' $T/stack_map_stat; }
# aborted: walks not done (empty user_stack records by abort reason)
aborted() {
	awk '$1 ~ /^user_stacks_reason_(exiting|exec|no_mm|segments):$/ {s += $2}
		END {print s + 0}' $T/stack_map_stat
}

reset_trace() {
	echo 0 > $T/tracing_on
	[ -e $T/options/stackmap_user ] && echo 0 > $T/options/stackmap_user
	[ -e $T/options/stackmap ] && echo 0 > $T/options/stackmap
	echo 0 > $T/options/userstacktrace
	echo 0 > $T/events/enable
	echo > $T/trace
}

# run MODE -> "bytes entries overrun". The option goes on after tracing
# and off before it, so that every request has its stack_id in the trace.
run() {
	local e
	reset_trace
	echo 16384 > $T/buffer_size_kb
	for e in $events; do
		echo 1 > "$T/events/${e%%:*}/${e#*:}/enable"
	done
	[ "$1" = stackmap ] && echo 1 > $T/options/stackmap
	echo 1 > $T/tracing_on
	case $1 in
	userstacktrace) echo 1 > $T/options/userstacktrace ;;
	stackmap) echo 1 > $T/options/stackmap_user ;;
	esac
	"$st" burst "$rounds"
	case $1 in
	userstacktrace) echo 0 > $T/options/userstacktrace ;;
	stackmap) echo 0 > $T/options/stackmap_user ;;
	esac
	echo 0 > $T/tracing_on
	echo "$(stat_sum bytes) $(stat_sum entries) $(stat_sum overrun)"
}

grep -q '^ftrace_stackmap ' /proc/modules || insmod "$ko" bits=14
echo "$events" > $T/stack_map_events

read -r p_bytes _ p_over < <(run plain)
read -r a_bytes _ a_over < <(run userstacktrace)
w0=$(mstat user_walks_all_instances)
r0=$(mstat user_requests)
q0=$(mstat user_walks_queued)
x0=$(aborted)
read -r b_bytes _ b_over < <(run stackmap)
x1=$(aborted)
w1=$(mstat user_walks_all_instances)
r1=$(mstat user_requests)
q1=$(mstat user_walks_queued)
cookies=$(grep -o -E ' (stack_id_user|stack_fallback): .* cookie=\{?0x[0-9a-f]+' $T/trace |
	grep -o -E '0x[0-9a-f]+$' | grep -v -x 0x0 | sort -u | wc -l)
nus=$(grep -c ' user_stack: ' $T/trace || true)
nfm=$(grep -c ' file_map: ' $T/trace || true)

# many processes: each exec maps the program, libc and ld.so anew
procs=${FSM_BENCH_PROCS:-64}
reset_trace
for e in $events; do
	echo 1 > "$T/events/${e%%:*}/${e#*:}/enable"
done
echo 1 > $T/options/stackmap
echo 1 > $T/tracing_on
echo 1 > $T/options/stackmap_user
fr0=$(mstat file_map_refills)
fw0=$(mstat user_walks_all_instances)
for ((i = 1; i <= procs; i++)); do
	"$st" burst 3 &
	[ $((i % 8)) -ne 0 ] || wait
done
wait
echo 0 > $T/options/stackmap_user
fr1=$(mstat file_map_refills)
fw1=$(mstat user_walks_all_instances)
reset_trace
awk -v pb="$p_bytes" -v ab="$a_bytes" -v bb="$b_bytes" \
	-v w="$((w1 - w0))" -v c="$cookies" -v r="$((r1 - r0))" -v q="$((q1 - q0))" -v x="$((x1 - x0))" \
	-v nus="$nus" -v nfm="$nfm" -v o="$((p_over + a_over + b_over))" \
	-v procs="$procs" -v fr="$((fr1 - fr0))" -v fw="$((fw1 - fw0))" 'BEGIN {
	printf "events=%s\n", "'"${events// /,}"'"
	printf "entries_with_requests=%d\n", c
	printf "entries_queued=%d\n", q
	printf "entries_aborted=%d\n", x
	printf "walks=%d\n", w
	printf "user_stack_records=%d\n", nus
	printf "file_map_records=%d\n", nfm
	printf "events_per_entry=%.2f\n", q ? r / q : 0
	printf "unwinds_per_entry=%.2f\n", (c > x) ? w / (c - x) : 0
	printf "source_bytes=%d\n", pb
	printf "userstacktrace_bytes=%d\n", ab
	printf "stackmap_user_bytes=%d\n", bb
	printf "ustack_bytes_ratio=%.2f\n", ab / bb
	printf "ustack_stack_bytes_ratio=%.2f\n", (ab - pb) / (bb - pb)
	printf "file_map_procs=%d\n", procs
	printf "file_map_walks=%d\n", fw
	printf "file_map_refills=%d\n", fr
	printf "file_map_refills_per_1k_walks=%.2f\n", fw ? 1000 * fr / fw : 0
	if (o > 0) printf "warning=overrun during the bytes runs (%d)\n", o
}'
echo 1408 > $T/buffer_size_kb
rmmod ftrace_stackmap
rm -rf "$tmp"
