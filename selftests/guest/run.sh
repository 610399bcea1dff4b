#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh MODULE.ko [TEST...] - run the in-guest tests (all stackmap_*.sh,
# ustack_*.sh and tools_*.sh, or
# the named ones) as root on the kernel MODULE.ko was built for, normally
# inside the QEMU guest:
#
#   scripts/vm-run --kernel stock -- selftests/guest/run.sh build/stock/ftrace_stackmap.ko
#
# Each test prints TAP; this prints a TAP line per test script and a final
# summary ("# N passed, N failed"), and exits non-zero if any test failed or
# the kernel log gained a WARN/BUG/KASAN/lockdep report.
here=$(cd "$(dirname "$0")" && pwd)
ko=$(realpath "${1:?usage: run.sh MODULE.ko [TEST...]}")
shift
if [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=()
	for t in "$here"/stackmap_*.sh "$here"/ustack_*.sh "$here"/tools_*.sh; do
		tests+=("$(basename "$t" .sh)")
	done
fi

splat='WARNING:|BUG:|KASAN|UBSAN|Oops|Call Trace|lockdep|circular locking|possible recursive locking|suspicious RCU'
n=0
pass=0
fail=0
echo "TAP version 13"
echo "1..${#tests[@]}"
for t in "${tests[@]}"; do
	t=${t%.sh}
	n=$((n + 1))
	before=$(dmesg | grep -Ec "$splat")
	start=$(date +%s)
	bash "$here/$t.sh" "$ko" 2>&1 | sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	after=$(dmesg | grep -Ec "$splat")
	if [ "$after" != "$before" ]; then
		echo "    # kernel log:"
		dmesg | grep -E -A 20 "$splat" | tail -n 60 | sed 's/^/    # /'
		rc=125
	fi
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok $n - $t ($(($(date +%s) - start))s)"
	else
		fail=$((fail + 1))
		echo "not ok $n - $t (exit $rc, $(($(date +%s) - start))s)"
	fi
done
echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
