#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_redefine_twice.sh MODULE.ko - review s11 (wrap.diff): after
# the flight recorder's read-out (tracing_on 0, `echo > trace`, `echo
# redefine > stack_map`, tracing_on 1: Documentation/flight-recorder.rst)
# "every CPU defines each id again at its next use". fsm_rb_position()
# makes the stamps of a CPU due by moving its position on by 2^31 at the
# first record after such a read-out; two read-outs with a record between
# them move it by 2^32, i.e. back to where it was: the stamps written
# before the first read-out are "recent" again, and an id defined there
# and used again after the second read-out gets no stack_def, although
# its last one was emptied from the buffer twice over.
#
# Instance rd, source signal:signal_generate, records made on the last CPU
# only (bash's kill builtin pinned there: kill(pid) is stack I, kill(-pgrp)
# a different stack J). The scenario, for N = 1, 2, 3 read-outs between
# the first use of I and its next one (a J record after each but the last,
# so that the CPU sees each read-out on its own):
#   I; { read-out; J; } x (N - 1); read-out; I
# then every stack_id in that CPU's buffer must have its stack_def there.
# N = 1 and 3 pass, N = 2 leaves I without one (the bug).
#
# Second case, same file: `echo > trace` alone (trace-cmd reset), which
# fsm_rb_position() detects only as "the count went back": with another
# event of the instance (raw_syscalls:sys_enter, not a source) refilling
# the CPU's buffer past its last count before the CPU's next record of the
# module, the reset is not seen, and I, used again, gets no stack_def
# although the reset erased its last one.
#
# On main 7272f50 (debug guest, 2 CPUs) checks 5 (N = 2: the first id has
# no stack_def) and 9 (reset: two ids without one) fail; the rest pass.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

CPU=$(($(nproc) - 1))
taskset -cp 0 $$ >/dev/null 2>&1
I=$T/instances/rd

readout() {
	echo 0 >"$I/tracing_on"
	echo >"$I/trace"
	echo redefine >"$I/stack_map"
	echo 1 >"$I/tracing_on"
}
# stack I: kill(2) of one pid; stack J: kill(2) of a process group
use_i() { taskset -c "$CPU" bash -c 'kill -CONT $$'; }
use_j() { taskset -c "$CPU" bash -c 'kill -CONT 0'; }

# unresolved FILE: the stack_ids of FILE without a stack_def in FILE
unresolved() {
	local t ids defs id out=
	t=$(<"$1")
	ids=$(grep -o ' stack_id: stack_id=[0-9]*' <<<"$t" | sed 's/.*=//' | sort -u)
	defs=$(grep -o ' stack_def: stack_id=[0-9]*' <<<"$t" | sed 's/.*=//' | sort -u)
	for id in $ids; do
		grep -qx "$id" <<<"$defs" || out+="$id "
	done
	echo "$out"
}

check "insmod" load
for n in 1 2 3; do
	mkdir "$I" || exit 1
	echo "signal:signal_generate" >"$I/stack_map_events"
	echo 1 >"$I/events/signal/signal_generate/enable"
	echo 1 >"$I/options/stackmap"
	use_i
	for ((k = 1; k < n; k++)); do
		readout
		use_j
	done
	readout
	use_i
	echo 0 >"$I/tracing_on"
	cp "$I/per_cpu/cpu$CPU/trace" "$TMPD/n$n.trace"
	ids=$(grep -c ' stack_id: ' "$TMPD/n$n.trace")
	u=$(unresolved "$TMPD/n$n.trace")
	diag "n=$n: $ids stack_id records on cpu$CPU, without stack_def: '${u% }'"
	diag "$(grep -E 'redefinitions|defs_' "$I/stack_map_stat" | tr '\n' ' ')"
	check "n=$n read-outs: cpu$CPU has stack_id records" test "$ids" -gt 0
	check "n=$n read-outs: every stack_id on cpu$CPU has its stack_def after the last read-out" \
		test -z "$u"
	rmdir "$I"
done

# reset only, refilled by other events before the next module record
mkdir "$I" || exit 1
echo "signal:signal_generate" >"$I/stack_map_events"
echo 1 >"$I/events/signal/signal_generate/enable"
echo 1 >"$I/events/raw_syscalls/sys_enter/enable"
echo 1 >"$I/options/stackmap"
use_i
before=$(grep -c ' sys_enter: ' "$I/per_cpu/cpu$CPU/trace")
echo >"$I/trace"
# more records than the first run (its bash started there), none of them
# the module's, and fewer than a horizon (half the buffer)
taskset -c "$CPU" bash -c 'for i in 1 2 3 4; do /bin/true; done'
use_i
echo 0 >"$I/tracing_on"
cp "$I/per_cpu/cpu$CPU/trace" "$TMPD/reset.trace"
ids=$(grep -c ' stack_id: ' "$TMPD/reset.trace")
u=$(unresolved "$TMPD/reset.trace")
diag "reset: $before sys_enter before the reset; after it $(grep -c ' sys_enter: ' "$TMPD/reset.trace") and $ids stack_id records on cpu$CPU, without stack_def: '${u% }'"
check "reset: cpu$CPU has stack_id records" test "$ids" -gt 0
check "reset: every stack_id on cpu$CPU has its stack_def after \`echo > trace\`" test -z "$u"
rmdir "$I"

# Third case: a wrap by records much larger than the mean the horizon was
# computed from. A 16 KiB buffer per CPU: before the buffer holds 64
# records a record is guessed at 256 bytes, so the horizon is 32 records;
# 24 trace_marker records of about 1 KiB (no reset, no count going back)
# overwrite every record the CPU held, I's stack_def included, in fewer
# records than that horizon. The next use of I must define it again: a
# stamp counts only while it is fewer records behind than the buffer
# holds (fsm_rb_position()). Failed before that bound (its stack_def
# older than the buffer), passed on the reader_lock check it replaced.
mkdir "$I" || exit 1
echo 16 >"$I/buffer_size_kb"
echo "signal:signal_generate" >"$I/stack_map_events"
echo 1 >"$I/events/signal/signal_generate/enable"
echo 1 >"$I/options/stackmap"
use_i
big=$(printf '%01000d' 0)
taskset -c "$CPU" bash -c "for i in \$(seq 24); do echo $big >$I/trace_marker; done"
use_i
echo 0 >"$I/tracing_on"
cp "$I/per_cpu/cpu$CPU/trace" "$TMPD/burst.trace"
ids=$(grep -c ' stack_id: ' "$TMPD/burst.trace")
u=$(unresolved "$TMPD/burst.trace")
diag "burst: $(grep -c 'tracing_mark_write: ' "$TMPD/burst.trace") markers and $ids stack_id records on cpu$CPU, without stack_def: '${u% }'; overrun $(grep overrun "$I/per_cpu/cpu$CPU/stats")"
check "burst: cpu$CPU has stack_id records" test "$ids" -gt 0
check "burst: every stack_id on cpu$CPU has its stack_def after a wrap by large records" test -z "$u"
rmdir "$I"
finish
