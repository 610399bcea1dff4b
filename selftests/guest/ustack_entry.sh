#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack_entry.sh MODULE.ko - a user stack belongs exactly to the kernel
# entry that asked for it.
#
# selftests/guest/ustack/entry.c makes getppid calls from two callers with
# identical user registers at the kernel entry (same ip, sp, bp, syscall
# number); only the return address on the user stack differs. With
# raw_syscalls:sys_enter as a source, options/stackmap_user and the kernel's
# own options/userstacktrace on in one instance (on arm64: perf record -g,
# see KSTACKS below), every event must get its own cookie (one entry each)
# and a user stack equal to the kernel's, frame by frame
# (ustack_entry.py), naming the right caller.
# Also: a task work that could not be queued (test_fail_queue_pid) ends its
# entry: the task's later events still get user stacks.
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

U=$T/instances/uentry
PROG=$TMPD/ustack-entry
N=${FSM_ENTRY_N:-40}

check "gcc entry.c" gcc -O1 -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -o "$PROG" "$HERE/ustack/entry.c"
check "load" load

setup() {
	mkdir "$U"
	echo raw_syscalls:sys_enter >"$U/stack_map_events"
	echo 4096 >"$U/buffer_size_kb"
	echo 1 >"$U/events/raw_syscalls/sys_enter/enable"
	echo 1 >"$U/options/userstacktrace"
	echo 1 >"$U/options/stackmap"
	echo 1 >"$U/options/stackmap_user"
}

teardown() {
	echo 0 >"$U/options/stackmap_user"
	echo 0 >"$U/options/stackmap"
	echo 0 >"$U/options/userstacktrace"
	echo 0 >"$U/events/raw_syscalls/sys_enter/enable"
	echo >"$U/set_event_pid"
	rmdir "$U"
}

# The kernel's own user stacks to compare with: options/userstacktrace (a
# <user stack trace> after each event) where the kernel records them
# (x86-64; arm64 implements arch_stack_walk_user from 6.10 on: Debian's 6.12
# and 7.x). 7.x's CONFIG_UNWIND_USER (amd64) does not change it: the option
# still walks with arch_stack_walk_user() (upstream's deferred unwinder
# serves perf only). Debian's arm64 6.1 kernel has no
# CONFIG_USER_STACKTRACE_SUPPORT: the option is accepted there and records
# nothing. Its user-stack walker is perf's (perf_callchain_user(): the same
# frame records {x29, x30} from regs->pc, pointer-authentication bits
# stripped), so there PROG runs under perf record -g with the same getppid
# events (linux-perf, in the arm64 root), and ustack_entry.py takes the
# samples' user callchains. Which one is asked of the kernel
# (kernel_ustacks), not decided by its version.
case $ARCH in
aarch64) NR_GETPPID=173 ;;
*) NR_GETPPID=110 ;;
esac

# kernel_ustacks: does options/userstacktrace (on in $U) record frames here?
# Only a short-lived task's events are recorded (set_event_pid, kept until
# the trace is read): a reader of "trace" whose own syscalls land in the
# buffer it reads never reaches its end (seen: the suite hung there).
kernel_ustacks() {
	local n
	# shellcheck disable=SC2016 # expanded by the inner shell
	bash -c 'echo $$ >"$1/set_event_pid" && echo >"$1/trace" && exec /bin/true' probe "$U"
	n=$(grep -A1 -F '<user stack trace>' "$U/trace" | grep -c '^ => ')
	echo >"$U/set_event_pid"
	echo >"$U/trace"
	[ "$n" -gt 0 ]
}

