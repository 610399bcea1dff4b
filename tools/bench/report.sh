#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# report.sh MODULE.ko [MB] - stackmap-report's speed (make bench; run by
# scripts/bench). The stock guest records a trace.dat of at least MB MiB
# (default 110; tools/bench/report-guest.sh) and writes it to the host;
# here, side by side on that one file, with output to /dev/null, the best
# of two runs each (interleaved), in CPU seconds (user + system; the wall
# times are printed too):
#   report_speed_ratio  trace-cmd report's time / stackmap-report report's
#                       time: our throughput over trace-cmd's (target >= 1)
#   folded_mb_per_s     the file's MiB / stackmap-report folded's time
#   multi_vs_one_records_ratio
#                       folded of 20 traces of about the same total size
#                       (-i DIR: each with its own ids and symbols) against
#                       the one big trace: records per CPU second of the
#                       20 over those of the one (1: no cost for many inputs;
#                       each trace has its fixed part, kallsyms and formats,
#                       about 4 MiB here: the 20 hold fewer records)
#   multi_vs_one_mb_ratio  the same in MiB per CPU second
#   trace_mb, multi_mb, *_cpu_s, *_wall_s, *_records
# The user files of the recording stay in the guest: user frames print as
# path+offset here (libdwfl is asked and finds nothing). No thresholds.
set -euo pipefail

ko=${1:?usage: report.sh MODULE.ko [MB]}
mb=${2:-110}
repo=$(cd "$(dirname "$0")/../.." && pwd)
sr=$repo/build/tools/stackmap-report
make -C "$repo" tools >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
FSM_VM_KEEP=1 "$repo/scripts/vm-run" --kernel stock --timeout 1200 -- \
	"$repo/tools/bench/report-guest.sh" "$ko" "$mb" 2>"$log" || { cat "$log" >&2; exit 1; }
dir=$(sed -n 's/^vm-run: run directory kept: //p' "$log")
f=$dir/report-bench.dat
[ -s "$f" ] || { echo "report.sh: no trace from the guest" >&2; cat "$log" >&2; exit 1; }

# secs CMD...: "CPU WALL" seconds of CMD (user + system; output to
# /dev/null). The ratios use CPU time: the machine is shared, wall time
# mostly measures the others' load.
secs() {
	local TIMEFORMAT='%3U %3S %3R' t
	t=$({ time "$@" >/dev/null 2>&1; } 2>&1) || { echo "report.sh: failed: $*" >&2; return 1; }
	awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' <<<"$t"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); print (x[1] < y[1] ? a : b) }'; }
tc="1e9 0" sr_r="1e9 0" sr_f="1e9 0" sr_m="1e9 0"
for _ in 1 2; do
	tc=$(min "$tc" "$(secs trace-cmd report -i "$f")")
	sr_r=$(min "$sr_r" "$(secs "$sr" report -i "$f")")
	sr_f=$(min "$sr_f" "$(secs "$sr" folded -i "$f")")
	sr_m=$(min "$sr_m" "$(secs "$sr" folded -i "$dir/multi")")
done
# records: stackmap-report's summary line on stderr
recs() { "$sr" folded "$@" 2>&1 >/dev/null | sed -n 's/^stackmap-report: \([0-9]*\) id records.*/\1/p'; }
one_recs=$(recs -i "$f")
multi_recs=$(recs -i "$dir/multi")
if [ -z "$one_recs" ] || [ -z "$multi_recs" ]; then echo "report.sh: no record count" >&2; exit 1; fi
sz=$(stat -c %s "$f")
msz=$(du -cb "$dir"/multi/*.dat | awk 'END { print $1 }')
nmulti=$(find "$dir/multi" -name '*.dat' | wc -l)
rm -rf "$dir"
awk -v s="$sz" -v tc="$tc" -v r="$sr_r" -v f="$sr_f" -v m="$sr_m" -v ms="$msz" \
	-v orec="$one_recs" -v mrec="$multi_recs" -v nm="$nmulti" 'BEGIN {
	split(tc, a, " "); split(r, b, " "); split(f, c, " "); split(m, d, " ")
	printf "trace_mb=%.1f\n", s / 1048576
	printf "tracecmd_report_cpu_s=%.2f\n", a[1]
	printf "smr_report_cpu_s=%.2f\n", b[1]
	printf "smr_folded_cpu_s=%.2f\n", c[1]
	printf "tracecmd_report_wall_s=%.2f\n", a[2]
	printf "smr_report_wall_s=%.2f\n", b[2]
	printf "smr_folded_wall_s=%.2f\n", c[2]
	printf "report_speed_ratio=%.2f\n", a[1] / b[1]
	printf "folded_mb_per_s=%.1f\n", s / 1048576 / c[1]
	printf "multi_traces=%d\n", nm
	printf "multi_mb=%.1f\n", ms / 1048576
	printf "one_records=%d\n", orec
	printf "multi_records=%d\n", mrec
	printf "smr_folded_multi_cpu_s=%.2f\n", d[1]
	printf "smr_folded_multi_wall_s=%.2f\n", d[2]
	printf "one_records_per_s=%.0f\n", orec / c[1]
	printf "multi_records_per_s=%.0f\n", mrec / d[1]
	printf "multi_vs_one_records_ratio=%.2f\n", (mrec / d[1]) / (orec / c[1])
	printf "multi_vs_one_mb_ratio=%.2f\n", (ms / d[1]) / (s / c[1])
}'
