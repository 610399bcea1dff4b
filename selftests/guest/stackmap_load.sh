#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_load.sh MODULE.ko - module parameters, load and unload, nodes in
# the top level and in instances made before and after the load, the
# debugfs fallback layout.
# shellcheck disable=SC2016,SC2317 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

# Bad parameters: -EINVAL ("Invalid parameters") and one dmesg line of ours
# (for bits=, the kernel's parameter parser adds its own generic line).
for arg in bits=5 bits=21 bits=abc bits= events=nosuch:event \
	events=sched:nosuch events=stackmap:stack_id events=nosuchthing \
	events=ftrace:function 'events=sched:sched_switch,!nosuch:x' \
	events=a:b:c; do
	kmsg_mark
	out=$(insmod "$KO" "$arg" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"Invalid param"* ]] && ! is_loaded; then
		ok "insmod $arg fails with -EINVAL"
	else
		nok "insmod $arg fails with -EINVAL (rc=$rc: $out)"
		is_loaded && unload
	fi
	msgs=$(kmsg_since)
	check_eq "insmod $arg: one dmesg line" "$(count_ours <<<"$msgs")" 1
	while IFS= read -r l; do diag "$l"; done <<<"$msgs"
done

# every event type can be a default source (issue 9, item 1); on a kernel
# without the trigger path (sources are tracepoint probes: Debian's arm64)
# a syscall event is refused, with its reason
kmsg_mark
if out=$(insmod "$KO" events=syscalls:sys_enter_openat 2>&1); then
	ok "insmod events=syscalls:sys_enter_openat (a syscall event)"
	check "... is the top level's source" has "$T/stack_map_events" syscalls:sys_enter_openat
elif [[ $(kmsg_since) == *"sources are tracepoint probes"* ]]; then
	check "no trigger path: insmod events=syscalls:sys_enter_openat fails with -EINVAL" \
		eval '[[ $out == *"Invalid param"* ]]'
	check "... its dmesg line says why" \
		eval '[[ $(kmsg_since) == *"syscalls:sys_enter_openat cannot be a source"* ]]'
else
	nok "insmod events=syscalls:sys_enter_openat (a syscall event): $out"
fi
is_loaded && unload

kmsg_mark
check "insmod bits=12" load bits=12
check_eq "bits parameter" "$(</sys/module/ftrace_stackmap/parameters/bits)" 12
check "dmesg says where the nodes are" \
	eval '[[ $(kmsg_since) == *"ftrace_stackmap: nodes in tracefs"* ]]'
for f in stack_map stack_map_stat stack_map_bin stack_map_events options/stackmap; do
	check "top level: $f exists" test -f "$T/$f"
done
check_eq "modes of the nodes" \
	"$(stat -c %a "$T/stack_map" "$T/stack_map_stat" "$T/stack_map_bin" \
		"$T/stack_map_events" "$T/options/stackmap" | tr '\n' ' ')" \
	"640 440 440 640 640 "
check "event stackmap:stack_id exists" test -d "$T/events/stackmap/stack_id"
for e in stack_id stack_id_user stack_def stack_fallback stack_reset; do
	check "event stackmap:$e exists" test -d "$T/events/stackmap/$e"
done
check "format: stack_id is one u32 after the common fields" \
	has "$T/events/stackmap/stack_id/format" "field:u32 stack_id;	offset:8;	size:4;"
check "format: stack_def has __data_loc unsigned long[] ips" \
	has "$T/events/stackmap/stack_def/format" "__data_loc unsigned long[] ips"
check "format: print fmt uses __print_array" \
	has "$T/events/stackmap/stack_def/format" "__print_array"
check_eq "options/stackmap reads 0" "$(<"$T/options/stackmap")" 0
check_eq "stack_map empty before recording" "$(<"$T/stack_map")" ""
check_eq "stat: map not allocated yet" "$(stat_get "$T/stack_map_stat" map_allocated)" 0
check_eq "stat: bits" "$(stat_get "$T/stack_map_stat" bits)" 12
check_eq "stat: capacity" "$(stat_get "$T/stack_map_stat" capacity)" 4096
cp "$T/stack_map_bin" "$TMPD/bin0"
check_eq "bin: header and the end of an empty file table only (128 + 16 bytes)" "$(size "$TMPD/bin0")" 144
later load.empty bin "$TMPD/bin0"
check_eq "stack_map_events empty without events=" "$(<"$T/stack_map_events")" ""
if command -v perf >/dev/null; then
	# perf stat reports "<not supported>" (and exits 0), or fails
	out=$(perf stat -e stackmap:stack_id true 2>&1)
	check "perf cannot use stackmap:stack_id (EOPNOTSUPP: per-instance only)" \
		eval '[[ $out == *"ot supported"* ]]'
	[[ $out == *"ot supported"* ]] || diag "$out"
