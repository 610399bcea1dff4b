#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_memory.sh MODULE.ko - issue 8, probe path and memory:
#  item 15  memory_budget_mb: validated (-EINVAL + one dmesg line), a map
#           past the budget fails `echo 1 > options/stackmap` with ENOMEM and
#           one dmesg line naming the budget, nothing recorded meanwhile; a
#           larger budget (runtime write) lets the same write succeed;
#           memory_bytes of stack_map_stat is what the budget charged.
#  item 14  the probe's per-CPU buffers: records are written, nothing is
#           dropped for nesting (nested_dropped 0).
#  item 16  reset under load at bits 14 and 18: drops_resetting stays a
#           bounded few per reset (FSM_RESET_DROP_MAX, 2 per reset by
#           default), where the stop-the-world clear dropped every insert.
#  item 15  (leftovers) maps are allocated and zeroed outside the module's
#           locks: while one instance allocates its bits=20 map (the kernel
#           map by a direct enable of events/stackmap/stack_id, the user map
#           by options/stackmap_user), another instance's stack_map_stat
#           read / options/stackmap_user write returns before it ends.
# FSM_MEMORY_PARTS (default "budget reset alloc") picks parts: "reset" alone
# runs on a module without memory_budget_mb too (to compare with main).
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

P=/sys/module/ftrace_stackmap/parameters
PARTS=" ${FSM_MEMORY_PARTS:-budget reset alloc} "

# ---- item 15: the parameter ----
if [[ $PARTS == *" budget "* ]]; then
for bad in 0 1048577 abc; do
	kmsg_mark
	check_fail "insmod memory_budget_mb=$bad refused" load memory_budget_mb=$bad
	is_loaded && unload
	check_eq "memory_budget_mb=$bad: one dmesg line" \
		"$(kmsg_since | grep -c "ftrace_stackmap: memory_budget_mb=$bad out of range (accepted: 1\.\.1048576)")" 1
done

check "insmod bits=14 memory_budget_mb=1" load bits=14 memory_budget_mb=1 \
	events=sched:sched_switch
check_eq "memory_budget_mb reads back" "$(<$P/memory_budget_mb)" 1
kmsg_mark
check_fail "runtime memory_budget_mb=0 refused" eval 'echo 0 >$P/memory_budget_mb'
check_eq "runtime memory_budget_mb=0: one dmesg line" \
	"$(kmsg_since | grep -c 'memory_budget_mb=0 out of range')" 1
check_eq "budget unchanged after the refused write" "$(<$P/memory_budget_mb)" 1

echo 1 >"$T/events/sched/sched_switch/enable"
kmsg_mark
err=$( { echo 1 >"$T/options/stackmap"; } 2>&1)
rc=$?
check "enable past the budget fails" test $rc -ne 0
case $err in
*"Cannot allocate memory"*) ok "... with ENOMEM" ;;
*) nok "... with ENOMEM (got: $err)" ;;
esac
msg=$(kmsg_since | grep 'over memory_budget_mb=1 ')
check_eq "... and one dmesg line naming the budget" "$(grep -c . <<<"$msg")" 1
diag "$msg"
check_eq "options/stackmap still 0" "$(<"$T/options/stackmap")" 0
workload 2
check "no stack_id record while refused" eval '! grep -q stack_id "$T/trace"'

echo 64 >$P/memory_budget_mb
check "enable within a 64 MiB budget" eval 'echo 1 >"$T/options/stackmap"'
workload 5
echo 0 >"$T/options/stackmap"
cp "$T/stack_map_stat" "$TMPD/stat"
mem=$(stat_get "$TMPD/stat" memory_bytes)
diag "bits=14 stack map: memory_bytes $mem"
check "memory_bytes within the budget" test "$mem" -gt 0 -a "$mem" -le $((64 << 20))

# ---- item 14 ----
check "records written" test "$(stat_get "$TMPD/stat" records)" -gt 0
check_eq "nested_dropped is 0" "$(stat_get "$TMPD/stat" nested_dropped)" 0
check "stack_id records in the trace" grep -q 'stack_id' "$T/trace"
unload
tracing_clean
fi

