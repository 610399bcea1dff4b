#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack_threads.sh MODULE.ko - user stacks on a host with many threads.
#
# selftests/guest/ustack/threads.c starts N threads (FSM_THREADS_N, 1,500)
# that each make one traced getppid and stay alive, asleep in a futex
# wait, then L late threads (FSM_THREADS_LATE, 100) that each make one
# getppid from a known chain (thr_late_start -> thr_late_a -> thr_late_b ->
# thr_sys). Source event raw_syscalls:sys_enter, the program's threads
# only (set_event_pid with options/event-fork). Every late thread's event
# must get its user stack, naming that chain, equal to the kernel's
# (options/userstacktrace on the same events, x86), with no user_no_slot.
# Two ways to stay alive:
#   returned  a filter keeps getppid only: the early threads asked, got
#             their stacks and returned to user space before they slept;
#             nothing of them is pending (x86: the trigger path honours
#             event filters; Debian's arm64 kernel takes sources as
#             tracepoint probes, which record nothing for a filtered event)
#   asleep    no filter: each early thread's futex wait asked too and sleeps
#             with that request pending, holding a task slot until it wakes
#             (Documentation/ustack.rst, "Per-task state")
# The module's task slots in use (stack_map_stat user_slots_used) are
# checked at each step: none held by tasks that returned, one per sleeper
# with a pending request, none once the program ended.
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

U=$T/instances/uthreads
PROG=$TMPD/ustack-threads
N=${FSM_THREADS_N:-1500}
L=${FSM_THREADS_LATE:-100}
# seconds for the early threads to start (about 5 ms each under TCG)
WAIT=$((60 + N / 20))

case $ARCH in
aarch64) NR_GETPPID=173 KSTACKS='' VARIANTS=asleep ;;
*) NR_GETPPID=110 KSTACKS=--kernel VARIANTS="returned asleep" ;;
esac

check "gcc threads.c" gcc -O1 -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -pthread -o "$PROG" "$HERE/ustack/threads.c"
check "load" load
[ "$ARCH" = aarch64 ] &&
	diag "SKIP variant returned: Debian's arm64 kernel records nothing for a source event with a filter (probe mode)"

# slots: user_slots_used of stack_map_stat (a module without it: "none")
slots() { stat_get "$U/stack_map_stat" user_slots_used || echo none; }

