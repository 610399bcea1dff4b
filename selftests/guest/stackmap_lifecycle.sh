#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_lifecycle.sh MODULE.ko - instances and modules that come and go
# (issue 8, items 9, 10, 12 and 13):
#  - nodes exist when mkdir returns: "mkdir instances/x && echo ... >
#    instances/x/stack_map_events" succeeds at once, 200 times in a row;
#  - loading the module never makes mkdir/rmdir of instances fail: mkdir and
#    rmdir cycles while other instances record, with events='*' (the
#    defaults of every new instance: about 2,000 source events resolved);
#  - instance ids are reused: after 1,000 instances were created and removed
#    a new one gets an id below 63 and user stacks work there; an id is not
#    reused while a sleeping task's user-stack walk for its old instance is
#    pending, and is once the task returned; with no id below 63 free an
#    instance records kernel stacks and refuses user stacks (a line, a
#    counter);
#  - rmmod of ftrace_stackmap racing with the unload of a module that owns
#    a source event (fsm_tp_test.ko, next to MODULE.ko) ends cleanly (a
#    KASAN or WARN report fails the run, see run.sh).
# Loop sizes (environment): FSM_LC_NODES (40) mkdir && echo rounds,
# FSM_LC_CYCLES (60) mkdir/rmdir cycles while
# recording, FSM_LC_REUSE (100; 70 on the debug kernel) instances before
# the user-stack check (more than the 63 user-stack ids: only reuse gives
# the last one an id), FSM_LC_RACES (5) unload races, FSM_LC_MKRACE (20)
# mkdir rounds with events='*' racing the sync work, FSM_LC_DBG (20) rounds of
# rmdir X; mkdir X in debugfs mode, FSM_LC_COMING (5) loads of fsm_tp_test
# whose init fails; FSM_LC_PARTS the parts to run, in order (nodes mkrace
# debugfs cycles reuse quarantine noid races coming). Under TCG a
# stock-kernel instance (about 2,000 event directories) costs more than a
# second to make and remove, so make check runs these sizes (the debug
# kernels, debug, arm64-debug and trixie-debug: 10, 5, 5 and 5 for NODES,
# MKRACE, DBG and CYCLES, and no part reuse: part noid checks a reused id;
# no part noid either on those); the sizes of
# issue 8 (FSM_LC_NODES=200 FSM_LC_CYCLES=500 FSM_LC_REUSE=1000
# FSM_LC_RACES=20) take about 40 minutes on the stock guest.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

TPKO=$(dirname "$KO")/fsm_tp_test.ko
NODES=${FSM_LC_NODES:-40}
MKRACE=${FSM_LC_MKRACE:-20}
DBG=${FSM_LC_DBG:-20}
CYCLES=${FSM_LC_CYCLES:-60}
REUSE=${FSM_LC_REUSE:-100}
# FSM_LC_QUICK=1 (the default on the debug kernels, every *-debug;
# scripts/check sets it for the stock guest, for its time budget): every
# part but reuse, each a few times.
case ${FSM_VM_KERNEL:-} in debug | *-debug) FSM_LC_QUICK=${FSM_LC_QUICK:-1} ;; esac
if [ "${FSM_LC_QUICK:-0}" = 1 ]; then
	# KASAN and lockdep make an instance cost about 4 s under TCG (with
	# events='*' defaults, 9 s a cycle): measured per part, 2026-11-22,
	# nodes 40 = 150 s, cycles 15 = 138 s, reuse 70 = 278 s. The debug
	# guest runs every path a few times; the counts are the stock guest's.
	NODES=${FSM_LC_NODES:-10}
	MKRACE=${FSM_LC_MKRACE:-5}
	DBG=${FSM_LC_DBG:-5}
	CYCLES=${FSM_LC_CYCLES:-5}
	REUSE=${FSM_LC_REUSE:-70}
	# Part reuse (70 instances made and removed, 257 s there) is left out:
	# part noid makes 63 live ones, and after their removal the next
	# instance gets a reused id and user stacks (reused_id_works), the
	# same check after 63 instead of 70 (FSM_LC_QUICK=0 runs both).
	PARTS=${FSM_LC_PARTS:-nodes mkrace debugfs cycles quarantine noid races coming}
	# On the debug kernels part noid is left out too: its 63 instances
	# cost 415 s there (2026-11-23, 6.5 s per instance made and removed),
	# 60% of the suite, for an id bitmap's exhaustion whose code runs the
	# same on every kernel (make check runs it on Debian's 6.1 x86
	# kernel, the stock job). The debug kernel still sees ids freed and reused (part
	# quarantine: the removed instance's id is reused once its pending
	# walk ran) and every instance made and removed under KASAN.
	case ${FSM_VM_KERNEL:-} in
	debug | *-debug)
		PARTS=${FSM_LC_PARTS:-nodes mkrace debugfs cycles quarantine races coming} ;;
	esac
