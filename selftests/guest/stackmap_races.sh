#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_races.sh MODULE.ko - the races of sources through hidden trigger
# data (Documentation/tracing.rst, "Semantics and limits"; review s7):
# - relink: a source's pair taken off and put back with no grace period
#   (options/stackmap 1-0-1, a refused removal of its kprobe event), in a
#   loop, while one task hits the source event as fast as it can. The
#   event also has disable_event triggers (trigger mode without
#   TRIGGER_COND: each hit that reads the flags while the pair is off
#   calls every trigger without a record, the pair's post too, once it is
#   back). A post called that way must never write: no stack of the map
#   goes through event_triggers_call(), and every id record follows its
#   own source record (trig_check.py pairs ... alone). Before the fix, such
#   a post took the verdict a hit left when its own post was skipped by
#   the unlink: an id record written from event_triggers_call(), ahead of
#   its own record.
# - disarmed: kprobes disarmed (debug/kprobes/enabled) while sources are
#   attached, then rmdir of their instance (the kernel's
#   clear_event_triggers() frees the pair's data itself) and removal of a
#   dynamic event that is a source; re-armed, then a filter and a trigger
#   set and cleared elsewhere: nothing warns (the kernel's buffered-event
#   count balanced; run.sh fails on a WARNING in dmesg), the trigger-mode
#   and soft-mode counts of the file are not negative, and a new instance
#   records as before.
# - disarmed walk: stack_id enabled only by an enable_event (or
#   disable_event) trigger of a source event, kprobes disarmed, rmdir: the
#   trigger's free, inside clear_event_triggers(), unregisters stack_id
#   while the kernel's loop points at the source's judge. The pair must
#   stay on the list (inert) for the kernel to take off: no list
#   corruption, no WARNING/BUG, the buffered-event count balanced.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

TC=$TMPD/race_checks
: >"$TC"
tlater() { echo "$*" >>"$TC"; }
KPE=/sys/kernel/debug/kprobes/enabled
[ -e "$KPE" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null


kmsg_mark
load || { echo "Bail out! insmod failed"; exit 1; }
cp /proc/kallsyms "$TMPD/kallsyms"
if kmsg_since | grep -q 'sources are tracepoint probes'; then
	ok "relink and disarm races # SKIP no trigger path in this kernel"
	finish
fi

# --- relink: options/stackmap 1-0-1 and refused removals, in a loop ---
R=$T/instances/sr
mkdir "$R"
echo 0 >"$R/tracing_on"
echo 32768 >"$R/buffer_size_kb"
# full: later records are refused (no id record for them either), never an
# id record left at the start of a buffer without its source record
echo 0 >"$R/options/overwrite"
check "kprobe event fsmrl" eval "echo 'p:fsmrl do_sys_openat2' >>$T/kprobe_events"
RL=$R/events/kprobes/fsmrl
# Trigger mode without TRIGGER_COND: disable_event triggers (no record
# needed, not post triggers) on rarely hit events; many of them make each
# unconditional walk long (the pair sits at the tail).
nt=0
for d in "$R"/events/*/*/; do
	d=${d%/}
	ev=${d##*/}
	sys=${d%/*}
	sys=${sys##*/}
	case $sys in
	kprobes | stackmap | sched | timer | irq | irq_vectors | syscalls | \
		raw_syscalls | kmem | workqueue | rcu | lock | printk | \
		signal | task | ftrace | ipi | tlb | x86_fpu | preemptirq) continue ;;
	esac
	[ -e "$d/enable" ] || continue
	echo "disable_event:$sys:$ev" >>"$RL/trigger" 2>/dev/null || continue
	nt=$((nt + 1))
	[ $nt -ge 40 ] && break
done
check "disable_event triggers on fsmrl ($nt)" test "$nt" -gt 0
echo kprobes:fsmrl >"$R/stack_map_events"
echo 1 >"$RL/enable"
echo 1 >"$R/options/stackmap"
echo >"$R/trace"
echo 1 >"$R/tracing_on"
: >"$TMPD/run"
# one task, many hits, pinned to the last CPU
gcc -O1 -o "$TMPD/races_open" "$HERE/prog/races_open.c" || nok "gcc races_open.c"
"$TMPD/races_open" "$TMPD/run" >"$TMPD/opens" &
wl=$!
nap 0.2
refused=0
for ((i = 0; i < ${RACE_LOOPS:-1000}; i++)); do
	echo 0 >"$R/options/stackmap"
	echo 1 >"$R/options/stackmap"
	echo '-:fsmrl' >>"$T/kprobe_events" 2>/dev/null || refused=$((refused + 1))
done
rm -f "$TMPD/run"
wait "$wl"
echo 0 >"$R/tracing_on"
check_eq "every removal of the enabled fsmrl was refused" "$refused" "${RACE_LOOPS:-1000}"
save_cpus "$R" sr
recs=$(srcstat "$R" kprobes:fsmrl records)
diag "$(<"$TMPD/opens") opens"
diag "fsmrl: no_verdict=$(srcstat "$R" kprobes:fsmrl no_verdict) hits=$(srcstat "$R" kprobes:fsmrl hits) records=$recs"
check "relink: id records were written" test "${recs:-0}" -gt 0
sm=$(<"$R/stack_map")
n=$(grep -c event_triggers_call <<<"$sm")
check_eq "relink: no stack of the map through event_triggers_call (a post called without a record wrote)" "$n" 0
[ "$n" = 0 ] || diag "$(grep -m1 -B3 -A3 event_triggers_call <<<"$sm")"
# no source record without an id record is an error here: hits whose pair
# left between the two calls have none (not counted as anything)
tlater "relink pairs $TMPD/sr fsmrl $TMPD/kallsyms alone cut missing=100000000"
echo 0 >"$R/options/stackmap"
echo 0 >"$RL/enable"
while read -r l; do
	case $l in
	disable_event:*) echo "!${l%:*}" >>"$RL/trigger" ;;
	esac
