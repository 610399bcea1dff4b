#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_ftracetest.sh MODULE.ko - peer suite: the kernel's own ftracetest
# (tools/testing/selftests/ftrace of linux-source-6.1) gives the same result
# per test case with the module loaded as without it.
#
#   FSM_FTRACETEST      ftracetest directory (default: the unpacked
#                       linux-source-6.1 under /root/ref or /usr/src)
#   FSM_FTRACETEST_SET  test.d subdirectories or .tc files to run, separated
#                       by spaces or commas (default:
#                       the cases of the areas the module touches: event
#                       enabling (also all events at once, which enables
#                       ours), instances, filters, the triggers that
#                       soft-disable or act on events. Left out for time
#                       under TCG (each case runs twice): the hist and
#                       inter-event triggers, set_event_pid, trace_printk,
#                       and 00basic, whose tracer loop patches every
#                       function)
# shellcheck disable=SC2016,SC2317 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

FT=${FSM_FTRACETEST:-}
if [ -z "$FT" ]; then
	for d in /root/ref/linux-source-6.1 /usr/src/linux-source-6.1; do
		[ -x "$d/tools/testing/selftests/ftrace/ftracetest" ] &&
			FT=$d/tools/testing/selftests/ftrace && break
	done
fi
if [ -z "$FT" ] || [ ! -x "$FT/ftracetest" ]; then
	echo "ok 1 - # SKIP ftracetest not found (set FSM_FTRACETEST)"
	echo "1..1"
	exit 0
fi
DEFSET="test.d/event/event-enable.tc test.d/event/subsystem-enable.tc
test.d/event/toplevel-enable.tc test.d/instances/instance.tc
test.d/instances/instance-event.tc test.d/filter/event-filter-incomplete.tc
test.d/trigger/trigger-eventonoff.tc test.d/trigger/trigger-filter.tc
test.d/trigger/trigger-stacktrace.tc test.d/trigger/trigger-traceonoff.tc
test.d/trigger/trigger-snapshot.tc"
SET=${FSM_FTRACETEST_SET:-$DEFSET}
SET=${SET//,/ }	# commas too (scripts/check passes it as one word)

# run LABEL: run the set, one ftracetest per entry (its time in a diag
# line), leave "RESULT test-name" lines in $TMPD/LABEL
run() {
	local t t0
	: >"$TMPD/out.$1"
	for t in $SET; do
		tracing_clean
		t0=$(date +%s)
		(cd "$FT" && ./ftracetest -l "$TMPD/log.$1.${t##*/}" "$FT/$t") >>"$TMPD/out.$1" 2>&1
		diag "$1: $t: $(($(date +%s) - t0))s"
	done
	# "[12] Basic trace file check	[PASS]"
	sed -n 's/^\[[0-9]*\] \(.*\)[[:space:]]\[\([A-Z]*\)\]$/\2 \1/p' "$TMPD/out.$1" |
		sed 's/[[:space:]]*$//' | sort >"$TMPD/$1"
	tracing_clean
}

run without
n=$(lines "$TMPD/without")
check "ftracetest ran without the module ($n cases)" test "$n" -gt 0
while IFS= read -r l; do diag "without: $l"; done < <(grep -v '^PASS ' "$TMPD/without")

check "insmod events=sched:sched_switch" load bits=12 events=sched:sched_switch
mkdir "$T/instances/peer"
run with
check "module still loaded after the suite" is_loaded
while IFS= read -r l; do diag "with: $l"; done < <(grep -v '^PASS ' "$TMPD/with")
if cmp -s "$TMPD/without" "$TMPD/with"; then
	ok "ftracetest: same result for every case with the module loaded"
else
	nok "ftracetest: same result for every case with the module loaded"
	diff "$TMPD/without" "$TMPD/with" | sed 's/^/# /'
fi
check "top level nodes survived the suite" test -f "$T/stack_map"
rmdir "$T/instances/peer" 2>/dev/null
check "rmmod" unload
finish
