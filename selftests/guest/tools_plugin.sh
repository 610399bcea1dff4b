#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools_plugin.sh MODULE.ko - plugin_stackmap.so (build/tools/plugins,
# `make tools`) in plain `trace-cmd report`, on a recording made here with
# one trace-cmd run: the top level and a -B instance, user stacks of the
# chain program (selftests/guest/ustack/chain.c), and a reset of the top
# level's map in the middle. Checks:
#  - with the plugin, every id record shows the same kernel frames as
#    `stackmap-report report` on the same trace.dat when its stack_def was
#    printed before it, and exactly "[stack_id N: defined later]" when not;
#    the user_stack record of a stack_id_user record shows the same user
#    frames (plugin_check.py)
#  - without the plugin (trace-cmd report -N) the same comparison fails
#  - the plugin is found in ~/.local/lib/traceevent/plugins as well
#  - stackmap-report's progress: none on a pipe, percentages on a pty
#    (script -qc), none for a small file
export KO=${1:-}
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SR=$HERE/../../build/tools/stackmap-report
PLUGDIR=$(cd "$HERE/../../build/tools/plugins" 2>/dev/null && pwd)
CFLAGS=(-g -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread)
N=10

if ! command -v trace-cmd >/dev/null; then
	echo "ok 1 - # SKIP trace-cmd not installed"
	echo "1..1"
	exit 0
fi
check "plugin built (make tools)" test -f "$PLUGDIR/plugin_stackmap.so"
check "stackmap-report built (make tools)" test -x "$SR"
cd "$TMPD" || exit 1
check "gcc 64-bit chain" gcc "${CFLAGS[@]}" -o chain64 "$HERE/ustack/chain.c"
check "insmod" load bits=12 events=sched:sched_switch
T0=$SECONDS

# The two buffers stack different source events, so that one id names
# different stacks in each (the plugin must tell the buffers apart).
echo 'raw_syscalls:sys_enter' >"$T/stack_map_events"
echo 1 >"$T/options/stackmap_user"
mkdir "$T/instances/tcp"
echo 'sched:sched_switch' >"$T/instances/tcp/stack_map_events"
echo 1 >"$T/instances/tcp/options/stackmap_user"
trace-cmd record -q -b 2048 -o p.dat -e stackmap -e raw_syscalls:sys_enter \
	-B tcp -e stackmap -e sched:sched_switch \
	bash -c "$TMPD/chain64 $N; echo reset >$T/stack_map; $TMPD/chain64 $N" >rec.out 2>&1
check "trace-cmd record (top level and -B tcp)" test -s p.dat
echo 0 >"$T/options/stackmap_user"
echo >"$T/stack_map_events"
[ -d "$T/instances/tcp" ] && rmdir "$T/instances/tcp"
diag "record: $((SECONDS - T0)) s"

TRACEEVENT_PLUGIN_DIR=$PLUGDIR trace-cmd report -i p.dat >with.txt 2>with.err
check_eq "trace-cmd report with the plugin: exit status" $? 0
check "  ... prints kernel frames" grep -q '^ => __schedule+0x' with.txt
check "  ... prints 'defined later' for first uses" grep -qE '^ => \[stack_id [0-9]+: defined later\]$' with.txt
check "  ... prints the chain's user frames" grep -q '^ => ustack_sys (.*chain.c:[0-9]*) \[' with.txt
check "  ... the reset is in the trace" grep -q 'stack_reset: ' with.txt
trace-cmd report -N -i p.dat >without.txt 2>/dev/null
check "trace-cmd report -N (no plugins): no frames" eval '! grep -q "^ => " without.txt'
"$SR" report -i p.dat >sr.txt 2>sr.err
check_eq "stackmap-report report: exit status" $? 0

py_checks plugin_check.py with.txt sr.txt tcp
check_fail "without the plugin the comparison fails" \
	eval '$PY -S "$HERE/plugin_check.py" without.txt sr.txt tcp >nopl.out 2>&1'
diag "without the plugin: $(grep -c '^not ok' nopl.out) failed checks"

# progress (stackmap-report): on stderr only when it is a terminal and the
# file is large (--progress-min 0: any file)
"$SR" folded -i p.dat --progress-min 0 >/dev/null 2>np.err
check_eq "progress: stderr not a terminal: only the summary line" \
	"$(grep -c . np.err) $(grep -c '^stackmap-report: [0-9]* id records' np.err)" "1 1"
script -qc "'$SR' folded -i p.dat --progress-min 0 >/dev/null" /dev/null >pty.out 2>&1
check "progress: under script (a pty) percentages are shown" grep -q 'pass 2/2 (folded), records:  *[0-9]*%' pty.out
script -qc "'$SR' folded -i p.dat >/dev/null" /dev/null >pty2.out 2>&1
check "progress: a small file (default --progress-min 32): none" eval '! grep -q "pass 1/2" pty2.out'

mkdir -p "$HOME/.local/lib/traceevent/plugins"
cp "$PLUGDIR/plugin_stackmap.so" "$HOME/.local/lib/traceevent/plugins/"
trace-cmd report -i p.dat >home.txt 2>/dev/null
rm -f "$HOME/.local/lib/traceevent/plugins/plugin_stackmap.so"
check "the plugin in ~/.local/lib/traceevent/plugins: same output" cmp -s home.txt with.txt

if [ -n "${FSM_KEEP_TRACES:-}" ] && [ -d /run/fsm ]; then
	cp p.dat with.txt without.txt sr.txt /run/fsm/ && diag "saved to the run directory"
fi
diag "checks: $((SECONDS - T0)) s"
cd / || exit 1
check "rmmod" unload
finish
