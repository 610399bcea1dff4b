#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# report.sh MODULE.ko [MB] - stackmap-report's speed (make bench; run by
# scripts/bench). The stock guest records a trace.dat of at least MB MiB
# (default 110; tools/bench/report-guest.sh) and writes it to the host;
# here, side by side on that one file, with output to /dev/null, the best
# of two runs each (interleaved):
#   report_speed_ratio  trace-cmd report's time / stackmap-report report's
#                       time: our throughput over trace-cmd's (target >= 1)
#   folded_mb_per_s     the file's MiB / stackmap-report folded's time
#   trace_mb, tracecmd_report_s, smr_report_s, smr_folded_s
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

# best SECONDS of CMD... (output to /dev/null)
secs() {
	local a b
	a=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || { echo "report.sh: failed: $*" >&2; return 1; }
	b=$EPOCHREALTIME
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", b - a }'
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? a : b) }'; }
tc=999999 sr_r=999999 sr_f=999999
for _ in 1 2; do
	tc=$(min "$tc" "$(secs trace-cmd report -i "$f")")
	sr_r=$(min "$sr_r" "$(secs "$sr" report -i "$f")")
	sr_f=$(min "$sr_f" "$(secs "$sr" folded -i "$f")")
done
sz=$(stat -c %s "$f")
rm -rf "$dir"
awk -v s="$sz" -v tc="$tc" -v r="$sr_r" -v f="$sr_f" 'BEGIN {
	printf "trace_mb=%.1f\n", s / 1048576
	printf "tracecmd_report_s=%.2f\n", tc
	printf "smr_report_s=%.2f\n", r
	printf "smr_folded_s=%.2f\n", f
	printf "report_speed_ratio=%.2f\n", tc / r
	printf "folded_mb_per_s=%.1f\n", s / 1048576 / f
}'