fi
# progress lines in the kernel log: seen live on the console
progress() { echo "stackmap_lifecycle: $*" >/dev/kmsg; }

# --- 13: the nodes exist when mkdir returns --------------------------------
part_nodes() {
	tracing_clean
	check "load" load
	fails=0
	for ((i = 0; i < NODES; i++)); do
		((i % 50)) || progress "mkdir && echo: round $i of $NODES"
		d=$T/instances/ln$i
		if ! { mkdir "$d" && echo sched:sched_switch >"$d/stack_map_events"; } 2>>"$TMPD/ln.err"; then
			fails=$((fails + 1))
		elif [ "$(<"$d/stack_map_events")" != sched:sched_switch ]; then
			fails=$((fails + 1))
		fi
		rmdir "$d" 2>>"$TMPD/ln.err" || fails=$((fails + 1))
	done
	check_eq "mkdir && echo sched:sched_switch > stack_map_events, $NODES times: failures" "$fails" 0
	[ -s "$TMPD/ln.err" ] && diag "first errors: $(head -c 300 "$TMPD/ln.err")"
	d=$T/instances/opt
	mkdir "$d"
	check "a new instance's options/stackmap_user exists at once" test -e "$d/options/stackmap_user"
	check "and options/stackmap can be set at once" eval "echo 1 > $d/options/stackmap"
	rmdir "$d"
	check "unload" unload
}

# --- 13 (review lc4, findings 1 and 2): with events='*' a mkdir lasts more
# than a second and the sync work (kicked by the mkdir's first fsnotify
# event, then polling every 100 ms) may learn the instance while it is half
# made. The nodes and all the defaults must still be there when mkdir
# returns: no instance left without nodes (1), no mkdir returning while the
# work still resolves the defaults (2).
part_mkrace() {
	local rounds=$MKRACE nonodes=0 nodflt=0 n
	tracing_clean
	check "load events='*'" load "events=*"
	for ((i = 0; i < rounds; i++)); do
		((i % 5)) || progress "mkdir races with the sync work: round $i of $rounds"
		d=$T/instances/mr$i
		mkdir "$d" || { nonodes=$((nonodes + 1)); continue; }
		if ! { test -e "$d/options/stackmap_user" && test -e "$d/stack_map_stat"; }; then
			nonodes=$((nonodes + 1))
		else
			n=$(stat_get "$d/stack_map_stat" sources)
			[ "${n:-0}" -gt 100 ] || { nodflt=$((nodflt + 1)); diag "round $i: sources=$n"; }
		fi
		rmdir "$d"
	done
	check_eq "$rounds mkdir with events='*': instances without nodes when mkdir returned" "$nonodes" 0
	check_eq "$rounds mkdir with events='*': instances without all the defaults when mkdir returned" "$nodflt" 0
	# The setup of a new instance (events='*': ~2,000 events) runs outside
	# fsnotify's SRCU read side: closing an inotify file (its mark's release
	# waits for a grace period of that SRCU) returns while the defaults of
	# an instance being made are still being resolved, not after them.
	local out
	# the setup made long on purpose: 3 s between the nodes and the defaults
	echo 3000 >/sys/module/ftrace_stackmap/parameters/test_setup_delay_ms
	out=$(python3 - "$T/instances/srcu" <<'PY'
import ctypes, os, subprocess, sys, time
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
if fd < 0 or libc.inotify_add_watch(fd, b"/tmp", 0x100) < 0:   # IN_CREATE
    print("inotify failed")
    sys.exit(0)
node = os.path.join(d, "stack_map_events")
p = subprocess.Popen(["mkdir", d])
# the setup is under way once the nodes exist (they come before the defaults)
while not os.path.exists(node) and p.poll() is None:
    time.sleep(0.001)
if p.poll() is not None:
    print("mkdir done before its nodes were seen")
    sys.exit(0)
t0 = time.monotonic()
os.close(fd)
t1 = time.monotonic()
during = open(node).read()
p.wait()
t2 = time.monotonic()
after = open(node).read()
print("sources when close returned: %d, when mkdir returned: %d "
      "(close %.3f s, mkdir %.3f s after it)"
      % (len(during.split()), len(after.split()), t1 - t0, t2 - t1))
PY
)
	echo 0 >/sys/module/ftrace_stackmap/parameters/test_setup_delay_ms
	diag "srcu: $out"
	case $out in
	"sources when close returned: 0, when mkdir returned: "[1-9]*)
		ok "an inotify close does not wait for the setup of an instance being made" ;;
	"sources when close returned: "*)
		nok "an inotify close does not wait for the setup of an instance being made" ;;
	*)
		ok "an inotify close does not wait for the setup of an instance being made # SKIP $out" ;;
	esac
	rmdir "$T/instances/srcu"
	tracing_clean
	check "unload" unload
}

