#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_badinput.sh MODULE.ko - bad input on every node: garbage,
# overlong and partial writes, tiny reads, seeks; clear errors, no splat.
# shellcheck disable=SC2016,SC2317 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

# wr FILE STRING: write STRING in one write(), without a newline
wr() { printf '%s' "$2" >"$1"; }

check "insmod" load bits=10
mkdir "$T/instances/bad"

for D in "$T" "$T/instances/bad"; do
	L=${D#"$T"}
	L=${L:-/}
	# The messages are ratelimited per call site (10 in 5 s): the second
	# level's "one dmesg line" checks must not come within 5 s of the
	# first level's refusals (on a fast kernel, 7.x, they did).
	[ "$L" = / ] || sleep 5
	# ---- stack_map_events ----
	E=$D/stack_map_events
	kmsg_mark
	check_fail "$L stack_map_events: unknown event -> EINVAL" wr "$E" "nosuch:event"
	check_eq "$L stack_map_events: one dmesg line for it" "$(kmsg_since | count_ours)" 1
	check_fail "$L stack_map_events: unknown system wildcard" wr "$E" "nosuch:*"
	check_fail "$L stack_map_events: bad syntax a:b:c" wr "$E" "sched:sched_switch:x"
	check_fail "$L stack_map_events: lone !" wr "$E" $'!\n'
	check_fail "$L stack_map_events: unknown event without newline" wr "$E" "sched:nosuch"
	check_fail "$L stack_map_events: own event refused" wr "$E" "stackmap:stack_id"
	# every event type can be a source now (issue 9 item 1), but not
	# ftrace's own events (no triggers: IGNORE_ENABLE)
	if [ -d "$D/events/ftrace/function" ]; then
		kmsg_mark
		check_fail "$L stack_map_events: ftrace:function refused" \
			wr "$E" "ftrace:function"
		check_eq "$L stack_map_events: one dmesg line for it" \
			"$(kmsg_since | count_ours)" 1
		check "$L ... saying why (it cannot be enabled), not 'unknown'" \
			eval "kmsg_since | grep -q 'function cannot be a source (it cannot be'"
		kmsg_mark
		check_fail "$L stack_map_events: !ftrace:function refused" \
			wr "$E" "!ftrace:function"
		check "$L ... saying why" \
			eval "kmsg_since | grep -q 'function cannot be a source (it cannot be'"
	fi
	# SYS's own enable file is not an event (6.1 looks events/SYS/EV up)
	kmsg_mark
	check_fail "$L stack_map_events: sched:enable refused" wr "$E" "sched:enable"
	check "$L ... as unknown" eval "kmsg_since | grep -q 'unknown event sched:enable'"

	check_fail "$L stack_map_events: binary garbage" \
		eval "head -c 200 /dev/urandom > $E"
	check_fail "$L stack_map_events: NUL bytes" wr "$E" $'sched:sched_switch\x01\x02'
	check_fail "$L stack_map_events: overlong write (8 KiB)" \
		eval "printf '%08192d' 0 > $E"
	check_fail "$L stack_map_events: overlong token" \
		eval "printf 'sched:%0300d\n' 0 > $E"
	check_eq "$L stack_map_events: still empty after errors" "$(<"$E")" ""
	check_fail "$L stack_map_events: valid + invalid in one write fails" \
		wr "$E" 'sched:sched_switch nosuch:x'
	check_eq "$L stack_map_events: ... and changes nothing" "$(<"$E")" ""
	check "$L stack_map_events: partial writes (dd bs=1), no error" \
		eval "printf 'sched:sched_switch\nsched:sched_wakeup\n' | dd of=$E bs=1 status=none"
	check_eq "$L stack_map_events: dd bs=1 result" "$(<"$E")" \
		$'sched:sched_switch\nsched:sched_wakeup'
	check "$L stack_map_events: partial last token, completed at close" \
		eval "printf 'sched:sched_wakeup sched' | dd of=$E bs=4 status=none"
	check "$L stack_map_events: ... result: sched:sched_wakeup and sched:*" \
		test "$(lines "$E")" -gt 5
	check "$L stack_map_events: unfinished token that stays invalid: error at close only" \
		eval "printf 'sched:sched_sw' | dd of=$E bs=1 status=none"
	check "$L stack_map_events: ... left the set as it was" test "$(lines "$E")" -gt 5
	echo 'sched:sched_switch sched:sched_wakeup' >"$E"
	check "$L stack_map_events: append with >>" eval "echo sched:sched_process_fork >> $E"
	check_eq "$L stack_map_events: appended" "$(lines "$E")" 3
	check "$L stack_map_events: !sys:event removes" eval "echo '!sched:sched_wakeup' >> $E"
	check_eq "$L stack_map_events: removed" "$(<"$E")" \
		$'sched:sched_switch\nsched:sched_process_fork'
	check "$L stack_map_events: duplicates collapse" \
		eval "echo 'sched:sched_switch sched:sched_switch,sched:sched_switch' > $E"
	check_eq "$L stack_map_events: one line" "$(lines "$E")" 1
	check "$L stack_map_events: 'sched:*' then '!sched:*'" \
		eval "echo 'sched:* !sched:*' > $E"
	check_eq "$L stack_map_events: ... leaves nothing" "$(<"$E")" ""
	check "$L stack_map_events: no trailing newline, exact event" \
		wr "$E" "sched:sched_switch"
	check_eq "$L stack_map_events: applied" "$(<"$E")" "sched:sched_switch"
	check_eq "$L stack_map_events: tiny reads (dd bs=1)" \
		"$(dd if="$E" bs=1 status=none)" sched:sched_switch
	check_eq "$L stack_map_events: seek and read" \
		"$(dd if="$E" bs=1 skip=6 status=none)" sched_switch

	# ---- stack_map ----
	M=$D/stack_map
	kmsg_mark
	check_fail "$L stack_map: garbage write -> EINVAL" wr "$M" "garbage"
	check_eq "$L stack_map: one dmesg line for it" "$(kmsg_since | count_ours)" 1
	check_fail "$L stack_map: 'resetx'" wr "$M" "resetx"
	check_fail "$L stack_map: '1'" wr "$M" "1"
	check_fail "$L stack_map: two newlines" wr "$M" $'reset\n\n'
	check_fail "$L stack_map: overlong" eval "printf '%05000d' 0 > $M"
	check_fail "$L stack_map: partial 'res' + 'et'" \
		eval "printf reset | dd of=$M bs=3 status=none"
	check "$L stack_map: 'reset' w/o newline" wr "$M" "reset"
	check "$L stack_map: '0\\n'" wr "$M" $'0\n'

	# ---- options/stackmap ----
	O=$D/options/stackmap
	check_fail "$L options/stackmap: 'yes please'" wr "$O" "yes please"
	check_fail "$L options/stackmap: '2'" wr "$O" "2"
	check_fail "$L options/stackmap: overlong" eval "printf '%0100d' 1 > $O"
	check "$L options/stackmap: 'y' accepted (kstrtobool)" wr "$O" "y"
	check_eq "$L options/stackmap: reads 1" "$(<"$O")" 1
	check_eq "$L options/stackmap: tiny reads" "$(dd if="$O" bs=1 status=none)" 1
	check_fail "$L options/stackmap: seek refused (ESPIPE)" \
		python3 -c "import os; os.lseek(os.open('$O', os.O_RDONLY), 1, 0)"
	check "$L options/stackmap: '0\\n'" wr "$O" $'0\n'

	# ---- read-only nodes ----
	check_fail "$L stack_map_stat: write refused" wr "$D/stack_map_stat" "x"
	check_fail "$L stack_map_bin: write refused" wr "$D/stack_map_bin" "x"

	# ---- reads while data exists ----
	echo 'sched:sched_switch' >"$E"
	echo 1 >"$D/events/sched/sched_switch/enable"
	echo 1 >"$O"
	workload 10
	echo 0 >"$O"
	for f in stack_map stack_map_stat stack_map_bin; do
		cp "$D/$f" "$TMPD/full"
		dd if="$D/$f" of="$TMPD/tiny" bs=1 status=none
		check "$L $f: dd bs=1 = cat" cmp -s "$TMPD/full" "$TMPD/tiny"
		dd if="$D/$f" of="$TMPD/odd" bs=7 status=none
		check "$L $f: dd bs=7 = cat" cmp -s "$TMPD/full" "$TMPD/odd"
		sz=$(size "$TMPD/full")
		if [ "$sz" -gt 40 ]; then
			dd if="$D/$f" of="$TMPD/skip" bs=1 skip=37 status=none
			tail -c +38 "$TMPD/full" >"$TMPD/want"
			check "$L $f: seek to 37 then read" cmp -s "$TMPD/want" "$TMPD/skip"
		fi
		dd if="$D/$f" of="$TMPD/beyond" bs=1 skip=100000000 status=none 2>/dev/null
		check_eq "$L $f: read past the end is empty" "$(size "$TMPD/beyond")" 0
	done
	cp "$D/stack_map_bin" "$TMPD/bin.${L//\//_}"
	later "bad$L" bin "$TMPD/bin.${L//\//_}"
	echo 0 >"$D/events/enable"
	echo >"$E"
done

check "rmdir" rmdir "$T/instances/bad"
check "rmmod" unload

# ---- ranged module parameters (src/kernel/param.h) ----
# Every one follows bits' rule: refused with -EINVAL and one dmesg line,
# never clamped, at load and (where writable) at run time. bits,
# memory_budget_mb and file_table_bits have their own suites; this is
# file_map_interval_ms.
for bad in 0 3600001 x; do
	kmsg_mark
	check_fail "insmod file_map_interval_ms=$bad refused" load file_map_interval_ms=$bad
	is_loaded && unload
	check_eq "file_map_interval_ms=$bad: one dmesg line" \
		"$(kmsg_since | grep -cE "ftrace_stackmap: file_map_interval_ms=$bad (out of range|is not a decimal number) \(accepted: 1\.\.3600000\)")" 1
done
PI=/sys/module/ftrace_stackmap/parameters/file_map_interval_ms
check "insmod file_map_interval_ms=5" load file_map_interval_ms=5
check_eq "file_map_interval_ms reads back" "$(<$PI)" 5
kmsg_mark
check_fail "runtime file_map_interval_ms=0 refused" eval 'echo 0 >$PI'
check_eq "runtime file_map_interval_ms=0: one dmesg line" \
	"$(kmsg_since | grep -c 'file_map_interval_ms=0 out of range')" 1
check_eq "... value unchanged" "$(<$PI)" 5
check "runtime file_map_interval_ms=3600000 accepted" eval 'echo 3600000 >$PI'
check_eq "... reads back" "$(<$PI)" 3600000
check "rmmod" unload
finish
