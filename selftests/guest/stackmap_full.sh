#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_full.sh MODULE.ko - a full map (bits=6: 64 stacks): drops are
# counted per reason, every request that gets no id writes a fallback record
# carrying the full stack, nothing is lost silently; a reset makes room.
# shellcheck disable=SC2016,SC2317 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

overrun() {
	local f l n=0 all
	for f in "$1"/per_cpu/cpu*/stats; do
		all=$(<"$f")
		while IFS= read -r l; do
			[[ $l == "overrun: "* ]] && n=$((n + ${l#overrun: }))
		done <<<"$all"
	done
	echo $n
}

check "insmod bits=6" load bits=6
cp /proc/kallsyms "$TMPD/kallsyms"	# with our module's symbols
for D in "$T" "$T/instances/full"; do
	[ -d "$D" ] || mkdir "$D"
	wait_for "$D/stack_map"
	L=${D##*/}
	L=${L/tracing/top}
	echo 8192 >"$D/buffer_size_kb"
	echo 'sched:sched_switch sched:sched_wakeup kmem:kmalloc kmem:kmem_cache_alloc' \
		>"$D/stack_map_events"
	check_eq "$L: 4 sources" "$(lines "$D/stack_map_events")" 4
	echo >"$D/trace"
	for e in sched/sched_switch sched/sched_wakeup kmem/kmalloc kmem/kmem_cache_alloc; do
		echo 1 >"$D/events/$e/enable"
	done
	echo 1 >"$D/options/stackmap"
	workload 15
	echo 0 >"$D/options/stackmap"
	echo 0 >"$D/events/enable"
	cp "$D/trace" "$TMPD/$L.trace"
	cp "$D/stack_map" "$TMPD/$L.map"
	cp "$D/stack_map_bin" "$TMPD/$L.bin"
	cp "$D/stack_map_stat" "$TMPD/$L.stat"
	s=$TMPD/$L.stat
	while IFS= read -r l; do diag "$l"; done <"$s"
	check "$L: entries <= capacity 64" test "$(stat_get "$s" entries)" -le 64
	check "$L: drops counted (> 0)" test "$(stat_get "$s" drops)" -gt 0
	full=$(($(stat_get "$s" drops_map_full) + $(stat_get "$s" drops_arena_full)))
	check "$L: drops for map_full or arena_full ($full)" test "$full" -gt 0
	check "$L: fallback records counted (> 0)" test "$(stat_get "$s" fallbacks)" -gt 0
	check "$L: fallback records in the trace carry a stack" \
		eval '[[ $(<"$TMPD/$L.trace") =~ stack_fallback:\ stack_id=4294967295\ flags=0x[04]\ reason=[12]\ cookie=\{\}\ ips=\{0x ]]'
	if [ "$(overrun "$D")" = 0 ]; then
		later "$L" consistent "$s" "$TMPD/$L.bin" "$TMPD/$L.map" "$TMPD/$L.trace" one full
	else
		diag "$L: ring buffer overrun, trace counts not compared"
	fi
	later "$L" symcheck "$TMPD/$L.map" "$TMPD/$L.bin" "$TMPD/kallsyms"
	later "$L" bin "$TMPD/$L.bin"
	# a reset makes room again
	echo reset >"$D/stack_map"
	check_eq "$L: entries 0 after reset" "$(stat_get "$D/stack_map_stat" entries)" 0
	echo 1 >"$D/events/sched/sched_switch/enable"
	echo 1 >"$D/options/stackmap"
	workload 3
	echo 0 >"$D/options/stackmap"
	check "$L: new ids after reset" test "$(stat_get "$D/stack_map_stat" entries)" -gt 0
	echo 0 >"$D/events/enable"
done
rmdir "$T/instances/full"
check "rmmod" unload
finish