# --- 13 (review lc4, finding 3): debugfs mode, rmdir X; mkdir X: the new X
# has its nodes at once (the old X's debugfs directory must not be in the
# way)
part_debugfs() {
	local D=/sys/kernel/debug/ftrace_stackmap rounds=$DBG fails=0
	[ -d /sys/kernel/debug/tracing ] || mount -t debugfs none /sys/kernel/debug
	tracing_clean
	check "load force_debugfs=1" load force_debugfs=1
	mkdir "$T/instances/dx"
	for ((i = 0; i < rounds; i++)); do
		rmdir "$T/instances/dx" && mkdir "$T/instances/dx" || { fails=$((fails + 1)); continue; }
		test -e "$D/instances/dx/stack_map" && test -e "$D/instances/dx/options/stackmap_user" ||
			fails=$((fails + 1))
	done
	check_eq "debugfs mode: rmdir X; mkdir X, $rounds times: X without nodes" "$fails" 0
	rmdir "$T/instances/dx"
	check "unload" unload
}

# --- 9: mkdir/rmdir never fail because of the module -----------------------
# recording instances: stack ids of sched_switch, a workload in background
part_cycles() {
	recorder() {
		local d=$T/instances/$1
		mkdir "$d" || return 1
		echo sched:sched_switch >"$d/stack_map_events" || return 1
		echo 1 >"$d/events/sched/sched_switch/enable" || return 1
		echo 1 >"$d/options/stackmap"
	}
	check "load events='*'" load "events=*"
	check "recording instance rec1" recorder rec1
	check "recording instance rec2" recorder rec2
	workload 100000 &
	wl=$!
	mk=0
	rm=0
	for ((i = 0; i < CYCLES; i++)); do
		((i % 25)) || progress "mkdir/rmdir while recording: cycle $i of $CYCLES"
		mkdir "$T/instances/cyc" 2>>"$TMPD/cyc.err" || mk=$((mk + 1))
		rmdir "$T/instances/cyc" 2>>"$TMPD/cyc.err" || rm=$((rm + 1))
	done
	diag "$CYCLES mkdir/rmdir cycles while rec1 and rec2 record"
	check_eq "mkdir failures" "$mk" 0
	check_eq "rmdir failures (EBUSY: a reference held by the module)" "$rm" 0
	[ -s "$TMPD/cyc.err" ] && diag "first errors: $(head -c 300 "$TMPD/cyc.err")"
	# the defaults of a new instance are installed before mkdir returns: every
	# event is a source
	mkdir "$T/instances/dflt"
	check "a new instance has the events='*' defaults when mkdir returns" \
		test "$(stat_get "$T/instances/dflt/stack_map_stat" sources)" -gt 100
	check "rmdir of it" rmdir "$T/instances/dflt"
	check "rec1 recorded stack ids meanwhile" \
		test "$(stat_get "$T/instances/rec1/stack_map_stat" records)" -gt 0
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	tracing_clean
	check "unload" unload
}

# --- 10: ids are reused: user stacks after 1,000 instances ------------------
part_reuse() {
	check "load" load
	fails=0
	for ((i = 0; i < REUSE; i++)); do
		((i % 100)) || progress "id reuse: instance $i of $REUSE"
		{ mkdir "$T/instances/many" && rmdir "$T/instances/many"; } 2>/dev/null ||
			fails=$((fails + 1))
	done
	check_eq "$REUSE mkdir/rmdir cycles: failures" "$fails" 0
	reused_id_works "instance made after $REUSE others"
	tracing_clean
	check "unload" unload
}

