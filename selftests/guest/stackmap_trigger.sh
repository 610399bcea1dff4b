#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_trigger.sh MODULE.ko - the stackmap event trigger (issue 9 item 3):
# add/remove/listing as stacktrace, bad input, "echo > trigger", the stack of
# every hit equal to the kernel's own stacktrace trigger on the same event
# (tracepoint, syscall and kprobe events, several instances at once), "if",
# ":N", ":user", rmdir of an instance with triggers, a kprobe event with a
# trigger (EBUSY, the kernel's rule), rmmod with triggers in two instances.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

TC=$TMPD/trig_checks
: >"$TC"
tlater() { echo "$*" >>"$TC"; }

# first line of a file
first() { local a; a=$(<"$1"); echo "${a%%$'\n'*}"; }

SW=events/sched/sched_switch
OPEN=events/syscalls/sys_enter_openat
KP=events/kprobes/fsmkp

load || { echo "Bail out! insmod failed"; exit 1; }
check "stackmap is an available trigger" has "$T/$SW/trigger" " stackmap"

# --- add, list, remove (top level) ---
echo stackmap >"$T/$SW/trigger"
check_eq "listed as stackmap:unlimited" "$(first "$T/$SW/trigger")" "stackmap:unlimited"
check_eq "sched_switch soft-enabled by the trigger" "$(<"$T/$SW/enable")" "0*"
echo '!stackmap' >>"$T/$SW/trigger"
check "removed" has "$T/$SW/trigger" "# Available triggers"
check_eq "soft mode undone" "$(<"$T/$SW/enable")" "0"

# --- listing shape equals stacktrace's ---
echo 'stacktrace:5 if prev_pid == 1' >"$T/$SW/trigger"
st=$(first "$T/$SW/trigger")
echo '!stacktrace' >>"$T/$SW/trigger"
echo 'stackmap:5 if prev_pid == 1' >"$T/$SW/trigger"
check_eq "count and filter listed as stacktrace lists them" \
	"$(first "$T/$SW/trigger")" "${st/stacktrace/stackmap}"
check_fail "a second stackmap trigger on one event: EEXIST" \
	eval "echo stackmap >>$T/$SW/trigger"

# --- echo > trigger (O_TRUNC): unreg_all of each command; stacktrace has none ---
echo stacktrace >>"$T/$SW/trigger"
: >"$T/$SW/trigger"	# O_TRUNC, no write
t=$(<"$T/$SW/trigger")
kept=0
[[ $t == *"stackmap:count=5"* && $t == *"stacktrace:unlimited"* ]] && kept=1
check_eq "O_TRUNC keeps stacktrace and stackmap (no unreg_all, the kernel's rule)" \
	"$kept" 1
echo '!stackmap' >>"$T/$SW/trigger"
echo '!stacktrace' >>"$T/$SW/trigger"

# --- bad input: -EINVAL and one dmesg line ---
kmsg_mark
check_fail "stackmap:bogus refused" eval "echo stackmap:bogus >>$T/$SW/trigger"
check_eq "one dmesg line for stackmap:bogus" "$(kmsg_since | count_ours)" 1
kmsg_mark
check_fail "no stackmap trigger on stackmap:stack_id" \
	eval "echo stackmap >>$T/events/stackmap/stack_id/trigger"
check_eq "one dmesg line for it" "$(kmsg_since | count_ours)" 1
kmsg_mark
check_fail "stackmap:user without options/stackmap_user refused" \
	eval "echo stackmap:user >>$T/$SW/trigger"
check_eq "one dmesg line for it" "$(kmsg_since | count_ours)" 1
check "nothing left behind" has "$T/$SW/trigger" "# Available triggers"

# --- the stacks equal stacktrace's: three event kinds, two instances ---
echo 'p:fsmkp do_sys_openat2' >>"$T/kprobe_events" || diag "no kprobe event"
mkdir "$T/instances/ta" "$T/instances/tb"
for i in ta tb; do
	echo 1 >"$T/instances/$i/options/sym-offset"
	echo 8192 >"$T/instances/$i/buffer_size_kb"
done
A=$T/instances/ta
B=$T/instances/tb
# Set up with tracing off: a trigger on an event that is not enabled yet
# fires without the event's record (soft mode, the kernel's rule for every
# trigger), which would leave an id record that belongs to no record.
echo 0 >"$A/tracing_on"
echo 0 >"$B/tracing_on"
for e in $SW $OPEN; do
	echo stacktrace >"$A/$e/trigger"
	echo stackmap >>"$A/$e/trigger"
	echo 1 >"$A/$e/enable"
