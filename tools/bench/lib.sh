# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib.sh - shared by the guest benchmarks (sourced).

# tsum FILE IDS FIELD: the sum of FIELD (count or bytes) over the lines of
# selftests/guest/rbraw.py's output FILE whose type is one of IDS (event
# type ids, comma separated).
tsum() {
	awk -v ids="$2" -v f="$3" 'BEGIN { n = split(ids, a, ","); for (i = 1; i <= n; i++) want["type=" a[i]] = 1 }
		want[$1] { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) s += kv[2] } }
		END { print s + 0 }' "$1"
}

# type_ids: the event type ids the benches count, from tracefs ($T): ks
# (ftrace:kernel_stack), sid (stackmap:stack_id) and ours (every record
# type of this module, comma separated).
type_ids() {
	local e
	ks=$(sed -n 's/^ID: //p' "$T/events/ftrace/kernel_stack/format")
	sid=$(<"$T/events/stackmap/stack_id/id")
	ours=$sid
	for e in stack_id_user stack_def stack_fallback stack_reset; do
		ours=$ours,$(<"$T/events/stackmap/$e/id")
	done
}
