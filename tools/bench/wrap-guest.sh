#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# wrap-guest.sh MODULE.ko - the price of re-definitions in a wrapping
# buffer (Documentation/flight-recorder.rst): the same workload
# (selftests/guest/prog/wrap_load.c, rounds scaled with the buffer so that
# it wraps many times) and sources (kmem:kmem_cache_alloc,
# sched:sched_switch, raw_syscalls:sys_enter), one boot, one instance per
# run, in overwrite mode at 64 KiB and 4 MiB per CPU, three runs per size:
#   first      stack ids, redefine_pct=0 (a definition at first use only:
#              ids outlive their definitions)
#   redefine   stack ids, redefine_pct=50 (the default)
#   stacktrace options/stacktrace (a kernel_stack record after each event)
# and, with user stacks on (options/stackmap_user), first and redefine
# again. The bytes are what the buffer holds at the end (rbraw.py: event
# headers included, time extends and padding left out). Prints name=value,
# SIZE being 64k or 4m:
#   wrap_SIZE_wraps                  the most times a CPU's buffer was
#                                    overwritten whole (redefine run)
#   wrap_SIZE_events_first/_redefine/_stacktrace  source events retained
#   wrap_SIZE_bytes_per_event_first/_redefine     the module's bytes per
#                                    retained source event (id records,
#                                    stack_def records)
#   wrap_SIZE_extra_bytes_ratio      redefine / first of those bytes
#   wrap_SIZE_redefinitions_per_1k_records, _first_definitions_per_1k_records
#                                    stack_def records written again (REDEF)
#                                    and at first use per 1000 id records,
#                                    over the whole run (stack_map_stat)
#   wrap_SIZE_retained_vs_first      retained source events, redefine /
#                                    first
#   wrap_SIZE_retained_ratio_first/_redefine  retained source events over
#                                    stacktrace's
#   wrap_SIZE_retained_limit         (E + K) / (E + 16): what a 16-byte id
#                                    record alone would allow (E: bytes of a
#                                    source event, K: of a kernel_stack)
#   wrap_SIZE_retained_of_limit_first/_redefine   the ratios over the limit
#   wrap_SIZE_user_extra_bytes_ratio redefine / first of the module's bytes
#                                    per source event with user stacks on
#                                    (user_stack and file_map included)
#   wrap_SIZE_user_retained_vs_first retained source events, the same
set -euo pipefail

ko=${1:?usage: wrap-guest.sh MODULE.ko}
here=$(cd "$(dirname "$0")" && pwd)
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
rbraw=$here/../../selftests/guest/rbraw.py
tmp=$(mktemp -d /tmp/wrap-bench.XXXXXX)
wl=$tmp/wrap_load
gcc -O1 -fno-omit-frame-pointer -o "$wl" "$here/../../selftests/guest/prog/wrap_load.c"
events="kmem:kmem_cache_alloc sched:sched_switch raw_syscalls:sys_enter"
PCT=/sys/module/ftrace_stackmap/parameters/redefine_pct

# shellcheck source=tools/bench/lib.sh
. "$here/lib.sh"	# tsum, type_ids

grep -q '^ftrace_stackmap ' /proc/modules || insmod "$ko" bits=14
type_ids	# ks, sid, ours
ours_all=$ours
for e in user_stack file_map; do
	ours_all=$ours_all,$(<"$T/events/stackmap/$e/id")
done
srcs=""
for e in $events; do
	srcs=$srcs${srcs:+,}$(<"$T/events/${e%%:*}/${e#*:}/id")
done

# run NAME KB MODE ROUNDS: a recording in instance NAME, left stopped
run() {
	local name=$1 kb=$2 mode=$3 rounds=$4 I=$T/instances/$1 e c held lost w
	mkdir "$I"
	echo "$kb" >"$I/buffer_size_kb"
	echo 1 >"$I/options/overwrite"
	case $mode in
	first*) echo 0 >"$PCT" ;;
	*) echo 50 >"$PCT" ;;
	esac
	if [ "$mode" = stacktrace ]; then
		echo 1 >"$I/options/stacktrace"
	else
		echo "$events" >"$I/stack_map_events"
		echo 1 >"$I/options/stackmap"
		case $mode in *_user) echo 1 >"$I/options/stackmap_user" ;; esac
	fi
	for e in $events; do
		echo 1 >"$I/events/${e%%:*}/${e#*:}/enable"
	done
	"$wl" "$rounds" 64 >/dev/null
	echo 0 >"$I/tracing_on"
	w=0
	for c in "$I"/per_cpu/cpu*; do
		held=$(sed -n 's/^entries: //p' "$c/stats")
		lost=$(sed -n 's/^overrun: //p' "$c/stats")
		[ $((lost / (held ? held : 1))) -gt $w ] && w=$((lost / (held ? held : 1)))
	done
	echo "$w" >"$tmp/$name.wraps"
	cp "$I/stack_map_stat" "$tmp/$name.stat" 2>/dev/null || true
	# stop its probes; the buffer stays as it is
	echo 0 >"$I/events/enable"
	[ "$mode" = stacktrace ] || echo 0 >"$I/options/stackmap"
	echo 0 >"$I/options/stacktrace"
}

