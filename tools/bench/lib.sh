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