# ---- item 16 ----
if [[ $PARTS == *" reset "* ]]; then
RESETS=${FSM_RESETS:-40}
MAXPER=${FSM_RESET_DROP_MAX:-2}
STOP=$TMPD/stop
loop_workload() { while [ ! -e "$STOP" ]; do workload 3; done; }
for bits in 14 18; do
	rm -f "$STOP"
	if ! load bits=$bits events=sched:sched_switch,sched:sched_wakeup; then
		nok "insmod bits=$bits"
		continue
	fi
	echo 1 >"$T/events/sched/sched_switch/enable"
	echo 1 >"$T/events/sched/sched_wakeup/enable"
	echo 1 >"$T/options/stackmap"
	loop_workload &
	wl=$!
	workload 3
	for ((i = 0; i < RESETS; i++)); do
		echo reset >"$T/stack_map"
		nap 0.02
	done
	touch "$STOP"
	wait $wl
	echo 0 >"$T/options/stackmap"
	cp "$T/stack_map_stat" "$TMPD/stat.$bits"
	d=$(stat_get "$TMPD/stat.$bits" drops_resetting)
	req=$(stat_get "$TMPD/stat.$bits" requests)
	diag "bits=$bits: $RESETS resets, $req requests, drops_resetting $d"
	check_eq "bits=$bits: generation after $RESETS resets" \
		"$(stat_get "$TMPD/stat.$bits" generation)" $((RESETS + 1))
	check "bits=$bits: inserts ran ($req requests)" test "$req" -gt $((RESETS * 2))
	check "bits=$bits: drops_resetting $d <= $MAXPER per reset" \
		test "$d" -le $((RESETS * MAXPER))
	cp "$T/stack_map_bin" "$TMPD/bin.$bits"
	later "bits$bits" bin "$TMPD/bin.$bits"
	unload
	tracing_clean
done
fi

# ---- item 15 leftovers: no module lock held while a map is allocated ----
if [[ $PARTS == *" alloc "* ]]; then
# alloc_race LABEL SETUP_A OTHER_B: run SETUP_A (allocates a bits=20 map) in
# the background, then OTHER_B; B must return while A is still allocating.
alloc_race() {
	local t0 tb ta
	rm -f "$TMPD/a_done"
	t0=$EPOCHREALTIME
	{ eval "$2"; echo "$EPOCHREALTIME" >"$TMPD/a_done"; } &
	nap 0.05
	eval "$3"
	tb=$EPOCHREALTIME
	local a_running=1
	[ -e "$TMPD/a_done" ] && a_running=0
	wait
	ta=$(<"$TMPD/a_done")
	diag "$1: A took $(( (${ta/./} - ${t0/./}) / 1000 )) ms, B returned after $(( (${tb/./} - ${t0/./}) / 1000 )) ms"
	check "$1: B returned while A was still allocating" test $a_running = 1
}
if load bits=20 events=sched:sched_switch; then
	mkdir "$T/instances/ma" "$T/instances/mb"
	wait_for "$T/instances/mb/stack_map_stat"
	wait_for "$T/instances/ma/options/stackmap_user"
	echo 1 >"$T/instances/ma/events/sched/sched_switch/enable"
	alloc_race "kernel map (direct enable) vs stack_map_stat" \
		'echo 1 >"$T/instances/ma/events/stackmap/stack_id/enable"' \
		': "$(<"$T/instances/mb/stack_map_stat")"'
	check_eq "... the map is there" "$(stat_get "$T/instances/ma/stack_map_stat" map_allocated)" 1
	alloc_race "user map (options/stackmap_user) vs another instance's option" \
		'echo 1 >"$T/instances/ma/options/stackmap_user"' \
		'echo 0 >"$T/instances/mb/options/stackmap_user"'
	check_eq "... the user map is there" "$(stat_get "$T/instances/ma/stack_map_stat" user_map_allocated)" 1
	echo 0 >"$T/instances/ma/options/stackmap_user"
	echo 0 >"$T/instances/ma/events/stackmap/stack_id/enable"
	rmdir "$T/instances/ma" "$T/instances/mb"
	unload
	tracing_clean
else
	nok "insmod bits=20"
fi
fi

finish
