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
#                       under TCG: the hist and
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

# run NAME ENTRY...: each ENTRY (a .tc file or a test.d directory) through
# ftracetest; $TMPD/NAME.ENTRY_KEY: its sorted "RESULT description" lines
key() { local k=${1//\//_}; echo "${k//./_}"; }
run() {
	local name=$1 t t0 k
	shift
	for t in "$@"; do
		tracing_clean
		k=$(key "$t")
		t0=$(date +%s)
		(cd "$FT" && ./ftracetest -l "$TMPD/log.$name.$k" "$FT/$t") >"$TMPD/out.$name.$k" 2>&1
		diag "$name: $t: $(($(date +%s) - t0))s"
		# "[12] Basic trace file check	[PASS]"
		sed -n 's/^\[[0-9]*\] \(.*\)[[:space:]]\[\([A-Z]*\)\]$/\2 \1/p' "$TMPD/out.$name.$k" |
			sed 's/[[:space:]]*$//' | sort >"$TMPD/$name.$k"
	done
	tracing_clean
}

# The module's side first. An entry whose every case passes with the
# module loaded needs no baseline: the module changed nothing there. Only
# the entries with another result (FAIL, UNRESOLVED, UNSUPPORTED, ...) run
# again without the module, and their results must be the same (the
# baseline of every entry ran before: half of each job's time, for
# entries that pass either way).
# shellcheck disable=SC2086 # one entry per word
set -- $SET
check "insmod events=sched:sched_switch" load bits=12 events=sched:sched_switch
mkdir "$T/instances/peer"
run with "$@"
check "module still loaded after the suite" is_loaded
n=0
again=()
for t in "$@"; do
	k=$(key "$t")
	n=$((n + $(lines "$TMPD/with.$k")))
	while IFS= read -r l; do diag "with: $l"; done < <(grep -v '^PASS ' "$TMPD/with.$k")
	grep -qv '^PASS ' "$TMPD/with.$k" && again+=("$t")
	# an entry that ran no case at all is compared too
	[ -s "$TMPD/with.$k" ] || again+=("$t")
done
check "ftracetest ran with the module ($n cases)" test "$n" -gt 0
check "top level nodes survived the suite" test -f "$T/stack_map"
rmdir "$T/instances/peer" 2>/dev/null
check "rmmod" unload
diag "entries run again without the module: ${#again[@]} of $# (${again[*]})"
if [ ${#again[@]} -gt 0 ]; then
	run without "${again[@]}"
fi
bad=0
for t in "${again[@]}"; do
	k=$(key "$t")
	cmp -s "$TMPD/without.$k" "$TMPD/with.$k" && continue
	bad=1
	diag "$t: without (<) and with (>) the module:"
	diff "$TMPD/without.$k" "$TMPD/with.$k" | sed 's/^/# /'
done
if [ $bad = 0 ]; then
	ok "ftracetest: same result for every case with the module loaded"
else
	nok "ftracetest: same result for every case with the module loaded"
fi
finish
