#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_layouts_evfiles.sh MODULE.ko - a module whose kernel-internal
# layouts were read from another build of the kernel (FSM_BTF=that build's
# BTF, FSM_KL_VERSION=its uname -v; the release the same) on an eventfs
# kernel (6.6+). The load-time check of the kernel's version turns the
# trigger and the trigger-path sources off; compat/evfiles.c relies on the
# same layouts (struct trace_array: options, events) to find every
# instance and event file. The contract: the load either fails with one
# dmesg line saying why, or works; never an oops (run.sh fails on one).
# Skipped for a module whose layouts are this kernel's.
#
#   FSM_BTF=.../linux-headers-7.3.4+deb13-amd64/vmlinux \
#   FSM_KL_VERSION="#1 SMP PREEMPT_DYNAMIC Debian 7.3.4-1~bpo13+1 (2026-11-15)" \
#   scripts/build-module trixie-debug
#   scripts/vm-run --kernel trixie-debug -- selftests/guest/run.sh \
#       build/trixie-debug/ftrace_stackmap.ko stackmap_layouts_evfiles
#
# Seen on 2026-11-28 (main 7272f50, trixie-debug 6.12.118): with the
# layouts of Debian's 6.12.118 build (options 7792, events 7840; the debug
# build has 7712, 7760) insmod fails with ENODEV and no dmesg line (the
# word read as tr->options was 0); with 7.3.4's (options 7928: past the
# end of global_trace) "BUG: KASAN: global-out-of-bounds in
# fsm_compat_event_file_instance_dir" at insmod. Fails until evfiles.c
# checks its layouts at load (fsm_compat_layouts_why()).
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

kmsg_mark
if load; then
	loaded=1
else
	loaded=0
fi
msgs=$(kmsg_since)
diag "insmod: $([ $loaded = 1 ] && echo loaded || echo refused)"
while IFS= read -r l; do diag "$l"; done <<<"$msgs"
if [ $loaded = 1 ] && [[ $msgs != *"the layouts were read from"* ]]; then
	ok "# SKIP the module's layouts are this kernel's"
	finish
fi
check "no oops at load" \
	eval "! grep -qE 'Oops|BUG:|KASAN|general protection' <<<\"\$msgs\""
if [ $loaded = 1 ]; then
	check "instances/x can be made" mkdir "$T/instances/x"
	check "stack_map_events of x accepts sched:sched_switch" \
		eval "echo sched:sched_switch >$T/instances/x/stack_map_events"
	rmdir "$T/instances/x" 2>/dev/null
else
	# the contract: a refused load says why, in one dmesg line
	why=$(grep -v 'taints kernel' <<<"$msgs" | grep -c 'ftrace_stackmap:')
	check "refused with a dmesg line saying why (got $why lines)" \
		test "$why" -ge 1
fi
finish
