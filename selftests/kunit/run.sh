#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run.sh DIR - in the debug guest: load DIR/ftrace_stackmap_kunit.ko, print
# the KTAP results of every suite it registered, exit non-zero on a failure.
dir=${1:?usage: run.sh DIR-with-kunit-module}
ko=$dir/ftrace_stackmap_kunit.ko
[ -d /sys/kernel/debug/kunit ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
insmod "$ko" || { echo "not ok 1 - kunit: insmod $ko failed"; exit 1; }
rc=0
found=0
for r in /sys/kernel/debug/kunit/ftrace_stackmap*/results; do
	[ -f "$r" ] || continue
	found=1
	cat "$r"
	grep -q '^[[:space:]]*not ok' "$r" && rc=1
done
[ $found -eq 1 ] || { echo "not ok 1 - kunit: no results in debugfs"; rc=1; }
rmmod ftrace_stackmap_kunit || { echo "not ok 1 - kunit: rmmod failed"; rc=1; }
exit $rc
