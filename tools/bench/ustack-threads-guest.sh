#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack-threads-guest.sh NEW.ko BASE.ko - user stacks on a host with many
# threads (issue 21, 2), this module (NEW) and the one before the change
# (BASE: task slots held from a task's first request until it is freed),
# side by side in one boot. Workload: selftests/guest/ustack/threads.c
# (N early threads that each make one traced getppid and stay alive, asleep
# in a futex wait, then 100 late threads that each make one getppid),
# source raw_syscalls:sys_enter, the program's threads only. Prints
# name=value:
#   threads_delivered_{returned,asleep}_{1k,10k}[_base]
#       late threads whose getppid got its user stack / late threads, with
#       1,000 or 10,000 early threads alive that asked: "returned" (a filter
#       keeps getppid only: they asked, got their stacks, went back to user
#       space) or "asleep" (their futex wait asked too: each sleeps with a
#       request pending, holding a task slot)
#   threads_slots_used_asleep_{1k,10k}  task slots in use with them asleep
#   threads_early_start_s_{1k,10k}      seconds the early threads took to
#                                       start, ask and fall asleep
#   ns_per_request_100[_base], request_cost_ratio_100
#       the cost of one request and its walk with 100 early threads asleep:
#       a timed thread makes K getppid calls (FSM_BENCH_CALLS, 20000), each
#       its own kernel entry, with options/stackmap_user on, then another
#       with it off (stack ids only), in one program run: the difference
#       per call. FSM_BENCH_PAIRS (8) such pairs per run (the order
#       alternates; a first pair warms up and is not counted), one run per
#       module and round, FSM_BENCH_ROUNDS (3) rounds, the modules
#       interleaved; the median of all pairs, and the ratio NEW / BASE of
#       the medians (with the pairs' quartiles)
#   threads_walk_buffers_peak_asleep_{1k,10k}  walk buffers allocated at
#       once at most in that run (NEW)
#   user_slots_memory_bytes, user_walk_buffer_bytes
#       NEW's fixed memory and the size of one walk buffer (stack_map_stat)
# Ratios and fractions only: under TCG absolute times mean little. Run as
# root on the kernel both modules were built for.
set -euo pipefail

new=${1:?usage: ustack-threads-guest.sh NEW.ko BASE.ko}
base=${2:?usage: ustack-threads-guest.sh NEW.ko BASE.ko}
here=$(cd "$(dirname "$0")" && pwd)
sel=$here/../../selftests/guest
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
U=$T/instances/bthreads
tmp=$(mktemp -d /tmp/ustack-threads.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prog=$tmp/threads
gcc -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls \
	-pthread -o "$prog" "$sel/ustack/threads.c"
calls=${FSM_BENCH_CALLS:-20000}
rounds=${FSM_BENCH_ROUNDS:-3}
pairs=${FSM_BENCH_PAIRS:-8}
case $(uname -m) in
aarch64) nr=173 ;;
*) nr=110 ;;
esac

unload() { grep -q '^ftrace_stackmap ' /proc/modules && rmmod ftrace_stackmap || true; }
mstat() { awk -v k="$1:" '$1 == k {print $2}' "$U/stack_map_stat"; }

