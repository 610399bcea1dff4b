#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_tracecmd.sh MODULE.ko - trace-cmd record -e stackmap
# -e sched:sched_switch (the whole system: trace-cmd saves the format files
# of the events named, and the stack_def records need theirs), then
# trace-cmd report: every record parsed (no parse failure, no unknown event,
# no warning), id records right after their source events, self-contained;
# the same with a -B instance made by trace-cmd (defaults from events=).
# shellcheck disable=SC2016,SC2317 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

if ! command -v trace-cmd >/dev/null; then
	echo "ok 1 - # SKIP trace-cmd not installed"
	echo "1..1"
	exit 0
fi

check "insmod events=sched:sched_switch" load bits=12 events=sched:sched_switch
cd "$TMPD" || exit 1

# The command turns our records off as its last step: trace-cmd's
# tracing_on 0 at the end could otherwise fall between a new stack's
# stack_id and its stack_def (selfcontained would miss that one)
trace-cmd record -q -o top.dat -e stackmap -e sched:sched_switch \
	bash -c 'for i in $(seq 30); do read -t 0.01 <> <(:); done
		echo 0 >"$1/options/stackmap"' sh "$T" >rec.out 2>&1
check "trace-cmd record (top level)" test -s top.dat
trace-cmd report -i top.dat >top.txt 2>top.err
check "trace-cmd report (top level)" test -s top.txt
check "report: no [FAILED TO PARSE]" eval '! has top.txt "FAILED TO PARSE"'
check_eq "report: nothing on stderr" "$(<top.err)" ""
check "report: no unknown event" eval '! grep -qi "unknown" top.txt'
check "report: stack_id records" has top.txt "stack_id: "
check "report: stack_def records" has top.txt "stack_def: "
while IFS= read -r l; do diag "$l"; done < <(grep -m 4 -A1 'sched_switch:' top.txt)
sw=$(<"$T/events/sched/sched_switch/id")
later tc.top tracefmt "$TMPD/top.txt" 10
later tc.top order "$TMPD/top.txt" "sched_switch=$sw"
later tc.top selfcontained "$TMPD/top.txt"

# -B: trace-cmd creates the instance; it gets the events= defaults
trace-cmd record -q -B tcb -o inst.dat -e stackmap -e sched:sched_switch \
	bash -c 'for i in $(seq 30); do read -t 0.01 <> <(:); done' >rec2.out 2>&1
check "trace-cmd record -B (instance)" test -s inst.dat
check "trace-cmd removed its instance (rmdir works while loaded)" test ! -d "$T/instances/tcb"
trace-cmd report -i inst.dat >inst.txt 2>inst.err
check "report -B: no [FAILED TO PARSE]" eval '! has inst.txt "FAILED TO PARSE"'
check_eq "report -B: nothing on stderr" "$(<inst.err)" ""
check "report -B: no unknown event" eval '! grep -qi "unknown" inst.txt'
check "report -B: stack_id records of the instance" \
	eval '[[ $(<inst.txt) =~ stack_id:\ +stack_id=[0-9]+\ gen=1\ index=[0-9]+ ]]'
later tc.inst tracefmt "$TMPD/inst.txt" 10
cd / || exit 1
check "rmmod" unload
finish