# reused_id_works LABEL: a new instance gets an id below 63 (the caller
# used them all before), another live one a different id, and user stacks
# work in the first. Removed instances are reaped (their ids retired, then
# given back at the next mkdir) by the module's sync work: up to 30 s.
reused_id_works() {
	local i
	U=$T/instances/ust
	for ((i = 0; i < 60; i++)); do
		mkdir "$U"
		id=$(stat_get "$U/stack_map_stat" inst_id)
		[ "${id:-99}" -lt 63 ] && break
		rmdir "$U"
		nap 0.5
	done
	check "$1: inst_id ($id) below 63 (after $i retries)" test "${id:-99}" -lt 63
	mkdir "$T/instances/ust2"
	id2=$(stat_get "$T/instances/ust2/stack_map_stat" inst_id)
	check "two live instances: different ids ($id, $id2)" test "$id" != "$id2"
	rmdir "$T/instances/ust2"
	echo raw_syscalls:sys_enter >"$U/stack_map_events"
	echo 1 >"$U/events/raw_syscalls/sys_enter/enable"
	check "options/stackmap" eval "echo 1 > $U/options/stackmap"
	check "options/stackmap_user" eval "echo 1 > $U/options/stackmap_user"
	for ((i = 0; i < 20; i++)); do
		/bin/true
		read -r _ </proc/self/stat
	done
	echo 0 >"$U/options/stackmap_user"
	echo 0 >"$U/options/stackmap"
	n=$(stat_get "$U/stack_map_stat" user_stacks)
	check "user stacks delivered there (user_stacks=$n)" test "${n:-0}" -gt 0
	# grep stops at the first match (the whole trace is large under TCG)
	check "user_stack records in its trace" grep -m1 -q "user_stack:" "$U/trace"
	rmdir "$U"
}

# --- 10: an id is not reused while a user stack may still be delivered for
# its old instance: a task that asked (sched_switch) sleeps with its walk
# pending; the instance goes; new instances get other ids until the task
# has returned to user space (its walk delivered to no one), then the id
# is free again. No wait anywhere: rmdir and mkdir return at once.
part_quarantine() {
	check "load" load
	progress "id quarantine"
	Q=$T/instances/quar
	mkdir "$Q"
	qid=$(stat_get "$Q/stack_map_stat" inst_id)
	echo sched:sched_switch >"$Q/stack_map_events"
	echo 1 >"$Q/events/sched/sched_switch/enable"
	echo 1 >"$Q/options/stackmap"
	echo 1 >"$Q/options/stackmap_user"
	sleep 1000 &	# woken by a signal below
	sl=$!
	# it runs, asks from sched_switch, sleeps
	check "the sleeper sleeps" asleep "$sl"
	# state S comes just before its switch: its record, up to 10 s
	check "the sleeper's switch into its sleep is in $Q" \
		switched_asleep "$Q/trace" "$sl"
	queued=$(stat_get "$Q/stack_map_stat" user_walks_queued)
	check "user-stack walks were queued in $Q ($queued)" test "${queued:-0}" -gt 0
	echo 0 >"$Q/options/stackmap_user"
	echo 0 >"$Q/options/stackmap"
	check "rmdir of it while the sleeper's walk is pending" rmdir "$Q"
	nap 0.5		# the instance is reaped and its id retired (sync work)
	mkdir "$T/instances/q2"
	id2=$(stat_get "$T/instances/q2/stack_map_stat" inst_id)
	check "a new instance does not get the id of the removed one ($qid) while its request is pending (got $id2)" \
		test "${id2:-x}" != "$qid"
	check "... and the sleeper is still asleep" test -d "/proc/$sl"
	kill "$sl"
	wait "$sl" 2>/dev/null
	rmdir "$T/instances/q2"
	# Any user task that switched out while Q recorded also holds qid until
	# it returns to user space (the harness's output reader, a daemon):
	# poll, up to 10 s, for the id to come free (review lc4, finding 4).
	for ((i = 0; i < 20; i++)); do
		nap 0.5
		mkdir "$T/instances/q3"
		id3=$(stat_get "$T/instances/q3/stack_map_stat" inst_id)
		rmdir "$T/instances/q3"
		[ "$id3" = "$qid" ] && break
	done
	check_eq "once the sleeper woke (its walk ran, its task ended), the id is reused (after $i retries)" "$id3" "$qid"
	tracing_clean
	check "unload" unload
}

