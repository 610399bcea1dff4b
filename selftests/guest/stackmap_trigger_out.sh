#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_trigger_out.sh MODULE.ko - a module built without the stackmap
# trigger (its kernel-internal layouts not found or not matching at build
# time, e.g. FSM_BTF=an empty file): one dmesg line at load says why, there
# is no stackmap trigger, and everything else works. Skipped for a module
# built with the trigger.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SW=events/sched/sched_switch
kmsg_mark
load || { echo "Bail out! insmod failed"; exit 1; }
msgs=$(kmsg_since)
if [[ $msgs != *"no stackmap trigger: the trigger path is built out"* ]]; then
	ok "# SKIP module built with the stackmap trigger"
	finish
fi
n=0
while IFS= read -r l; do
	[[ $l == *"no stackmap trigger"* ]] && n=$((n + 1))
done <<<"$msgs"
check_eq "one dmesg line says why" "$n" 1
diag "$(grep -m1 'no stackmap trigger' <<<"$msgs")"
check "stackmap is not an available trigger" eval "! has $T/$SW/trigger ' stackmap'"
check_fail "echo stackmap > trigger fails" eval "echo stackmap >$T/$SW/trigger"
echo sched:sched_switch >"$T/stack_map_events"
echo 1 >"$T/$SW/enable"
echo 1 >"$T/options/stackmap"
workload 5
echo 0 >"$T/options/stackmap"
check "stack_id records still written" has "$T/trace" "stack_id:"
check "rmmod" unload
finish
