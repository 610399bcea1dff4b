#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_events_atomic.sh MODULE.ko - a refused change of
# stack_map_events changes nothing: not with '>' (the old set stays, it is
# not cleared), not when the last token was held across writes and fails
# later (next write or close), not in part.
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

check "insmod" load bits=10
mkdir "$T/instances/atomic"
wait_for "$T/instances/atomic/stack_map_events"

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

	# The last token could still become an event: the write is held and
	# fails at close. Nothing of it may be applied.
	kmsg_mark
	check "$L '>>' 'sched:sched_switch sched:sched_switc' (held to close)" \
		wra "$E" 'sched:sched_switch sched:sched_switc'
	check_eq "$L ... refused at close: set unchanged" "$(<"$E")" "$OLD"
	# no write can fail any more: the reason, then what happened at close
	check_eq "$L ... two dmesg lines (why, and 'at close ... set unchanged')" \
		"$(kmsg_since | count_ours)" 2
	check "$L ... the second says the set is unchanged" \
		eval "kmsg_since | grep -q 'at close: error -22, set unchanged'"
	check "$L '>' 'sched:sched_switch sched:sched_switc' (held to close)" \
		wr "$E" 'sched:sched_switch sched:sched_switc'
	check_eq "$L ... refused at close: old set, not cleared" \
		"$(<"$E")" "$OLD"

	# Held across writes of one open file: applied with the write that
	# completes it, all together, or not at all.
	exec 3>>"$E"
	check "$L held: first write 'sched:sched_switch sched:sched_w'" \
		w3 'sched:sched_switch sched:sched_w'
	check_eq "$L ... nothing applied yet" "$(<"$E")" "$OLD"
	check_fail "$L ... second write 'xyz' makes it invalid: refused" \
		w3 $'xyz\n'
	check_eq "$L ... set unchanged (sched_switch not added)" "$(<"$E")" "$OLD"
	check "$L ... the open file still works" \
		w3 $'sched:sched_switch sched:sched_w'
	check "$L ... completed by 'aking\\n'" w3 $'aking\n'
	exec 3>&-
	check_eq "$L ... both applied together" "$(<"$E")" \
		"$OLD"$'\nsched:sched_switch\nsched:sched_waking'

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
