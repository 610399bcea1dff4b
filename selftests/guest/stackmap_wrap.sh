#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_wrap.sh MODULE.ko - the flight recorder: a small overwrite-mode
# buffer that wraps hundreds of times must still be readable on its own
# (Documentation/flight-recorder.rst). Instance fr, sources
# kmem:kmem_cache_alloc, sched:sched_switch and raw_syscalls:sys_enter,
# kernel and user stacks, prog/wrap_load.c (system calls from known user
# chains, short-lived children), then tracing off and `trace-cmd extract
# -B fr`; `stackmap-report stats` of that trace.dat alone (no snapshot):
#  - 64 KiB per CPU, wrapped >= 100 times on a CPU: at least 99.9% of the
#    retained id records resolve, kernel stacks, user stacks and the files
#    those name; stack_map_stat counts re-definitions of all three kinds;
#  - the same with 16 KiB per CPU;
#  - control: with redefine_pct=0 (a definition at first use only, as
#    before the module re-defined) the same run leaves ids unresolved, so
#    the workload does reach the case.
# On the debug kernels (KASAN, lockdep: a scenario takes about 60 s there)
# only the 64 KiB run, unless FSM_WRAP_ALL=1: the 16 KiB run and the
# control exercise the same module code, and Debian's 6.12 and 7.x
# kernels run them (make check: trixie, backports).
# The counts of each run are printed (diag). Needs trace-cmd and
# build/tools (make tools): skipped where they do not run (the arm64
# guest: build/tools is built for the x86 host).
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SR=$HERE/../../build/tools/stackmap-report
P=$TMPD/wrap_load
PCT=/sys/module/ftrace_stackmap/parameters/redefine_pct
ROUNDS=6000
if ! command -v trace-cmd >/dev/null; then
	echo "ok 1 - # SKIP trace-cmd not installed"
	echo "1..1"
	exit 0
fi
# build/tools is built for the host: in the arm64 guest it does not run,
# and `scripts/check --only arm64` does not build it at all; an x86-64
# guest (the host's arch) without it fails below
if [ "$(uname -m)" != x86_64 ] && ! "$SR" --version >/dev/null 2>&1; then
	echo "ok 1 - # SKIP build/tools/stackmap-report does not run here ($(uname -m)): built for the host"
	echo "1..1"
	exit 0
fi
check "stackmap-report built (make tools)" test -x "$SR"
check "gcc wrap_load.c" gcc -O1 -fno-omit-frame-pointer -o "$P" "$HERE/prog/wrap_load.c"
check "insmod" load bits=14
cd "$TMPD" || exit 1

# scenario KB PCT NAME: one recording with buffer_size_kb KB and
# redefine_pct PCT, extracted to NAME.dat, its stats in NAME.stats, the
# instance's stack_map_stat in NAME.stat, and the most times a CPU's
# buffer was overwritten whole in $WRAPS
scenario() {
	local kb=$1 pct=$2 name=$3 I=$T/instances/fr e c held lost w
	# a module without redefine_pct (before re-definitions) runs as is
	if [ -e "$PCT" ]; then echo "$pct" >"$PCT" || return 1; fi
	mkdir "$I" || return 1
	echo "$kb" >"$I/buffer_size_kb"
	echo "kmem:kmem_cache_alloc sched:sched_switch raw_syscalls:sys_enter" \
		>"$I/stack_map_events" || return 1
	for e in kmem/kmem_cache_alloc sched/sched_switch raw_syscalls/sys_enter; do
		echo 1 >"$I/events/$e/enable" || return 1
	done
	echo 1 >"$I/options/stackmap" || return 1
	echo 1 >"$I/options/stackmap_user" || return 1
	"$P" $ROUNDS 64 >"$name.wl" || return 1
	echo 0 >"$I/tracing_on"
	cp "$I/stack_map_stat" "$name.stat"
	WRAPS=0
	for c in "$I"/per_cpu/cpu*; do
		held=$(stat_get "$c/stats" entries)
		lost=$(stat_get "$c/stats" overrun)
		w=$((lost / (held ? held : 1)))
		[ "$w" -gt "$WRAPS" ] && WRAPS=$w
	done
	# trace-cmd extract -B removes the instance when it ends (3.1.6)
	trace-cmd extract -B fr -o "$name.dat" >"$name.ext" 2>&1 || return 1
	[ -d "$I" ] && rmdir "$I"
	"$SR" stats -i "$name.dat" --top 0 >"$name.stats" 2>"$name.err"
}

# resolved NAME KEY: KEY's count of NAME.stats is at most 0.1% of records
resolved() {
	local rec n
	rec=$(stat_get "$1.stats" records) || return 1
	n=$(stat_get "$1.stats" "$2") || return 1
	[ "$rec" -gt 0 ] && [ $((n * 1000)) -le "$rec" ]
}

report() {
	diag "$1: buffer wrapped $WRAPS times; records $(stat_get "$1.stats" records)," \
		"unresolved $(stat_get "$1.stats" unresolved)," \
		"user_unresolved $(stat_get "$1.stats" user_unresolved)," \
		"file_unresolved $(stat_get "$1.stats" file_unresolved);" \
		"redefinitions $(stat_get "$1.stat" redefinitions)," \
		"user $(stat_get "$1.stat" user_redefinitions)," \
		"files $(stat_get "$1.stat" file_map_redefinitions)"
}

SIZES="64 16" CONTROL=1
case ${FSM_VM_KERNEL:-} in
debug | *-debug) [ "${FSM_WRAP_ALL:-0}" = 1 ] || SIZES=64 CONTROL=0 ;;
esac
for kb in $SIZES; do
	n=w$kb
	check "$kb KiB: record, wrap, trace-cmd extract, stats" scenario "$kb" 50 "$n"
	report "$n"
	check "  ... a CPU's buffer wrapped >= 100 times" test "$WRAPS" -ge 100
	check "  ... >= $((kb * 4)) id records retained" \
		eval '[ "$(stat_get "$n.stats" records)" -ge $((kb * 4)) ]'
	check "  ... every record decoded" eval '! grep -q "did not decode" "$n.err"'
	check "  ... kernel stacks: >= 99.9% resolved" resolved "$n" unresolved
	check "  ... user stacks: >= 99.9% resolved" resolved "$n" user_unresolved
	check "  ... files of user stacks: >= 99.9% described" resolved "$n" file_unresolved
	check "  ... stack_def written again" \
		eval '[ "$(stat_get "$n.stat" redefinitions)" -gt 0 ]'
	check "  ... user stacks written again" \
		eval '[ "$(stat_get "$n.stat" user_redefinitions)" -gt 0 ]'
	check "  ... file_map written again" \
		eval '[ "$(stat_get "$n.stat" file_map_redefinitions)" -gt 0 ]'
done

if [ "$CONTROL" = 1 ]; then
	check "control: redefine_pct=0 (first use only)" scenario 64 0 first
	report first
	check "  ... leaves kernel stacks unresolved" eval '! resolved first unresolved'
	check "  ... and user stacks" eval '! resolved first user_unresolved'
fi
[ -e "$PCT" ] && echo 50 >"$PCT"

finish
