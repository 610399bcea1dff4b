#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_probe_pair.sh MODULE.ko - tracepoint-probe sources (Debian's
# arm64 kernel; force_probe_sources=1 elsewhere) write an id record only
# when the instance's buffer took exactly one record, the source's, on
# that CPU between the kernel's probe of the event and ours (issue 21
# §3.7). Each route by which an id record could follow a record not its
# own, through fsm_tp_test.ko (a timer fires fsm_tp_test:fsm_tp_ping every
# 10 ms in softirq):
# - another probe of the tracepoint, after the kernel's, writes a record
#   into the instance (between=1: fsm_tp_between on odd ticks);
# - an enable_event trigger on the source itself, the event soft-disabled
#   again by a disable_event trigger elsewhere (the kernel's probe tested
#   the flags it read before its triggers ran: no record);
# - a record longer than the ring buffer takes (big_len=5000: every other
#   fsm_tp_big record is refused);
# - tracing_on turned off before the kernel's probe and on again after
#   it (between=2, top level), so the flags read by our probe are not the
#   kernel's.
# On each CPU every id record follows its own source record
# (trig_check.py orphans), the good records still get theirs, and the
# refused ones are counted as "unpaired" in stack_map_stat. Before the
# check each route gave id records after a record not their own.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

TPKO=$(dirname "$KO")/fsm_tp_test.ko
TPP=/sys/module/fsm_tp_test/parameters
PING=fsm_tp_test:fsm_tp_ping
BIG=fsm_tp_test:fsm_tp_big

kmsg_mark
load force_probe_sources=1 || { echo "Bail out! insmod failed"; exit 1; }
check "sources are tracepoint probes" \
	eval "kmsg_since | grep -q 'sources are tracepoint probes'"
check_eq "the records around the kernel's probe can be counted (no dmesg line)" \
	"$(kmsg_since | grep -c 'cannot count the records')" 0
check "fsm_tp_test loaded" insmod "$TPKO"

# route DIR NAME SRC: save DIR's per-CPU traces and queue the orphans check
TC=$TMPD/pair.tc
: >"$TC"
route_end() {
	local D=$1 n=$2 s=$3 ev=${3#*:}
	diag "$n: $(stat_get "$D/stack_map_stat" "source $s")"
	save_cpus "$D" "$n"
	echo "$n orphans $TMPD/$n $ev ${4:-}" >>"$TC"
	check "$n: refused records counted (unpaired > 0)" \
		test "$(srcstat "$D" "$s" unpaired)" -gt 0
	check "$n: the others got id records" \
		test "$(srcstat "$D" "$s" records)" -gt 0
}

# tick N: wait for about N timer ticks of fsm_tp_test (10 ms each)
tick() { nap "$(($1 / 100)).$(printf %02d $(($1 % 100)))"; }

# --- another probe writes between the kernel's and ours ---
D=$T/instances/pb
mkdir "$D"
echo $PING >"$D/stack_map_events"
echo 1 >"$D/options/stackmap"
echo 1 >"$D/events/fsm_tp_test/fsm_tp_ping/enable"
echo 1 >"$D/events/fsm_tp_test/fsm_tp_between/enable"
echo >"$D/trace"
echo 1 >"$TPP/between"
tick 100
echo 0 >"$TPP/between"
echo 0 >"$D/tracing_on"
check "between: fsm_tp_between records in the trace" grep -q ' fsm_tp_between:' "$D/trace"
route_end "$D" between $PING
rmdir "$D"

# --- an enable_event trigger on the source itself ---
# fsm_tp_ping is soft-disabled by the trigger on fsm_tp_big (ticks with
# n & 2) and enabled again by its own trigger at its next hit, which the
# kernel's probe does not record
D=$T/instances/pe
mkdir "$D"
echo 8 >"$TPP/big_len"
echo $PING >"$D/stack_map_events"
echo 1 >"$D/options/stackmap"
echo 'enable_event:fsm_tp_test:fsm_tp_ping' >"$D/events/fsm_tp_test/fsm_tp_ping/trigger"
echo 'disable_event:fsm_tp_test:fsm_tp_ping if n & 2' >"$D/events/fsm_tp_test/fsm_tp_big/trigger"
echo >"$D/trace"
tick 100
echo 0 >"$D/tracing_on"
echo 0 >"$TPP/big_len"
check "enable_event: fsm_tp_ping records in the trace" grep -q ' fsm_tp_ping:' "$D/trace"
route_end "$D" enable_event $PING
echo '!disable_event:fsm_tp_test:fsm_tp_ping if n & 2' >"$D/events/fsm_tp_test/fsm_tp_big/trigger"
echo '!enable_event:fsm_tp_test:fsm_tp_ping' >"$D/events/fsm_tp_test/fsm_tp_ping/trigger"
rmdir "$D"

# --- a record longer than the ring buffer takes ---
D=$T/instances/pl
mkdir "$D"
echo $BIG >"$D/stack_map_events"
echo 1 >"$D/options/stackmap"
echo 1 >"$D/events/fsm_tp_test/fsm_tp_big/enable"
echo >"$D/trace"
echo 5000 >"$TPP/big_len"
tick 100
echo 0 >"$TPP/big_len"
echo 0 >"$D/tracing_on"
check "over-long: no record of 5000 bytes in the trace" \
	eval "! grep -q 'fsm_tp_big: n=[0-9]* len=5000' $D/trace"
check "over-long: records of 8 bytes in the trace" \
	grep -q 'fsm_tp_big: n=[0-9]* len=8' "$D/trace"
route_end "$D" over_long $BIG
rmdir "$D"

# --- tracing_on changed around the kernel's probe (top level) ---
echo $PING >"$T/stack_map_events"
echo 1 >"$T/options/stackmap"
echo 1 >"$T/events/fsm_tp_test/fsm_tp_ping/enable"
echo >"$T/trace"
echo 2 >"$TPP/between"
tick 100
echo 0 >"$TPP/between"
echo 0 >"$T/tracing_on"
route_end "$T" tracing_on $PING
echo 0 >"$T/events/fsm_tp_test/fsm_tp_ping/enable"
echo 0 >"$T/options/stackmap"
echo >"$T/stack_map_events"
echo 1 >"$T/tracing_on"

trig_checks "$TC"
check "fsm_tp_test unloads" rmmod fsm_tp_test
finish
