#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_events_slowbuf.sh MODULE.ko - a write of stack_map_events whose
# buffer faults for a long time (a page of a FUSE file whose server stops
# answering, ustack/hangfs.c) does not block the other writers of the same
# open file (the glue-write review's L1: the user's bytes are copied before
# the write lock is taken, prog/events_slowbuf.c). Both writes are applied,
# the slow one last.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

P=$TMPD/events_slowbuf
MNT=$TMPD/mnt
OLD=$'sched:sched_wakeup\nsched:sched_process_fork'

check "insmod" load bits=10
check "gcc events_slowbuf.c (liburing)" gcc -O2 -Wall -pthread -o "$P" "$HERE/prog/events_slowbuf.c" -luring
# shellcheck disable=SC2046 # pkg-config prints several words
check "gcc hangfs (libfuse3)" gcc -O1 -o "$TMPD/hangfs" "$HERE/ustack/hangfs.c" \
	$(pkg-config --cflags --libs fuse3)
[ -e /dev/fuse ] || modprobe fuse 2>/dev/null
check "/dev/fuse exists" test -c /dev/fuse

# A's text, served by the FUSE server: as long as B's
printf 'sched:sched_waking\n' >"$TMPD/a.txt"
mkdir -p "$MNT"
"$TMPD/hangfs" "$TMPD/a.txt" "$MNT" -f -s &
srv=$!
check "hangfs mounted" wait_for "$MNT/lib.so" 30

E=$T/stack_map_events
echo 'sched:sched_wakeup sched:sched_process_fork' >"$E"
check_eq "initial set" "$(<"$E")" "$OLD"
"$P" "$E" "$MNT/lib.so" "$srv" $'sched:sched_switch\n' >"$TMPD/out" 2>"$TMPD/err"
rc=$?
if [ $rc = 77 ]; then
	ok "stuck writer # SKIP no io_uring in this kernel: $(<"$TMPD/err")"
	ok "... # SKIP"
else
	check_eq "an io_uring writer stuck in a fault (hung FUSE page) does not hold up a write(2) of the same open file (5 s)" \
		"$rc $(<"$TMPD/out") $(<"$TMPD/err")" "0 b_in_time 1 a=19 b=19 "
	check_eq "... both applied, the stuck one last" "$(<"$E")" \
		"$OLD"$'\nsched:sched_switch\nsched:sched_waking'
fi
echo >"$E"

kill -9 "$srv"
wait "$srv" 2>/dev/null
umount -l "$MNT" 2>/dev/null
check "rmmod" unload
finish
