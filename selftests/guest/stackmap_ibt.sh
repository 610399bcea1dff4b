#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_ibt.sh MODULE.ko - the module needs no sealed function to be an
# indirect-call target (x86 IBT). 6.12 and 7.x seal at boot the ENDBR of
# every function whose address nothing in the kernel takes, and every
# function the module borrows by name is one of them; on a CPU that
# enforces IBT an indirect call there faults. The module refuses a sealed
# indirect-call target whatever the CPU, so this guest (QEMU's TCG, no
# IBT) sees what such a CPU would: with every feature that needs a borrowed
# function (nodes in tracefs, the trigger path's sources, the stackmap
# trigger, unload) working, nothing sealed was called through a pointer.
# On a kernel without IBT (6.1, arm64) the same checks run, without the
# "some are sealed" one. TAP output; run as root in a guest.
export KO=${1:-}
. "$(dirname "$0")/lib.sh"

SW=events/sched/sched_switch
# CONFIG_X86_KERNEL_IBT: the kernel has its IBT self-test function
ibt=0
grep -qw ibt_selftest /proc/kallsyms && ibt=1
diag "kernel with IBT (CONFIG_X86_KERNEL_IBT): $ibt"

kmsg_mark
load || { echo "Bail out! insmod failed"; exit 1; }
msgs=$(kmsg_since)
line=$(grep -m1 -o 'borrowed kernel functions: .*' <<<"$msgs")
diag "${line:-no 'borrowed kernel functions' line}"
found=$(sed -n 's/.*: \([0-9]*\) found by name, .*/\1/p' <<<"$line")
sealed=$(sed -n 's/.* \([0-9]*\) of them sealed.*/\1/p' <<<"$line")
check "load says how it calls the borrowed functions" test -n "$found" -a -n "$sealed"
if [ "$ARCH" = x86_64 ]; then
	# ksyms.c's nine, kallsyms_show_value, tracefs_remove (and
	# tracefs_create_file where it is not exported)
	check "every borrowed function found ($found)" test "${found:-0}" -ge 11
fi
if [ $ibt = 1 ]; then
	check "some borrowed functions are sealed on this kernel ($sealed)" \
		test "${sealed:-0}" -gt 0
fi
check "no call target refused (sealed or not a valid target)" \
	eval "! grep -E 'sealed \(never called indirectly\)|not a valid indirect-call target' <<<\"\$msgs\""
if [ "$ARCH" = x86_64 ]; then
	# (Debian's 6.1 arm64 kernel has no KALLSYMS_ALL: data stays unresolved)
	check "no symbol left unresolved" \
		eval "! grep -E 'cannot resolve|not resolvable|not found|not using it' <<<\"\$msgs\""
	check "nodes in tracefs" grep -q 'nodes in tracefs' <<<"$msgs"
	check "the trigger path is on (no fallback to tracepoint probes)" \
		eval "! grep -q 'sources are tracepoint probes' <<<\"\$msgs\""
	check "the stackmap trigger is on" \
		eval "! grep -q 'no stackmap trigger: ' <<<\"\$msgs\""
fi
[ -n "$msgs" ] && grep 'ftrace_stackmap' <<<"$msgs" | sed 's/^/# dmesg: /'

# The stackmap trigger: id records after the sched_switch it fires on.
G=$T/instances/ibtg
mkdir "$G"
if has "$G/$SW/trigger" " stackmap"; then
	echo stackmap >"$G/$SW/trigger"
	echo 1 >"$G/$SW/enable"
	workload 10
	echo 0 >"$G/$SW/enable"
	echo '!stackmap' >>"$G/$SW/trigger"
	nsw=$(grep -c ' sched_switch:' "$G/trace")
	nid=$(grep -cE ' (stack_id|stack_fallback):' "$G/trace")
	diag "stackmap trigger: $nsw sched_switch records, $nid id records"
	check "stackmap trigger: id records" test "$nsw" -gt 0 -a "$nid" -gt 0
	check "stackmap trigger: removed" has "$G/$SW/trigger" "# Available triggers"
elif [ "$ARCH" != x86_64 ] && grep -q 'no stackmap trigger: ' <<<"$msgs"; then
	# (Debian's 6.1 arm64 kernel: no KALLSYMS_ALL, the dmesg line says so)
	ok "stackmap trigger # SKIP not available in this kernel (see the dmesg line above)"
else
	nok "stackmap is not an available trigger"
fi
rmdir "$G"

# A source event in an instance (the trigger path where the kernel has it).
D=$T/instances/ibt
mkdir "$D"
echo sched:sched_switch >"$D/stack_map_events"
echo 1 >"$D/options/stackmap"
echo 1 >"$D/$SW/enable"
workload 10
echo 0 >"$D/$SW/enable"
nsw=$(grep -c ' sched_switch:' "$D/trace")
nid=$(grep -cE ' (stack_id|stack_fallback):' "$D/trace")
diag "source: $nsw sched_switch records, $nid id records"
check "source: an id record per source record" test "$nsw" -gt 0 -a "$nid" = "$nsw"
echo >"$D/stack_map_events"
rmdir "$D"
check "instance removed (tracefs_remove of the module's nodes)" test ! -d "$D"

check "unload" unload
check "unloaded" eval "! is_loaded"
finish
