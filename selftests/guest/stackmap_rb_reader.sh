#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_rb_reader.sh MODULE.ko - issue 21: no lock in the record path.
#
# A source event can be reached while its CPU holds a ring buffer's
# reader_lock. If the module's record of that source took the reader_lock
# of the same CPU buffer (main until s12: fsm_rb_position() ->
# ring_buffer_oldest_event_ts(), from the second record on a CPU), the CPU
# spins on a lock it holds, interrupts off (lockdep first says "possible
# recursive locking"); with the reader_lock of another buffer it is an
# ABBA waiting to happen (lockdep says the same: the instances' reader
# locks share a class).
#
# How a source is reached under the reader_lock:
# - lock:lock_release (kernels with lockdep: the debug flavours): fires in
#   raw_spin_unlock*() before the lock is dropped; filtered to the ring
#   buffers' reader locks (their lockdep name is the key's,
#   "buffer->reader_lock_key");
# - else a kprobe event on a function the readers call under the lock
#   (rb_get_reader_page, rb_buffer_peek, rb_advance_reader), where the
#   kernel allows one. 6.1's stock kernels do not: kernel/trace is built
#   without ftrace entries, and with KPROBES_ON_FTRACE kprobe_events
#   refuses every function that has none ("Could not probe notrace
#   function"), so the test says so and checks only that reads return.
#
# First: the module says at load that it placed its reset hooks (the
# lock-free way it sees resets now, compat/rb_reset.c), at least three.
# Instance rr, the source recorded in rr itself. A task pinned to the last
# CPU reads rr's per_cpu/cpuN/trace_pipe_raw of that CPU a few times
# (non-blocking; each read takes and drops the reader_lock of rr's buffer
# of CPU N, where the source's records go). Then the reads must have
# returned and the source must have recorded there. (Whether the ids left
# resolve is not checked: the reads consumed definitions, and after a
# consuming read the remedy is 'echo redefine > stack_map',
# Documentation/flight-recorder.rst.)
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

CPU=$(($(nproc) - 1))
taskset -cp 0 $$ >/dev/null 2>&1
I=$T/instances/rr
BL=/sys/kernel/debug/kprobes/blacklist

kmsg_mark
check "insmod" load
# the hooks that see resets without a lock (compat/rb_reset.c): at least
# the three reset functions every supported kernel has
msg=$(kmsg_since | grep -o 'ring buffer resets seen through [0-9]* kretprobes')
diag "${msg:-no line about the reset hooks}"
n=${msg#*through }
check "reset hooks placed (3 or more)" test "${n%% *}" -ge 3 2>/dev/null
if ! mkdir "$I"; then
	nok "mkdir $I"
	finish
fi
src=
if [ -d "$I/events/lock/lock_release" ]; then
	src=lock:lock_release
	check "filter lock_release to the reader locks" \
		eval "echo 'name ~ \"*reader_lock*\"' >$I/events/lock/lock_release/filter"
else
	ksyms=$(</proc/kallsyms)
	bl=$(<"$BL")
	for f in rb_get_reader_page rb_buffer_peek rb_advance_reader; do
		# kallsyms: "ADDR t NAME"; the blacklist: "START-END<TAB>NAME"
		[[ $ksyms == *" $f"$'\n'* && $bl != *$'\t'"$f"$'\n'* ]] || continue
		if echo "p:fsmrbr $f" 2>/dev/null >>"$T/kprobe_events"; then
			src=kprobes:fsmrbr
			diag "kprobe event fsmrbr on $f"
			break
		fi
	done
fi
if [ -z "$src" ]; then
	diag "no source can be reached under a reader_lock on this kernel (no lockdep; kprobe_events refuses rb_get_reader_page, rb_buffer_peek, rb_advance_reader)"
	ok "# SKIP no source under the reader_lock"
	finish
fi
check "source $src" eval "echo $src >$I/stack_map_events"
echo 1 >"$I/events/${src/://}/enable"
echo 1 >"$I/options/stackmap"
# something to read on CPU N
taskset -c "$CPU" bash -c "echo seed >$I/trace_marker"
# Each read that finds data takes a page under rr's reader_lock of CPU N
# and hits the source there; the source's own records are the data of the
# next read. Reads 2.. reach the module with a position already stored on
# CPU N (the old code's lock only from the second record on).
diag "reading $I/per_cpu/cpu$CPU/trace_pipe_raw on cpu$CPU"
taskset -c "$CPU" bash -c "for i in 1 2 3 4 5 6; do
	dd if=$I/per_cpu/cpu$CPU/trace_pipe_raw of=/dev/null bs=4096 count=1 \
		iflag=nonblock status=none
	echo read \$i >$I/trace_marker
done"
check "the reads on cpu$CPU returned" true
# a lock taken again under itself shows as lockdep's report on the debug
# kernels before it hangs
k=$(kmsg_since)
check "no lock recursion nor splat in the kernel log" \
	eval "! grep -qE 'possible recursive locking|BUG:|WARNING:' <<<\"\$k\""
echo 0 >"$I/tracing_on"
cp "$I/per_cpu/cpu$CPU/trace" "$TMPD/rr.trace"
t=$(<"$TMPD/rr.trace")
hits=$(grep -c " ${src#*:}: " <<<"$t")
nid=$(grep -c ' stack_id: ' <<<"$t")
diag "cpu$CPU: $hits ${src#*:} records, $nid stack_id records left after the reads"
check "the source recorded under the reader_lock on cpu$CPU" test "$nid" -gt 0
rmdir "$I"
[ "$src" != kprobes:fsmrbr ] ||
	check "kprobe event removable" eval "echo '-:fsmrbr' >>$T/kprobe_events"
finish