fi
check "trace_options does not list it (documented)" \
	eval '! has "$T/trace_options" stackmap'
check "rmmod" unload
check "nodes gone after rmmod" test ! -e "$T/stack_map"
check "option gone after rmmod" test ! -e "$T/options/stackmap"
check "event gone after rmmod" test ! -e "$T/events/stackmap"

# events= gives the default of the top level and of every instance
mkdir "$T/instances/before"
check "insmod events=sched:sched_switch,sched:sched_wakeup" \
	load bits=12 events=sched:sched_switch,sched:sched_wakeup
want=$'sched:sched_switch\nsched:sched_wakeup'
check_eq "top level sources" "$(<"$T/stack_map_events")" "$want"
check_eq "instance made before load has the defaults" \
	"$(<"$T/instances/before/stack_map_events")" "$want"
mkdir "$T/instances/after"
check "instance made after load has the nodes when mkdir returns" test -e "$T/instances/after/stack_map"
check "... and options/stackmap" test -f "$T/instances/after/options/stackmap"
check_eq "instance made after load has the defaults" \
	"$(<"$T/instances/after/stack_map_events")" "$want"
id_b=$(stat_get "$T/instances/before/stack_map_stat" inst_id)
id_a=$(stat_get "$T/instances/after/stack_map_stat" inst_id)
check "instance ids distinct and not 0 ($id_b, $id_a)" \
	test "$id_b" != "$id_a" -a "$id_b" != 0 -a "$id_a" != 0
check_eq "top level inst_id 0" "$(stat_get "$T/stack_map_stat" inst_id)" 0
check_eq "instance name in stat" "$(stat_get "$T/instances/after/stack_map_stat" instance)" after
check "rmmod with instances" unload
check "instance nodes gone after rmmod" test ! -e "$T/instances/after/stack_map"
check "rmdir after rmmod" rmdir "$T/instances/after" "$T/instances/before"

# wildcard default
check "insmod events='sched:*'" load 'events=sched:*'
n=$(lines "$T/stack_map_events")
check "sched:* resolves to several events ($n)" test "$n" -gt 5
check "sched:* does not include stackmap" eval '! has "$T/stack_map_events" stackmap'
unload

# force_debugfs: same layout under debugfs
D=/sys/kernel/debug/ftrace_stackmap
[ -d /sys/kernel/debug/tracing ] || mount -t debugfs none /sys/kernel/debug
mkdir "$T/instances/dbg1"
kmsg_mark
check "insmod force_debugfs=1" load force_debugfs=1 events=sched:sched_switch
check "dmesg says debugfs" \
	eval '[[ $(kmsg_since) == *"nodes under /sys/kernel/debug/ftrace_stackmap"* ]]'
for f in stack_map stack_map_stat stack_map_bin stack_map_events options/stackmap \
	instances/dbg1/stack_map instances/dbg1/options/stackmap; do
	check "debugfs: $f" test -f "$D/$f"
done
check "no node in tracefs" test ! -e "$T/stack_map"
mkdir "$T/instances/dbg2"
check "debugfs: instance made after load, nodes when mkdir returns" test -e "$D/instances/dbg2/stack_map"
echo 1 >"$D/instances/dbg1/options/stackmap"
check_eq "debugfs option enables the event in its instance" \
	"$(<"$T/instances/dbg1/events/stackmap/stack_id/enable")" 1
echo 1 >"$T/instances/dbg1/events/sched/sched_switch/enable"
workload 5
check "debugfs: stacks recorded" eval '[ -n "$(<"$D/instances/dbg1/stack_map")" ]'
check "rmdir of a recording instance (debugfs mode)" rmdir "$T/instances/dbg1"
for ((i = 0; i < 30; i++)); do [ -e "$D/instances/dbg1" ] && nap 0.1; done
check "debugfs instance dir gone with it" test ! -e "$D/instances/dbg1"
check "rmmod (debugfs mode)" unload
check "debugfs dir gone" test ! -e "$D"
rmdir "$T/instances/dbg2"

finish
