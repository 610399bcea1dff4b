#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_events_atomic.sh MODULE.ko - a refused change of
# stack_map_events changes nothing: not with '>' (the old set stays, it is
# not cleared), not when the last token was held across writes and fails
# later (next write or close), not in part. A write is applied (all its
# complete tokens) or refused whole, and a refused write does not drop the
# token held before it. Long lists work in 4096-byte writes (stdio).
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

# wr FILE STRING: write STRING in one write(), without a newline
wr() { printf '%s' "$2" >"$1"; }
wra() { printf '%s' "$2" >>"$1"; }
# w3 STRING: one write() on fd 3 (the same open file each time; opening
# /dev/fd/3 would open the node again)
w3() { printf '%s' "$1" >&3; }

OLD=$'sched:sched_wakeup\nsched:sched_process_fork'

# Lists longer than one write: alternating 19-byte tokens, so that the
# 4096- and 8192-byte boundaries of dd bs=4096 fall inside a token
# ("sched:sched" and "sch": both could still become an event).
PAIR='sched:sched_wakeup sched:sched_switch '
L5K=
while [ ${#L5K} -lt 5000 ]; do L5K+=$PAIR; done
L9K=
while [ ${#L9K} -lt 9000 ]; do L9K+=$PAIR; done
printf '%s' "$L5K" >"$TMPD/l5k"
printf '%s' "$L9K" >"$TMPD/l9k"
NEW=$'sched:sched_wakeup\nsched:sched_switch'

check "insmod" load bits=10
mkdir "$T/instances/atomic"

for D in "$T" "$T/instances/atomic"; do
	L=${D#"$T"}
	L=${L:-/}
	E=$D/stack_map_events
	set_old() { echo 'sched:sched_wakeup sched:sched_process_fork' >"$E"; }

	set_old
	check_eq "$L initial set" "$(<"$E")" "$OLD"
	check_fail "$L '>' valid + unknown event: refused" \
		eval "echo 'sched:sched_switch nosuch:event' > $E"
	check_eq "$L ... the old set stays (not cleared, nothing added)" \
		"$(<"$E")" "$OLD"
	check_fail "$L '>>' valid + unknown event: refused" \
		eval "echo 'sched:sched_switch nosuch:event' >> $E"
	check_eq "$L ... set unchanged" "$(<"$E")" "$OLD"
	check_fail "$L '>' removal + bad syntax: refused" \
		eval "echo '!sched:sched_wakeup a:b:c' > $E"
	check_eq "$L ... set unchanged" "$(<"$E")" "$OLD"

	# A bad complete token is refused even when the last token could
	# still become an event (the write is not held: nothing is left to
	# fail at close only).
	kmsg_mark
	check_fail "$L '>>' 'nosuch:x sched' (last token unfinished): refused" \
		wra "$E" 'nosuch:x sched'
	check_eq "$L ... set unchanged" "$(<"$E")" "$OLD"
	# (counting lines would not do: the warnings are ratelimited)
	check "$L ... refused at the write: no 'at close' dmesg line" \
		eval "! kmsg_since | grep -q 'at close'"
	check_fail "$L '>' 'nosuch:x sched': refused" wr "$E" 'nosuch:x sched'
	check_eq "$L ... old set, not cleared" "$(<"$E")" "$OLD"
	check_fail "$L '>' '!a:b:c sched:sched_w': refused" \
		wr "$E" '!a:b:c sched:sched_w'
	check_eq "$L ... old set, not cleared" "$(<"$E")" "$OLD"

	# The last token could still become an event: it is held and fails
	# at close. The complete tokens before it are applied by the write.
	kmsg_mark
	check "$L '>>' 'sched:sched_switch sched:sched_switc' (last held to close)" \
		wra "$E" 'sched:sched_switch sched:sched_switc'
	check_eq "$L ... sched_switch added, the held token refused at close" \
		"$(<"$E")" "$OLD"$'\nsched:sched_switch'
	# no write can fail any more: the reason, then what happened at close
	# (at most two lines: the "why" line is ratelimited, shared with the
	# refusals above)
	check "$L ... at most two dmesg lines (why, and 'at close')" \
		test "$(kmsg_since | count_ours)" -le 2
	check "$L ... one says the set is unchanged" \
		eval "kmsg_since | grep -q 'at close: error -22, set unchanged'"
	set_old
	check "$L '>' 'sched:sched_switc' (held to close)" \
		wr "$E" 'sched:sched_switc'
	check_eq "$L ... refused at close: old set, not cleared" \
		"$(<"$E")" "$OLD"
	check "$L '>' 'sched:sched_switch sched:sched_switc'" \
		wr "$E" 'sched:sched_switch sched:sched_switc'
	check_eq "$L ... the complete part replaced the set" \
		"$(<"$E")" sched:sched_switch
	set_old

	# Held across writes of one open file: a refused write does not drop
	# the token held before it (bytes of accepted writes are kept).
	exec 3>>"$E"
	check "$L held: first write 'sched:sched_switch sched:sched_w'" \
		w3 'sched:sched_switch sched:sched_w'
	check_eq "$L ... its complete token applied" "$(<"$E")" \
		"$OLD"$'\nsched:sched_switch'
	check_fail "$L ... second write 'xyz' makes it invalid: refused" \
		w3 $'xyz\n'
	check_eq "$L ... set unchanged" "$(<"$E")" "$OLD"$'\nsched:sched_switch'
	check_fail "$L ... a write with a NUL byte: refused" \
		eval "printf 'ak\\0' >&3"
	check "$L ... 'sched:sched_w' still held: completed by 'aking\\n'" \
		w3 $'aking\n'
	check_eq "$L ... applied" "$(<"$E")" \
		"$OLD"$'\nsched:sched_switch\nsched:sched_waking'
	exec 3>&-

	# Lists longer than one write, in 4096-byte writes (as stdio flushes
	# them: st_blksize is 4096), each boundary inside a token.
	set_old
	check "$L '>' a ${#L5K}-byte list, dd bs=4096 (2 writes)" \
		dd if="$TMPD/l5k" of="$E" bs=4096 status=none
	check_eq "$L ... replaced by its two events" "$(<"$E")" "$NEW"
	set_old
	check "$L '>' a ${#L9K}-byte list, dd bs=4096 (3 writes)" \
		dd if="$TMPD/l9k" of="$E" bs=4096 status=none
	check_eq "$L ... replaced by its two events" "$(<"$E")" "$NEW"
	set_old
	check "$L '>>' the ${#L9K}-byte list, dd bs=4096 conv=notrunc" \
		dd if="$TMPD/l9k" of="$E" bs=4096 conv=notrunc status=none
	check_eq "$L ... sched_switch added" "$(<"$E")" \
		"$OLD"$'\nsched:sched_switch'


	# '>' opens: a refused first write, then a good one in the same open
	set_old
	exec 3>"$E"
	check_fail "$L '>' open: refused write" w3 $'nosuch:event\n'
	check_eq "$L ... the old set stays" "$(<"$E")" "$OLD"
	check "$L ... then a valid write in the same open" \
		w3 $'sched:sched_switch\n'
	exec 3>&-
	check_eq "$L ... adds to the kept set" "$(<"$E")" \
		"$OLD"$'\nsched:sched_switch'

	# what still replaces and clears
	check "$L '>' valid text replaces" eval "echo sched:sched_switch > $E"
	check_eq "$L ... replaced" "$(<"$E")" sched:sched_switch
	check "$L 'echo > E' clears" eval "echo > $E"
	check_eq "$L ... empty" "$(<"$E")" ""
	set_old
	check "$L ': > E' (open with O_TRUNC, no write) clears" eval ": > $E"
	check_eq "$L ... empty" "$(<"$E")" ""
done

check "rmdir" rmdir "$T/instances/atomic"
check "rmmod" unload
finish