# run LABEL [FAILQ]: PROG N in the instance; its trace, maps and stats in
# $TMPD. FAILQ: the first task-work queue of PROG fails (test_fail_queue_pid).
run() {
	local L=$1 pid=
	local -a wrap=()
	echo >"$U/trace"
	[ $KSTACKS = perf ] && wrap=(perf record -q -g -e raw_syscalls:sys_enter
		--filter "id == $NR_GETPPID" -o "$TMPD/$L.perf" --)
	# PROG prints its pid and maps, then waits for a line: the pid is
	# known (and the hook set) before its first getppid
	coproc EP { exec "${wrap[@]}" "$PROG" "$N" 2>"$TMPD/$L.perr"; }
	read -r -t 60 -u "${EP[0]}" line
	[[ $line == "pid "* ]] && pid=${line#pid }
	: >"$TMPD/$L.maps"
	while read -r -t 60 -u "${EP[0]}" line && [ "$line" != ready ]; do
		echo "$line" >>"$TMPD/$L.maps"
	done
	check "$L: PROG started (pid ${pid:-?})" [ -n "$pid" ]
	# only PROG's events (and so only its stack_id and user_stack records)
	echo "$pid" >"$U/set_event_pid"
	[ -z "${2:-}" ] || echo "$pid" >/sys/module/ftrace_stackmap/parameters/test_fail_queue_pid
	echo go >&"${EP[1]}"
	wait "$EP_PID"
	echo "$pid" >"$TMPD/$L.pid"
	nap 0.2
	cat "$U/trace" >"$TMPD/$L.trace"
	cat "$U/stack_map_stat" >"$TMPD/$L.stat"
	local -a kst=()
	if [ $KSTACKS = perf ]; then
		sed 's/^/# perf: /' "$TMPD/$L.perr"
		perf script -i "$TMPD/$L.perf" -F tid,ip,dso >"$TMPD/$L.pscript" 2>"$TMPD/$L.perr"
		sed 's/^/# perf script: /' "$TMPD/$L.perr" | head -n 5
		kst=(--perf "$TMPD/$L.pscript")
	fi
	$PY "$HERE/ustack_entry.py" "${kst[@]}" --nr "$NR_GETPPID" \
		"$TMPD/$L.trace" "$TMPD/$L.maps" "$PROG" "$pid" \
		>"$TMPD/$L.res" 2>"$TMPD/$L.err"
	sed 's/^/# /' "$TMPD/$L.err"
	if [ "$(res "$L" frames)" = 0 ]; then
		# nothing compared: show what the comparison had
		sed 's/^/# maps: /' "$TMPD/$L.maps"
		[ $KSTACKS = perf ] && sed 's/^/# perf script: /' "$TMPD/$L.pscript" | head -n 24
	fi
	return 0
}

# res LABEL KEY: a key=value result of ustack_entry.py
res() {
	local l
	while IFS= read -r l; do
		[ "${l%%=*}" = "$2" ] && { echo "${l#*=}"; return 0; }
	done <"$TMPD/$1.res"
	return 1
}

setup
KSTACKS=perf
kernel_ustacks && KSTACKS=userstacktrace
diag "the kernel's user stacks: $KSTACKS"
run entry
while IFS= read -r l; do diag "$l"; done <"$TMPD/entry.res"
ev=$(res entry events)
check_eq "entry: $((2 * N)) getppid events traced" "$ev" $((2 * N))
check_eq "entry: each event's stack_id record has a cookie" "$(res entry cookies)" "$ev"
check_eq "entry: one cookie per event (one kernel entry each)" "$(res entry distinct)" "$ev"
check_eq "entry: every event has both stacks (ours, the kernel's: $KSTACKS)" \
	"$(res entry compared)" "$ev"
check "entry: frames compared ($(res entry frames))" [ "$(res entry frames)" -ge $((3 * ev)) ]
check_eq "entry: our user stack equals the kernel's, event by event" "$(res entry mismatch)" 0
check_eq "entry: each stack names its own caller (a, b, a, b...)" "$(res entry caller_wrong)" 0

# A walk that cannot be queued: the entry is failed, counted, and the next
# entries of the task are walked again (not joined to a dead entry).
run failq fail
while IFS= read -r l; do diag "$l"; done <"$TMPD/failq.res"
check_eq "failed queue: the hook was used" \
	"$(</sys/module/ftrace_stackmap/parameters/test_fail_queue_pid)" 0
check_eq "failed queue: counted (user_queue_failed)" \
	"$(stat_get "$TMPD/failq.stat" user_queue_failed)" 1
ev=$(res failq events)
check_eq "failed queue: every later event of the task still gets its user stack" \
	"$(res failq compared)" "$ev"
check_eq "failed queue: and they are right" "$(res failq mismatch)/$(res failq caller_wrong)" 0/0
check_fail "test_fail_queue_pid refuses bad values" \
	eval 'echo -3 > /sys/module/ftrace_stackmap/parameters/test_fail_queue_pid'

teardown

# Unload is never held by a task that asked and then sleeps: its walk stays
# queued until it returns to user space (here: never, before rmmod), and
# rmmod must still succeed at once once the options are off. The work runs
# later, disarmed (it frees itself; KASAN watches).
S=$T/instances/usleep
mkdir "$S"
echo sched:sched_switch >"$S/stack_map_events"
echo 1 >"$S/events/sched/sched_switch/enable"
echo 1 >"$S/options/stackmap"
echo 1 >"$S/options/stackmap_user"
sleep 3600 &
spid=$!
check "sleeper: it sleeps" asleep "$spid"
# state S comes just before its switch: its record, up to 10 s; the
# stack_id_user records before it are those of exec's waits (loading
# from 9p), the sleeper's next record after it the sleep's (its own
# lines only: in the merged trace another CPU's record may come between
# a switch and its id record, whose stamp is the capture's)
check "sleeper: its switch into its sleep is in the trace" \
	switched_asleep "$S/trace" "$spid"
check "sleeper: its sched_switch into the sleep asked for a user stack" \
	eval "grep -E '^ *sleep-$spid ' $S/trace | grep -E -A1 'prev_comm=sleep prev_pid=$spid .*prev_state=S ' | tail -n 1 | grep -E ' stack_id_user: .*cookie=0x[0-9a-f]+' >/dev/null"
echo 0 >"$S/options/stackmap_user"
echo 0 >"$S/options/stackmap"
echo 0 >"$S/events/sched/sched_switch/enable"
rmdir "$S"
t0=$(date +%s%N)
out=$(timeout 20 rmmod ftrace_stackmap 2>&1)
rc=$?
t1=$(date +%s%N)
diag "rmmod with a sleeping task's walk queued: rc=$rc in $(((t1 - t0) / 1000000)) ms: $out"
check_eq "rmmod succeeds while a task that asked sleeps" "$rc" 0
kill "$spid"
wait "$spid" 2>/dev/null
nap 0.5
check "the sleeper ran its disarmed work and exited (no module code, no splat)" \
	eval '! kill -0 $spid 2>/dev/null'
check "load again" load
check "rmmod again" unload
finish