# --- 10: no id below 63 free: kernel stacks only, user stacks refused with a
# line and a counter
part_noid() {
	check "load" load
	progress "no free id"
	kmsg_mark
	for ((i = 1; i <= 63; i++)); do
		mkdir "$T/instances/full$i" || break
	done
	F=$T/instances/full63
	fid=$(stat_get "$F/stack_map_stat" inst_id)
	check "with 63 instances besides the top level, the last one's id is 63 ($fid)" \
		test "${fid:-0}" -ge 63
	check_fail "options/stackmap_user there fails" eval "echo 1 > $F/options/stackmap_user"
	check "... with a dmesg line" eval 'kmsg_since | grep -q "full63: no user stacks: instance id"'
	check "... and a counter" \
		test "$(stat_get "$F/stack_map_stat" user_no_id_refusals_all_instances)" -gt 0
	check_eq "... user_available: 0" "$(stat_get "$F/stack_map_stat" user_available)" 0
	# review lc4, finding 5: reading the option there is no refusal
	c1=$(stat_get "$F/stack_map_stat" user_no_id_refusals_all_instances)
	check_eq "... but reading options/stackmap_user there works and shows 0" \
		"$(cat "$F/options/stackmap_user" 2>&1)" 0
	check "... and grep -r over the instance reads it without error" \
		eval "grep -r . $F/options >/dev/null"
	check_eq "... and the reads count no refusal" \
		"$(stat_get "$F/stack_map_stat" user_no_id_refusals_all_instances)" "$c1"
	echo sched:sched_switch >"$F/stack_map_events"
	echo 1 >"$F/events/sched/sched_switch/enable"
	check "kernel stacks still work there" eval "echo 1 > $F/options/stackmap"
	workload 20
	check "stack ids recorded there" test "$(stat_get "$F/stack_map_stat" records)" -gt 0
	echo 0 >"$F/options/stackmap"
	# every id was taken: the next instance's is a reused one (what part
	# reuse checks after REUSE mkdir/rmdir cycles, here after 63 live)
	tracing_clean
	reused_id_works "instance made after 63 live ones were removed"
	tracing_clean
	check "unload" unload
}

# --- 12: rmmod racing with the unload of a source event's module -----------
part_races() {
	if [ -f "$TPKO" ]; then
		kmsg_mark
		races=${FSM_LC_RACES:-5}
		bad=0
		for ((i = 0; i < races; i++)); do
			progress "unload race $i of $races"
			insmod "$TPKO" || { bad=$((bad + 1)); continue; }
			load events=fsm_tp_test:fsm_tp_ping || { bad=$((bad + 1)); rmmod fsm_tp_test; continue; }
			echo 1 >"$T/events/fsm_tp_test/fsm_tp_ping/enable"
			echo 1 >"$T/options/stackmap"
			nap 0.02
			rmmod fsm_tp_test &
			tp=$!
			for ((j = 0; j < 50; j++)); do
				rmmod ftrace_stackmap 2>/dev/null && break
				nap 0.01
			done
			wait "$tp"
			is_loaded && { echo 0 >"$T/options/stackmap"; unload; }
			grep -q "^fsm_tp_test " /proc/modules && rmmod fsm_tp_test
			echo 0 >"$T/events/enable"
		done
		check_eq "$races unloads of ftrace_stackmap racing with fsm_tp_test's: setup failures" "$bad" 0
		check "both modules gone" eval '! grep -Eq "^(ftrace_stackmap|fsm_tp_test) " /proc/modules'
		n=$(kmsg_since | grep -c "source event fsm_tp_test:fsm_tp_ping dropped")
		diag "sources dropped by the module notifier: $n of $races"
	else
		nok "fsm_tp_test.ko not found next to the module ($TPKO)"
	fi
}

# --- 12 (review lc4, finding 6): a source event, and a stackmap trigger,
# of a module whose init fails. fsm_tp_test fail_init_ms=300: its event exists while the module is
# COMING, writes of it to stack_map_events resolve it (holding a module
# reference) and enter it; then init fails and the kernel frees the module
# whatever its refcount. No source of it may survive (a freed tracepoint),
# and no reference may be put on the freed module (KASAN, see run.sh).
# insmod_running PID: the process exists and has not exited. Exited, it is
# a zombie (state Z or X) until this shell reaps it, then gone: no
# /proc/PID at all (bash reaps a background child when SIGCHLD comes, and
# keeps its status for wait). Gone is a normal answer, "not running": the
# stat file is opened with stderr already sent to /dev/null (the shell
# reports a failed redirection on its stderr as it is then, so the order
# of the two matters). The PID cannot be another process's meanwhile:
# the loop that asks forks nothing.
insmod_running() {
	local st
	read -r _ _ st _ 2>/dev/null <"/proc/$1/stat" || return 1
	[ "$st" != Z ] && [ "$st" != X ]
}

