#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_trigger_out.sh MODULE.ko - a module built without the stackmap
# trigger (its kernel-internal layouts not found or not matching at build
# time, e.g. FSM_BTF=an empty file), or with layouts read from another
# build of the kernel (FSM_BTF=its BTF FSM_KL_VERSION=another version: the
# load-time check of the kernel's version): one dmesg line at load says
# why, there is no stackmap trigger, and everything else works. Skipped
# for a module built with the trigger for this kernel.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SW=events/sched/sched_switch
kmsg_mark
load || { echo "Bail out! insmod failed"; exit 1; }
msgs=$(kmsg_since)
if [[ $msgs != *"no stackmap trigger: the trigger path is built out"* &&
	$msgs != *"no stackmap trigger: the layouts were read from"* ]]; then
	ok "# SKIP module built with the stackmap trigger for this kernel"
	finish
fi
if [[ $msgs == *"no stackmap trigger: the layouts were read from"* ]]; then
	# the trigger-path sources rely on the same layouts: off too, said
	check "sources: one dmesg line says why they are tracepoint probes" \
		eval "grep -q 'sources are tracepoint probes.*the layouts were read from' <<<\"\$msgs\""
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