sizes="64:64k:4000 4096:4m:30000"
pairs=()
for s in $sizes; do
	IFS=: read -r kb tag rounds <<<"$s"
	for mode in first redefine stacktrace first_user redefine_user; do
		run "b_${tag}_$mode" "$kb" "$mode" "$rounds"
		pairs+=("$T/instances/b_${tag}_$mode" "$tmp/b_${tag}_$mode.rb")
	done
done
echo 50 >"$PCT"
/usr/bin/python3 "$rbraw" "${pairs[@]}"

for s in $sizes; do
	IFS=: read -r kb tag rounds <<<"$s"
	f=$tmp/b_${tag}
	echo "wrap_${tag}_wraps=$(<"${f}_redefine.wraps")"
	awk -v ef="$(tsum "${f}_first.rb" "$srcs" count)" \
		-v er="$(tsum "${f}_redefine.rb" "$srcs" count)" \
		-v es="$(tsum "${f}_stacktrace.rb" "$srcs" count)" \
		-v esb="$(tsum "${f}_stacktrace.rb" "$srcs" bytes)" \
		-v kb="$(tsum "${f}_stacktrace.rb" "$ks" bytes)" -v kn="$(tsum "${f}_stacktrace.rb" "$ks" count)" \
		-v of="$(tsum "${f}_first.rb" "$ours" bytes)" -v or="$(tsum "${f}_redefine.rb" "$ours" bytes)" \
		-v eu0="$(tsum "${f}_first_user.rb" "$srcs" count)" \
		-v eu1="$(tsum "${f}_redefine_user.rb" "$srcs" count)" \
		-v ou0="$(tsum "${f}_first_user.rb" "$ours_all" bytes)" \
		-v ou1="$(tsum "${f}_redefine_user.rb" "$ours_all" bytes)" \
		-v tag="$tag" 'BEGIN {
		e = esb / es; k = kb / kn; lim = (e + k) / (e + 16)
		printf "wrap_%s_events_first=%d\n", tag, ef
		printf "wrap_%s_events_redefine=%d\n", tag, er
		printf "wrap_%s_events_stacktrace=%d\n", tag, es
		printf "wrap_%s_bytes_per_event_first=%.1f\n", tag, of / ef
		printf "wrap_%s_bytes_per_event_redefine=%.1f\n", tag, or / er
		printf "wrap_%s_extra_bytes_ratio=%.2f\n", tag, (or / er) / (of / ef)
		printf "wrap_%s_retained_vs_first=%.2f\n", tag, er / ef
		printf "wrap_%s_retained_ratio_first=%.2f\n", tag, ef / es
		printf "wrap_%s_retained_ratio_redefine=%.2f\n", tag, er / es
		printf "wrap_%s_retained_limit=%.2f\n", tag, lim
		printf "wrap_%s_retained_of_limit_first=%.2f\n", tag, ef / es / lim
		printf "wrap_%s_retained_of_limit_redefine=%.2f\n", tag, er / es / lim
		printf "wrap_%s_user_extra_bytes_ratio=%.2f\n", tag, (ou1 / eu1) / (ou0 / eu0)
		printf "wrap_%s_user_retained_vs_first=%.2f\n", tag, eu1 / eu0
	}'
	# whole-run counts of the kernel-stacks run (stack_map_stat)
	awk -v r="$(sed -n 's/^redefinitions: //p' "${f}_redefine.stat")" \
		-v d="$(sed -n 's/^inline_emits: //p' "${f}_redefine.stat")" \
		-v n="$(sed -n 's/^records: //p' "${f}_redefine.stat")" -v tag="$tag" 'BEGIN {
		printf "wrap_%s_redefinitions_per_1k_records=%.1f\n", tag, 1000 * r / n
		printf "wrap_%s_first_definitions_per_1k_records=%.1f\n", tag, 1000 * (d - r) / n
	}'
done
for s in $sizes; do
	IFS=: read -r kb tag rounds <<<"$s"
	for mode in first redefine stacktrace first_user redefine_user; do
		rmdir "$T/instances/b_${tag}_$mode"
	done
done
rm -rf "$tmp"
rmmod ftrace_stackmap
