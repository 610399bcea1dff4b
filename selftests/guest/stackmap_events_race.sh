#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_events_race.sh MODULE.ko - writes to ONE open stack_map_events
# file in parallel (io_uring from several processes: write(2) itself is
# serialised by f_pos_lock, see prog/events_race.c). One text is an
# unfinished token the module holds across writes, the other a newline
# that completes it, so the held length changes all the time. A write
# context without a lock reads that length twice and overruns its buffer
# (KASAN on the debug kernel). No write can form an existing event: the
# set must stay what it was.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SECS=${FSM_RACE_SECS:-20}
P=$TMPD/events_race

check "insmod" load bits=10
mkdir "$T/instances/race"
check "gcc events_race.c (liburing)" \
	gcc -O2 -Wall -o "$P" "$HERE/prog/events_race.c" -luring

for D in "$T" "$T/instances/race"; do
	L=${D#"$T"}
	L=${L:-/}
	E=$D/stack_map_events
	echo sched:sched_wakeup >"$E"
	kmsg_mark
	"$P" "$E" 4 "$SECS" sched:sched_switc $'\n' >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	if [ $rc = 77 ]; then
		ok "$L # SKIP no io_uring in this kernel: $(<"$TMPD/err")"
		continue
	fi
	check_eq "$L 4 processes, io_uring writes on one open file: each write whole or EINVAL" \
		"$rc $(<"$TMPD/err")" "0 "
	out=$(<"$TMPD/out")
	diag "$L $out"
	read -r _ w _ e <<<"$out"
	check "$L at least 100 writes, some refused and some accepted" \
		test "${w:-0}" -ge 100 -a "${e:-0}" -gt 0 -a "${e:-0}" -lt "${w:-0}"
	check_eq "$L the set is unchanged" "$(<"$E")" sched:sched_wakeup
	check "$L no KASAN report" eval '! kmsg_since | grep -q KASAN'
	check "$L the node still works: >> adds" eval "echo sched:sched_switch >> $E"
	check_eq "$L ... two events" "$(lines "$E")" 2
	echo >"$E"
done

check "rmdir" rmdir "$T/instances/race"
check "rmmod" unload
finish
