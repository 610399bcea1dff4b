#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo_results.sh MODULE.ko - the demo's steps (scripts/demo-guest.sh, what
# `make demo` runs in the guest) at the smallest size (FSM_DEMO_SCALE=1):
# it ends with "demo: done" and leaves its results in FSM_DEMO_OUT (on the
# host, `make demo` has them in build/demo/ through vm-run --out):
#  - trace.dat, report.txt, out.folded, flame.svg, profile.pb.gz,
#    stacks.fsmb and kallsyms, each non-empty
#  - the commands the demo prints open them: trace-cmd report -i
#    trace.dat, stackmap-report dump stacks.fsmb --kallsyms kallsyms
#  - the folded stacks have the test program's chain
# The module is loaded and unloaded by the demo itself. Not one of the
# default suites (run.sh runs stackmap_*, ustack_*, tools_*): it takes
# about 120 s in the stock TCG guest (measured 2026-11-28), too much for
# make check's guest pool; run it by name:
#   scripts/vm-run --kernel stock -- selftests/guest/run.sh \
#       build/stock/ftrace_stackmap.ko demo_results
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

REPO=$(cd "$HERE/../.." && pwd)
SR=$REPO/build/tools/stackmap-report
O=$TMPD/demo
if [ ! -x "$SR" ] || ! command -v trace-cmd >/dev/null || ! command -v gcc >/dev/null; then
	ok "# SKIP no build/tools/stackmap-report, trace-cmd or gcc"
	finish
fi

FSM_DEMO_OUT=$O FSM_DEMO_SCALE=1 bash "$REPO/scripts/demo-guest.sh" "$KO" >"$TMPD/demo.log" 2>&1
rc=$?
check_eq "demo-guest.sh exits 0" "$rc" 0
check "  ... and ends with 'demo: done'" eval '[ "$(tail -n 1 "$TMPD/demo.log")" = "demo: done" ]'
[ "$rc" -eq 0 ] || tail -n 20 "$TMPD/demo.log" | sed 's/^/# /'
for f in trace.dat report.txt out.folded profile.pb.gz stacks.fsmb kallsyms; do
	check "$f is there, non-empty" test -s "$O/$f"
done
check "flame.svg is there, non-empty" test -s "$O/flame.svg"
check "  ... an SVG with the test program's frames" eval \
	'grep -q "<svg" "$O/flame.svg" && grep -q ustack_f1 "$O/flame.svg"'
check "trace-cmd report -i trace.dat reads it" eval \
	'trace-cmd report -i "$O/trace.dat" 2>/dev/null | grep -q stack_id'
check "stackmap-report dump stacks.fsmb --kallsyms kallsyms decodes it" eval \
	'"$SR" dump "$O/stacks.fsmb" --kallsyms "$O/kallsyms" >"$TMPD/dump.txt" 2>"$TMPD/dump.err" &&
		test -s "$TMPD/dump.txt"'
sed -n '1,3s/^/# /p' "$TMPD/dump.err"
check "out.folded has the test program's chain" \
	grep -q '^fsm-demo-chain;.*;main;ustack_f1;.*ustack_sys;' "$O/out.folded"
check "the module is unloaded at the end" eval '! is_loaded'
finish