done <<<"$(<"$RL/trigger")"
check "rmdir of the relink instance" rmdir "$R"
check "fsmrl removable" eval "echo '-:fsmrl' >>$T/kprobe_events"

# --- disarmed: instance and dynamic event removed behind the hooks ---
if [ -w "$KPE" ]; then
	check "kprobe event fsmdk" eval "echo 'p:fsmdk do_sys_openat2' >>$T/kprobe_events"
	D=$T/instances/sd
	E=$T/instances/se
	mkdir "$D" "$E"
	echo 'sched:sched_switch kprobes:fsmdk' >"$D/stack_map_events"
	echo kprobes:fsmdk >"$E/stack_map_events"
	echo 1 >"$D/events/sched/sched_switch/enable"
	echo 1 >"$D/options/stackmap"
	echo 1 >"$E/options/stackmap"
	workload 3
	# a filter elsewhere holds the kernel's buffered events (one count)
	echo 'common_pid != 0' >"$T/events/sched/sched_wakeup/filter"
	kmsg_mark
	echo 0 >"$KPE"
	check "disarmed: rmdir of an instance with attached sources" rmdir "$D"
	check "disarmed: the kernel took the pairs off itself (dmesg)" \
		eval "kmsg_since | grep -q 'taken off its event by the kernel'"
	check "disarmed: removal of kprobe event fsmdk (a source of se)" \
		eval "echo '-:fsmdk' >>$T/kprobe_events"
	echo 1 >"$KPE"
	# the buffered events' count: each clear and set below moves it
	check "re-armed: filter cleared elsewhere" \
		eval "echo 0 >$T/events/sched/sched_wakeup/filter"
	check "re-armed: filter set and cleared elsewhere" \
		eval "echo 'common_pid != 0' >$T/events/sched/sched_waking/filter && echo 0 >$T/events/sched/sched_waking/filter"
	check "re-armed: a trigger set and removed elsewhere" \
		eval "echo traceon >$T/events/sched/sched_waking/trigger && echo '!traceon' >>$T/events/sched/sched_waking/trigger"
	check_eq "re-armed: no WARNING in dmesg" \
		"$(kmsg_since | grep -c 'WARNING:')" 0
	echo 0 >"$E/options/stackmap"
	echo 1 >"$E/options/stackmap"
	check "... the source of the removed event is dropped" wait_gone "$E" fsmdk
	check "rmdir of se" rmdir "$E"
	# a new instance records as before
	N=$T/instances/sn
	mkdir "$N"
	echo 0 >"$N/tracing_on"
	echo 1 >"$N/options/sym-offset"
	echo stacktrace >"$N/events/sched/sched_switch/trigger"
	echo sched:sched_switch >"$N/stack_map_events"
	echo 1 >"$N/events/sched/sched_switch/enable"
	echo 1 >"$N/options/stackmap"
	echo >"$N/trace"
	echo 1 >"$N/tracing_on"
	workload 5
	echo 0 >"$N/tracing_on"
	save_cpus "$N" sn
	tlater "after pairs $TMPD/sn sched_switch $TMPD/kallsyms stacktrace cut"
	echo '!stacktrace' >>"$N/events/sched/sched_switch/trigger"
	check "rmdir of sn" rmdir "$N"