part_coming() {
	local rounds=${FSM_LC_COMING:-5} left=0 ins t0 trig=0
	if [ ! -f "$TPKO" ]; then
		nok "fsm_tp_test.ko not found next to the module ($TPKO)"
		return
	fi
	tracing_clean
	check "load" load
	echo 1 >"$T/options/stackmap"
	for ((i = 0; i < rounds; i++)); do
		progress "source event of a module whose init fails: round $i of $rounds"
		insmod "$TPKO" fail_init_ms=300 2>/dev/null &
		ins=$!
		t0=$SECONDS
		# until insmod has exited: a zombie (exited, not reaped yet by
		# this shell) still has its /proc directory
		while insmod_running "$ins" && ((SECONDS - t0 < 120)); do
			echo fsm_tp_test:fsm_tp_ping >"$T/stack_map_events" 2>/dev/null
			echo sched:sched_switch >"$T/stack_map_events"
			# A stackmap trigger on the event of a module still in
			# init: the kernel would free that module (init failed)
			# with our trigger on its event file, whatever the
			# reference the trigger holds, and rmmod of ours would
			# then walk freed memory. It must be refused.
			if echo stackmap >"$T/events/fsm_tp_test/fsm_tp_ping/trigger" 2>/dev/null; then
				trig=$((trig + 1))
				echo '!stackmap' >"$T/events/fsm_tp_test/fsm_tp_ping/trigger" 2>/dev/null
			fi
		done
		if insmod_running "$ins"; then
			# Seen twice on the debug kernel after the other parts:
			# leave what a hang needs to be understood, then stop.
			nok "round $i: insmod of a failing fsm_tp_test did not return in 120 s"
			diag "insmod: $(grep -E '^(State|voluntary|nonvoluntary)' "/proc/$ins/status" | tr '\n' ' ')"
			diag "insmod wchan: $(cat "/proc/$ins/wchan" 2>/dev/null), stack: $(tr '\n' ' ' <"/proc/$ins/stack" 2>/dev/null)"
			[ -w /proc/sysrq-trigger ] && echo w >/proc/sysrq-trigger
			return
		fi
		wait "$ins" && diag "round $i: insmod fail_init_ms=300 succeeded?"
		echo fsm_tp_test:fsm_tp_ping >"$T/stack_map_events" 2>/dev/null
		has "$T/stack_map_events" fsm_tp_test && left=$((left + 1))
	done
	check_eq "sources of a module whose init failed left after it was freed ($rounds rounds)" "$left" 0
	check_eq "stackmap triggers accepted on the event of a module in init ($rounds rounds)" "$trig" 0
	# Where the kernel has no stackmap trigger (Debian's arm64 kernel: no
	# KALLSYMS_ALL) every write fails without a word of ours.
	if has "$T/events/sched/sched_switch/trigger" " stackmap"; then
		check "  ... refused with a dmesg line (the event existed: the refusal was ours)" eval \
			'dmesg | grep -q "fsm_tp_test:fsm_tp_ping: its module is still loading"'
	else
		ok "  ... refused with a dmesg line # SKIP no stackmap trigger in this kernel"
	fi
	check "fsm_tp_test not loaded" eval '! grep -q "^fsm_tp_test " /proc/modules'
	echo 0 >"$T/options/stackmap"
	tracing_clean
	check "unload" unload
}

# FSM_LC_PARTS: the parts to run, in that order (default: all; on the
# debug kernels all but reuse)
for p in ${PARTS:-${FSM_LC_PARTS:-nodes mkrace debugfs cycles reuse quarantine noid races coming}}; do
	case $p in
	nodes | mkrace | debugfs | cycles | reuse | quarantine | noid | races | coming)
		t0=$SECONDS
		progress "part $p"
		"part_$p"
		diag "part $p: $((SECONDS - t0))s"
		;;
	*) nok "FSM_LC_PARTS: unknown part $p" ;;
	esac
done

finish