# run KO N L K MODE USER: one program run in a fresh instance; sets R_*
run() {
	local ko=$1 n=$2 l=$3 k=$4 mode=$5 user=$6 line pid t0 tpid
	unload
	insmod "$ko"
	mkdir "$U"
	echo raw_syscalls:sys_enter >"$U/stack_map_events"
	echo 8192 >"$U/buffer_size_kb"
	[ "$mode" = returned ] && echo "id == $nr" >"$U/events/raw_syscalls/sys_enter/filter"
	echo 1 >"$U/options/stackmap"
	echo "$user" >"$U/options/stackmap_user"
	coproc TP { exec "$prog" "$n" "$l" "$k"; }
	tpid=$TP_PID
	read -r -t 60 -u "${TP[0]}" line
	pid=${line#pid }
	: >"$tmp/maps"
	while read -r -t 60 -u "${TP[0]}" line && [ "$line" != ready ]; do
		echo "$line" >>"$tmp/maps"
	done
	echo "$pid" >"$U/set_event_pid"
	echo 1 >"$U/options/event-fork"
	echo 1 >"$U/events/raw_syscalls/sys_enter/enable"
	t0=$(date +%s%N)
	echo go >&"${TP[1]}"
	read -r -t 1800 -u "${TP[0]}" line
	R_start=$((($(date +%s%N) - t0) / 1000000))
	R_slots=$(mstat user_slots_used || echo 0)
	echo >"$U/trace"
	echo "$user" >"$U/options/stackmap_user"
	echo late >&"${TP[1]}"
	: >"$tmp/tids"
	while read -r -t 600 -u "${TP[0]}" line && [ "$line" != "late done" ]; do
		[[ $line == "late "* ]] && echo "${line#late }" >>"$tmp/tids"
	done
	# K > 0: timed pairs, user stacks on and off, the order alternating
	R_diffs=
	local p o on off
	for ((p = 0; k > 0 && p <= pairs; p++)); do
		for o in $((p % 2)) $((1 - p % 2)); do
			echo "$o" >"$U/options/stackmap_user"
			echo time >&"${TP[1]}"
			read -r -t 600 -u "${TP[0]}" line
			if [ "$o" = 1 ]; then on=${line##* }; else off=${line##* }; fi
		done
		((p == 0)) || R_diffs+="$(((on - off) / k)) "
	done
	echo 0 >"$U/events/raw_syscalls/sys_enter/enable"
	cp "$U/trace" "$tmp/trace"
	echo end >&"${TP[1]}"
	wait "$tpid" || true
	echo 0 >"$U/options/stackmap_user"
	echo 0 >"$U/options/stackmap"
	echo 0 >"$U/events/raw_syscalls/sys_enter/filter"
	echo >"$U/set_event_pid"
	R_peak=$(mstat user_walk_buffers_peak || echo 0)
	rmdir "$U"
	unload
}

# delivered: late threads with their user stack / late threads
delivered() {
	python3 -S "$sel/ustack_threads.py" --nr "$nr" "$tmp/trace" "$tmp/maps" "$prog" \
		"$tmp/tids" | awk -F= '$1 == "late_threads" {n = $2} $1 == "stacks" {s = $2}
			END {printf "%.3f\n", n ? s / n : 0}'
}

# FSM_BENCH_COST_ONLY=1: the per-request cost alone (a quick comparison)
for size in 1k 10k; do
	[ "${FSM_BENCH_COST_ONLY:-0}" = 1 ] && break
	n=$((${size%k} * 1000))
	for mode in returned asleep; do
		for which in new base; do
			ko=$new sfx=
			[ $which = base ] && ko=$base sfx=_base
			run "$ko" "$n" 100 0 "$mode" 1
			echo "threads_delivered_${mode}_$size$sfx=$(delivered)"
			if [ $which = new ] && [ $mode = asleep ]; then
				echo "threads_slots_used_asleep_$size=$R_slots"
				echo "threads_early_start_s_$size=$((R_start / 1000))"
				echo "threads_walk_buffers_peak_asleep_$size=$R_peak"
			fi
		done
	done
done

# per request at 100 live threads, NEW and BASE interleaved
declare -A per
for ((r = 0; r < rounds; r++)); do
	for which in new base; do
		ko=$new
		[ $which = base ] && ko=$base
		run "$ko" 100 0 "$calls" asleep 1
		per[$which]+=$R_diffs
	done
done
# quantile Q: of the numbers on stdin (nearest rank)
quantile() {
	tr ' ' '\n' | grep . | sort -n |
		awk -v q="$1" '{a[NR] = $1} END {i = int(q * NR + 0.5); if (i < 1) i = 1; print a[i]}'
}
for which in new base; do
	sfx=
	[ $which = base ] && sfx=_base
	echo "ns_per_request_100$sfx=$(echo "${per[$which]}" | quantile 0.5)"
	echo "ns_per_request_100${sfx}_q1=$(echo "${per[$which]}" | quantile 0.25)"
	echo "ns_per_request_100${sfx}_q3=$(echo "${per[$which]}" | quantile 0.75)"
	echo "ns_per_request_100${sfx}_pairs=${per[$which]% }"
done
mn=$(echo "${per[new]}" | quantile 0.5)
mb=$(echo "${per[base]}" | quantile 0.5)
awk -v a="$mn" -v b="$mb" 'BEGIN {printf "request_cost_ratio_100=%.2f\n", (b > 0) ? a / b : 0}'

insmod "$new"
mkdir "$U"
echo "user_slots_memory_bytes=$(mstat user_slots_memory_bytes)"
echo "user_walk_buffer_bytes=$(mstat user_walk_buffer_bytes)"
rmdir "$U"
unload