done
echo stackmap >"$B/$KP/trigger"
echo stacktrace >>"$B/$KP/trigger"
echo 1 >"$B/$KP/enable"
# a filter in the same instance, another event kind: sched_wakeup
echo 'stackmap if comm == "bash"' >"$B/events/sched/sched_wakeup/trigger"
echo 1 >"$B/events/sched/sched_wakeup/enable"
echo >"$A/trace"
echo >"$B/trace"
echo 1 >"$A/tracing_on"
echo 1 >"$B/tracing_on"
workload 20
echo 0 >"$A/tracing_on"
echo 0 >"$B/tracing_on"
cp /proc/kallsyms "$TMPD/kallsyms"
for i in ta tb; do
	mkdir "$TMPD/$i"
	for c in "$T/instances/$i"/per_cpu/cpu*; do
		cp "$c/trace" "$TMPD/$i/${c##*/}"
	done
done
tlater "tp pairs $TMPD/ta sched_switch $TMPD/kallsyms stacktrace"
tlater "sys pairs $TMPD/ta sys_openat $TMPD/kallsyms stacktrace"
tlater "kprobe pairs $TMPD/tb fsmkp $TMPD/kallsyms stacktrace"
tlater "if pairs $TMPD/tb sched_wakeup $TMPD/kallsyms filter=comm=bash"

# a kprobe event with a trigger cannot be removed (EBUSY, as with stacktrace)
echo '!stacktrace' >>"$B/$KP/trigger"
echo 0 >"$B/$KP/enable"
check_fail "kprobe event with a stackmap trigger: removal refused" \
	eval "echo '-:fsmkp' >>$T/kprobe_events"
echo '!stackmap' >>"$B/$KP/trigger"
check "kprobe event removable once the trigger is gone" \
	eval "echo '-:fsmkp' >>$T/kprobe_events"

# --- :N gives exactly N records ---
mkdir "$T/instances/tc"
C=$T/instances/tc
echo 'stackmap:3' >"$C/$SW/trigger"
echo 1 >"$C/$SW/enable"
workload 10
echo 0 >"$C/tracing_on"
check_eq ":3 counted down" "$(first "$C/$SW/trigger")" "stackmap:count=0"
mkdir "$TMPD/tc"
for c in "$C"/per_cpu/cpu*; do cp "$c/trace" "$TMPD/tc/${c##*/}"; done
tlater "count count $TMPD/tc sched_switch 3"

# --- stackmap:user: stack_id_user records with cookies, user stacks follow ---
mkdir "$T/instances/tu"
U=$T/instances/tu
wait_for "$U/options/stackmap_user" || diag "no options/stackmap_user in tu"
echo 1 >"$U/options/stackmap_user"
echo 0 >"$U/tracing_on"
echo 'stackmap:user' >"$U/$OPEN/trigger"
check_eq "listed as stackmap:user:unlimited" "$(first "$U/$OPEN/trigger")" \
	"stackmap:user:unlimited"
echo 1 >"$U/$OPEN/enable"
echo >"$U/trace"
echo 1 >"$U/tracing_on"
workload 10
echo 0 >"$U/tracing_on"
mkdir "$TMPD/tu"
for c in "$U"/per_cpu/cpu*; do cp "$c/trace" "$TMPD/tu/${c##*/}"; done
tlater "user pairs $TMPD/tu sys_openat $TMPD/kallsyms user"
check "user_stack records written" has "$U/trace" "user_stack:"

# --- rmdir of instances with triggers set ---
check "rmdir of an instance with triggers" rmdir "$A"
check "rmdir of another" rmdir "$U"
check "and another" rmdir "$C"

# --- rmmod with triggers in two instances (top level and tb) ---
echo 'stackmap:7 if prev_pid > 0' >"$T/$SW/trigger"
echo stackmap >"$B/$OPEN/trigger"
check "rmmod with triggers set in two instances" unload
check "top-level trigger removed by rmmod" has "$T/$SW/trigger" "# Available triggers"
check "tb trigger removed by rmmod" has "$B/$OPEN/trigger" "# Available triggers"
check_eq "soft mode undone by rmmod" "$(<"$T/$SW/enable")" "0"
check "stackmap no longer an available trigger" \
	eval "! has $T/$SW/trigger ' stackmap'"
check "reload" load
echo stackmap >"$T/$SW/trigger"
check_eq "trigger works after a reload" "$(first "$T/$SW/trigger")" "stackmap:unlimited"
echo '!stackmap' >>"$T/$SW/trigger"
rmdir "$B"

if [ -s "$TC" ]; then
	$PY -S "$HERE/trig_check.py" <"$TC" >"$TMPD/tc.out" 2>&1
	rc=$?
	bad=0
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "${l#ok - }" ;;
		"not ok - "*) nok "${l#not ok - }"; bad=1 ;;
		*) echo "# $l" ;;
		esac
	done <"$TMPD/tc.out"
	[ "$rc" = 0 ] || [ $bad = 1 ] || nok "trig_check.py exited with $rc"
fi
finish