else
	nok "no writable $KPE"
fi

# --- disarmed, a walk: stack_id registered by enable_event/disable_event ---
# (soft-disabled) as the only other trigger of the source event A: A's
# list is [E, judge, post]. With kprobes disarmed, rmdir: the kernel's
# clear_event_triggers() frees E, whose free disables stack_id (its
# UNREGISTER detaches the sources) while the same loop holds a pointer to
# our judge. Before the fix the detach took the pair off there: list_del
# corruption (stock: BUG in rmdir; debug: WARNING) and one count of
# buffered events given back twice.
if [ -w "$KPE" ]; then
	# enable_event with a filter that never matches: once it fires,
	# stack_id is no longer soft-disabled and the rmdir unregisters it
	# only after clear_event_triggers() (no walk then)
	for cmd in 'enable_event if common_pid < 0' disable_event; do
		W=$T/instances/sw
		mkdir "$W"
		echo sched:sched_switch >"$W/stack_map_events"
		echo 1 >"$W/events/sched/sched_switch/enable"
		echo "${cmd%% *}:stackmap:stack_id${cmd#"${cmd%% *}"}" \
			>"$W/events/sched/sched_switch/trigger"
		cmd=${cmd%% *}
		workload 3
		h=$(srcstat "$W" sched:sched_switch hits)
		f=$(srcstat "$W" sched:sched_switch filtered)
		check "$cmd: the pair is called (hits=$h filtered=$f)" \
			test $((${h:-0} + ${f:-0})) -gt 0
		kmsg_mark
		echo 0 >"$KPE"
		check "$cmd: disarmed: rmdir (the trigger's free disables stack_id)" rmdir "$W"
		echo 1 >"$KPE"
		check_eq "$cmd: no list corruption (dmesg)" \
			"$(kmsg_since | grep -c 'list_del corruption')" 0
		check "$cmd: re-armed: filter set and cleared elsewhere" \
			eval "echo 'common_pid != 0' >$T/events/sched/sched_waking/filter && echo 0 >$T/events/sched/sched_waking/filter"
		check_eq "$cmd: no WARNING nor BUG in dmesg" \
			"$(kmsg_since | grep -Ec 'WARNING:|BUG:')" 0
	done
else
	nok "no writable $KPE"
fi

# --- the same detach outside a walk: the trigger removed by hand ---
# (kprobes armed): the pairs are left inert, the work takes them off;
# recording again through options/stackmap calls the pair again
W=$T/instances/sq
mkdir "$W"
echo sched:sched_switch >"$W/stack_map_events"
echo 1 >"$W/events/sched/sched_switch/enable"
echo disable_event:stackmap:stack_id >"$W/events/sched/sched_switch/trigger"
workload 2
echo '!disable_event:stackmap:stack_id' >>"$W/events/sched/sched_switch/trigger"
nap 0.2
h0=$(srcstat "$W" sched:sched_switch hits)
workload 3
h1=$(srcstat "$W" sched:sched_switch hits)
check "quiesced: the pair had been called (hits=$h0)" test "${h0:-0}" -gt 0
check_eq "quiesced: the pair counts nothing after stack_id's unregister" "$h1" "$h0"
echo 1 >"$W/options/stackmap"
workload 3
h2=$(srcstat "$W" sched:sched_switch hits)
r2=$(srcstat "$W" sched:sched_switch records)
check "recording again: the pair writes id records (hits=$h2 records=$r2)" \
	test "${r2:-0}" -gt 0 -a "${h2:-0}" -gt "${h1:-0}"
echo 0 >"$W/options/stackmap"
check_eq "the trigger file reads as without the source" \
	"$(grep -vc '^#' "$W/events/sched/sched_switch/trigger")" 0
check "rmdir of sq" rmdir "$W"
check "rmmod" unload
check_eq "no WARNING in dmesg" "$(kmsg_since | grep -c 'WARNING:')" 0

diag "running the saved checks (python)"
trig_checks "$TC"
finish