# run LABEL: one program run, checks, then the instance is removed
run() {
	local L_=$1 pid='' line st t0 tpid
	mkdir "$U"
	echo raw_syscalls:sys_enter >"$U/stack_map_events"
	echo 4096 >"$U/buffer_size_kb"
	[ "$L_" = returned ] && echo "id == $NR_GETPPID" >"$U/events/raw_syscalls/sys_enter/filter"
	[ -n "$KSTACKS" ] && echo 1 >"$U/options/userstacktrace"
	echo 1 >"$U/options/stackmap"
	echo 1 >"$U/options/stackmap_user"
	coproc TP { exec "$PROG" "$N" "$L" 2>"$TMPD/$L_.err"; }
	tpid=$TP_PID
	read -r -t 60 -u "${TP[0]}" line
	[[ $line == "pid "* ]] && pid=${line#pid }
	: >"$TMPD/$L_.maps"
	while read -r -t 60 -u "${TP[0]}" line && [ "$line" != ready ]; do
		echo "$line" >>"$TMPD/$L_.maps"
	done
	check "$L_: program started (pid ${pid:-?})" [ -n "$pid" ]
	echo "$pid" >"$U/set_event_pid"
	echo 1 >"$U/options/event-fork"
	echo 1 >"$U/events/raw_syscalls/sys_enter/enable"
	t0=$(date +%s)
	echo go >&"${TP[1]}"
	read -r -t "$WAIT" -u "${TP[0]}" line
	diag "$L_: $line after $(($(date +%s) - t0)) s"
	check_eq "$L_: $N early threads asked and sleep" "$line" "asleep $N"
	st=$(slots)
	diag "$L_: task slots used with $N early threads asleep: $st"
	if [ "$L_" = returned ]; then
		check_eq "$L_: no task slot held by threads that returned to user space" "$st" 0
	else
		check "$L_: a task slot per sleeper with a pending request ($st >= $N)" \
			eval '[ "$st" != none ] && [ "$st" -ge "$N" ]'
	fi
	# a new recording for the late threads: their stacks and file_map
	# records go out inline again
	echo >"$U/trace"
	echo 0 >"$U/options/stackmap_user"
	echo 1 >"$U/options/stackmap_user"
	echo late >&"${TP[1]}"
	: >"$TMPD/$L_.tids"
	while read -r -t 120 -u "${TP[0]}" line && [ "$line" != "late done" ]; do
		[[ $line == "late "* ]] && echo "${line#late }" >>"$TMPD/$L_.tids"
	done
	check_eq "$L_: late threads done" "$line" "late done"
	nap 0.2
	echo 0 >"$U/events/raw_syscalls/sys_enter/enable"
	cat "$U/trace" >"$TMPD/$L_.trace"
	cat "$U/stack_map_stat" >"$TMPD/$L_.stat"
	echo end >&"${TP[1]}"
	t0=$(date +%s)
	while kill -0 "$tpid" 2>/dev/null && (($(date +%s) - t0 < WAIT)); do
		nap 0.2
	done
	wait "$tpid"
	check_eq "$L_: program ended" "$?" 0
	sed 's/^/# stderr: /' "$TMPD/$L_.err"
	check_eq "$L_: no task slot used once the program ended" "$(slots)" 0
	check_eq "$L_: no request without a task slot (user_no_slot)" \
		"$(stat_get "$TMPD/$L_.stat" user_no_slot)" 0
	echo 0 >"$U/options/stackmap_user"
	echo 0 >"$U/options/stackmap"
	[ -n "$KSTACKS" ] && echo 0 >"$U/options/userstacktrace"
	echo 0 >"$U/events/raw_syscalls/sys_enter/filter" 2>/dev/null
	echo >"$U/set_event_pid"
	rmdir "$U"

	$PY "$HERE/ustack_threads.py" $KSTACKS --nr "$NR_GETPPID" \
		"$TMPD/$L_.trace" "$TMPD/$L_.maps" "$PROG" "$TMPD/$L_.tids" \
		>"$TMPD/$L_.res" 2>"$TMPD/$L_.perr"
	sed 's/^/# /' "$TMPD/$L_.perr"
	while IFS= read -r line; do diag "$L_: $line"; done <"$TMPD/$L_.res"
	check_eq "$L_: $L late threads" "$(res "$L_" late_threads)" "$L"
	check_eq "$L_: one getppid event per late thread" "$(res "$L_" events)" "$L"
	check_eq "$L_: each has a cookie" "$(res "$L_" cookies)" "$L"
	check_eq "$L_: each gets its user stack" "$(res "$L_" stacks)" "$L"
	check_eq "$L_: each names the known chain" "$(res "$L_" chain_ok)" "$L"
	if [ -n "$KSTACKS" ]; then
		check_eq "$L_: each compared with the kernel's userstacktrace" \
			"$(res "$L_" compared)" "$L"
		check "$L_: frames compared ($(res "$L_" frames))" \
			[ "$(res "$L_" frames)" -ge $((4 * L)) ]
		check_eq "$L_: equal to the kernel's, frame by frame" "$(res "$L_" mismatch)" 0
	fi
}

# res LABEL KEY: a key=value result of ustack_threads.py
res() {
	local l
	while IFS= read -r l; do
		[ "${l%%=*}" = "$2" ] && { echo "${l#*=}"; return 0; }
	done <"$TMPD/$1.res"
	return 1
}

for v in $VARIANTS; do
	run "$v"
done
finish
