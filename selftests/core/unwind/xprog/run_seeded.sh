#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run_seeded.sh QEMU PROG DUMP [MODE] - run a chain program under qemu-user
# with a fixed seed (-seed: the pointer-authentication keys and AT_RANDOM
# come from it), so that a dump is the same on every run on one machine.
# The stack address depends on the environment, and with it the codes
# pac-ret makes: a program whose saved lr got a code of 0 (1 run in 128)
# exits 3 (XC_EXIT_PAC_ZERO, xc_dump.h), and the next seed is tried.
set -u

qemu=$1 prog=$2 dump=$3
shift 3
for seed in 1 2 3 4 5 6 7 8; do
	"$qemu" -seed "$seed" "$prog" "$dump" "$@"
	rc=$?
	[ "$rc" -ne 3 ] && exit "$rc"
	echo "run_seeded.sh: $prog${*:+ $*}: seed $seed signed lr with a PAC of 0, next seed" >&2
done
echo "run_seeded.sh: $prog${*:+ $*}: 8 seeds in a row gave a PAC of 0" >&2
exit 1
