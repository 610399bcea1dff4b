#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_basic.sh MODULE.ko - the user story, at the top level and in an
# instance: choose source events, enable, run a workload; stack_id records
# right after their source events; stacks that resolve in /proc/kallsyms;
# stat consistent with the binary export and the trace; a new recording;
# reset; rmdir while recording.
# shellcheck disable=SC2016,SC2317 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

# save DIR NAME: copy the instance's outputs to $TMPD/NAME.*
save() {
	cp "$1/trace" "$TMPD/$2.trace"
	cp "$1/stack_map" "$TMPD/$2.map"
	cp "$1/stack_map_bin" "$TMPD/$2.bin"
	cp "$1/stack_map_stat" "$TMPD/$2.stat"
}

# story DIR LABEL
story() {
	local D=$1 L=$2 sw wk gen0 gen1 s

	echo 'sched:sched_switch sched:sched_wakeup' >"$D/stack_map_events"
	check_eq "$L: sources chosen" "$(<"$D/stack_map_events")" \
		$'sched:sched_switch\nsched:sched_wakeup'
	echo 4096 >"$D/buffer_size_kb"
	echo >"$D/trace"
	echo 1 >"$D/events/sched/sched_switch/enable"
	echo 1 >"$D/events/sched/sched_wakeup/enable"
	check "$L: echo 1 > options/stackmap" eval "echo 1 > $D/options/stackmap"
	check_eq "$L: options/stackmap reads 1" "$(<"$D/options/stackmap")" 1
	check_eq "$L: ... = events/stackmap/stack_id/enable" \
		"$(<"$D/events/stackmap/stack_id/enable")" 1
	check_eq "$L: stat says recording" "$(stat_get "$D/stack_map_stat" recording)" 1
	workload 30
	# stop recording first: what is saved below is then quiescent
	echo 0 >"$D/options/stackmap"
	check_eq "$L: options/stackmap reads 0" "$(<"$D/options/stackmap")" 0
	check_eq "$L: ... and the event is off" \
		"$(<"$D/events/stackmap/stack_id/enable")" 0
	echo 0 >"$D/events/sched/enable"
	save "$D" "$L.1"
	s=$TMPD/$L.1
	while IFS= read -r l; do diag "$l"; done <"$s.stat"
	check "$L: stack_id records in the trace" has "$s.trace" "stack_id: stack_id="
	sw=$(<"$D/events/sched/sched_switch/id")
	wk=$(<"$D/events/sched/sched_wakeup/id")
	later "$L" order "$s.trace" "sched_switch=$sw" "sched_wakeup=$wk"
	later "$L" selfcontained "$s.trace"
	later "$L" bin "$s.bin"
	later "$L" symcheck "$s.map" "$s.bin" "$TMPD/kallsyms"
	later "$L" consistent "$s.stat" "$s.bin" "$s.map" "$s.trace" one nofull
	check "$L: hit_rate printed" \
		eval '[[ $(stat_get "$s.stat" hit_rate) =~ ^[0-9]+\.[0-9]{2}%$ ]]'

	# a new recording (enable through the event): ids inline again
	echo >"$D/trace"
	echo 1 >"$D/events/sched/sched_switch/enable"
	echo 1 >"$D/events/stackmap/stack_id/enable"
	check_eq "$L: events/stackmap/stack_id/enable -> options/stackmap 1" \
		"$(<"$D/options/stackmap")" 1
	workload 10
	echo 0 >"$D/events/stackmap/stack_id/enable"
	cp "$D/trace" "$TMPD/$L.2.trace"
	later "$L.2" selfcontained "$TMPD/$L.2.trace"
	later "$L.2" order "$TMPD/$L.2.trace" "sched_switch=$sw"
	check "$L: second recording carries stacks (stack_def) again" \
		has "$TMPD/$L.2.trace" " stack_def: stack_id="

	# reset while recording: generation bump, reset record, ids restart
	gen0=$(stat_get "$D/stack_map_stat" generation)
	echo >"$D/trace"
	echo 1 >"$D/options/stackmap"
	workload 5
	check "$L: echo reset > stack_map" eval "echo reset > $D/stack_map"
	gen1=$(stat_get "$D/stack_map_stat" generation)
	check_eq "$L: generation bumped" "$gen1" $((gen0 + 1))
	check_eq "$L: resets counted" "$(stat_get "$D/stack_map_stat" resets)" 1
	workload 5
	echo 0 >"$D/options/stackmap"
	cp "$D/trace" "$TMPD/$L.3.trace"
	# ids carry the low 12 bits of the generation above the index, the
	# reset record the full generation
	check "$L: reset record in the trace (stack_reset, generation $gen1)" \
		has "$TMPD/$L.3.trace" "stack_reset: stack_id=4294967295 generation=$gen1 gen=$((gen1 & 4095))"
	check "$L: records of the new generation" has "$TMPD/$L.3.trace" " gen=$((gen1 & 4095)) index="
	check "$L: records of the old generation before it" has "$TMPD/$L.3.trace" " gen=$((gen0 & 4095)) index="
	later "$L.3" resetorder "$TMPD/$L.3.trace"
	later "$L.3" selfcontained "$TMPD/$L.3.trace"
	check "$L: stack_map after reset starts at index 0, its id names the new generation" \
		eval '[[ $(<"$D/stack_map") == "stack_id $(((gen1 & 4095) << 20)) [gen $gen1, index 0, "* ]]'
	# one number, one name: the id a record carries is the one stack_map shows
	sid=$(grep -m1 -o "stack_id=[0-9]* gen=$((gen1 & 4095)) " "$TMPD/$L.3.trace")
	sid=${sid#stack_id=}
	sid=${sid%% *}
	check "$L: grep stack_map for a record's stack_id ($sid) finds its stack" \
		grep -q "^stack_id $sid \[gen $gen1, index " "$D/stack_map"
	check "$L: echo 0 > stack_map also resets" eval "echo 0 > $D/stack_map"
	check_eq "$L: generation bumped again" \
		"$(stat_get "$D/stack_map_stat" generation)" $((gen1 + 1))
	check_eq "$L: empty after reset (not recording)" "$(<"$D/stack_map")" ""
	echo 0 >"$D/events/enable"
	echo >"$D/stack_map_events"
	check_eq "$L: echo > stack_map_events clears" "$(<"$D/stack_map_events")" ""
}

check "insmod bits=12" load bits=12
cp /proc/kallsyms "$TMPD/kallsyms"	# with our module's symbols
story "$T" top
echo >"$T/trace"

mkdir "$T/instances/story"
story "$T/instances/story" inst
check "the instance's records are in its own buffer" has "$TMPD/inst.1.trace" " stack_id: "
check "the top level buffer has none of them" eval '! grep -q " stack_id: " "$T/trace"'

# rmdir while recording
echo sched:sched_switch >"$T/instances/story/stack_map_events"
echo 1 >"$T/instances/story/events/sched/sched_switch/enable"
echo 1 >"$T/instances/story/options/stackmap"
workload 200 &
wl=$!
nap 0.5
id=$(stat_get "$T/instances/story/stack_map_stat" inst_id)
check "instance id is shown" test -n "$id"
check "rmdir of an instance while recording" rmdir "$T/instances/story"
wait $wl
check "its nodes are gone" test ! -e "$T/instances/story/stack_map"
mkdir "$T/instances/story"
check "same name again: fresh instance, nodes back when mkdir returns" test -e "$T/instances/story/stack_map"
check_eq "same name again: not recording" "$(<"$T/instances/story/options/stackmap")" 0
check_eq "same name again: no map yet" \
	"$(stat_get "$T/instances/story/stack_map_stat" map_allocated)" 0
# ids are reused (lowest free, once nothing refers to the old instance):
# what holds is an id below 63 (user stacks) while few instances live
check "same name again: an instance id below 63" \
	test "$(stat_get "$T/instances/story/stack_map_stat" inst_id)" -lt 63
rmdir "$T/instances/story"
check "rmmod" unload
finish
