#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_race.sh MODULE.ko - resets racing inserts and readers, recording
# toggled and sources rewritten while inserting, instances created and
# removed while recording, rmmod with a node held open, rmmod while
# recording. Run on the debug kernel too (KASAN, lockdep): run.sh fails on
# any splat.
# shellcheck disable=SC2016,SC2317 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SECS=${FSM_RACE_SECS:-20}
STOP=$TMPD/stop

check "insmod bits=8" load bits=8 events=sched:sched_switch,sched:sched_wakeup
mkdir "$T/instances/r1"
for D in "$T" "$T/instances/r1"; do
	echo 1 >"$D/events/sched/sched_switch/enable"
	echo 1 >"$D/events/sched/sched_wakeup/enable"
	echo 1 >"$D/options/stackmap"
done

loop_workload() { while [ ! -e "$STOP" ]; do workload 5; done; }
loop_reset() {
	local n=0
	while [ ! -e "$STOP" ]; do
		echo reset >"$T/stack_map"
		echo 0 >"$T/instances/r1/stack_map"
		n=$((n + 1))
		nap 0.01
	done
	echo $n >"$TMPD/resets"
}
loop_read() {
	local n=0 bad=0
	while [ ! -e "$STOP" ]; do
		# errors (ESTALE after a reset during the read) are expected;
		# bash warns about the NUL bytes of the binary file
		{
			: "$(<"$T/stack_map")"
			: "$(<"$T/stack_map_bin")"
			: "$(<"$T/instances/r1/stack_map")"
		} 2>/dev/null
		: "$(<"$T/stack_map_stat")" || bad=$((bad + 1))
		n=$((n + 1))
	done
	echo "$n $bad" >"$TMPD/reads"
}
loop_toggle() {
	local i=0
	while [ ! -e "$STOP" ]; do
		echo $((i & 1)) >"$T/instances/r1/options/stackmap"
		if ((i % 3)); then
			echo 'sched:*' >"$T/instances/r1/stack_map_events"
		else
			echo 'sched:sched_switch' >"$T/instances/r1/stack_map_events"
		fi
		i=$((i + 1))
		nap 0.005
	done
	echo 1 >"$T/instances/r1/options/stackmap"
}
loop_churn() {
	local i=0 d
	while [ ! -e "$STOP" ]; do
		d=$T/instances/churn$((i % 3))
		if mkdir "$d" 2>/dev/null; then
			echo 1 >"$d/events/sched/sched_switch/enable"
			# the nodes appear asynchronously: use the event directly
			echo 1 >"$d/events/stackmap/stack_id/enable"
			[ -e "$d/stack_map_events" ] && echo sched:sched_switch >"$d/stack_map_events"
		fi
		nap 0.01
		d=$T/instances/churn$(((i + 1) % 3))
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
		i=$((i + 1))
	done
	echo $i >"$TMPD/churns"
}

loop_workload &
loop_workload &
loop_reset &
loop_read &
loop_toggle &
loop_churn &
nap "$SECS"
: >"$STOP"
wait
check "reset loop ran ($(<"$TMPD/resets") rounds)" test "$(<"$TMPD/resets")" -gt 0
read -r nreads nbad <"$TMPD/reads"
check "reader loop ran ($nreads rounds)" test "$nreads" -gt 0
check_eq "stat reads never failed" "$nbad" 0
check "churn loop ran ($(<"$TMPD/churns") rounds)" test "$(<"$TMPD/churns")" -gt 0
for d in "$T"/instances/churn*; do [ -d "$d" ] && rmdir "$d"; done
check "churn instances all removable" eval '! compgen -G "$T/instances/churn*" >/dev/null'

# quiescent: counters consistent
for D in "$T" "$T/instances/r1"; do
	echo 0 >"$D/options/stackmap"
	s=$TMPD/stat.${D##*/}
	cp "$D/stack_map_stat" "$s"
	h=$(stat_get "$s" hits)
	i=$(stat_get "$s" inserts)
	dr=$(stat_get "$s" drops)
	check_eq "${D##*/}: requests = hits + inserts + drops after the race" \
		"$(stat_get "$s" requests)" $((h + i + dr))
	diag "${D##*/}: resets $(stat_get "$s" resets), drops_resetting $(stat_get "$s" drops_resetting), drops_busy $(stat_get "$s" drops_busy), lost_races $(stat_get "$s" lost_races)"
	cp "$D/stack_map_bin" "$TMPD/bin.${D##*/}"
	later "${D##*/}" bin "$TMPD/bin.${D##*/}"
done

# a reader that opened before a reset gets -ESTALE, not mixed data
echo 1 >"$T/options/stackmap"
workload 3
exec 6<"$T/stack_map"
echo reset >"$T/stack_map"
check_fail "read after a reset since open: error (ESTALE)" eval 'read -r x <&6'
exec 6<&-
echo 0 >"$T/options/stackmap"

# rmmod with a node held open is refused; closing it allows rmmod
exec 8<"$T/stack_map_stat"
check_fail "rmmod refused while a node is open" unload
check "still loaded" is_loaded
exec 8<&-

# rmdir with a node of the instance held open works; the node stays readable
mkdir "$T/instances/held"
exec 7<"$T/instances/held/stack_map_stat"
check "rmdir with a node held open" rmdir "$T/instances/held"
check "held node still readable after rmdir" eval 'read -r x <&7 && [[ $x == instance:* ]]'
check_fail "rmmod refused while the held node is open" unload
exec 7<&-
check "opening a node of a removed instance fails" \
	eval '! [ -e "$T/instances/held/stack_map_stat" ]'

# rmmod while recording in two instances
rm -f "$STOP"
echo 1 >"$T/options/stackmap"
echo 1 >"$T/instances/r1/options/stackmap"
loop_workload &
wl=$!
nap 0.3
check "rmmod while recording" unload
: >"$STOP"
wait $wl
check "trace still readable after rmmod" eval ': "$(<"$T/trace")"'
check "instance removable after rmmod" rmdir "$T/instances/r1"
check "insmod again" load bits=8
check "rmmod again" unload
finish
