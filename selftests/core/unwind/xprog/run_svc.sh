#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run_svc.sh NM QEMU PROG MODE DUMP LOG - run the AArch32 chain program
# PROG in MODE (getpid, write) under qemu-user, logging the CPU state before
# every instruction of glibc's two syscall entry shapes, __libc_do_syscall
# and __getpid (one instruction per block: -singlestep; -d cpu; -dfilter),
# so that test_unwind_xarch.cpp can take the registers at the real "svc 0"
# (qemu-user has no other way to show them).
set -eu

nm=$1 qemu=$2 prog=$3 mode=$4 dump=$5 log=$6
range=""
for s in __libc_do_syscall __getpid; do
	a=$("$nm" "$prog" | awk -v s="$s" '$3 == s && ($2 == "T" || $2 == "t") { print $1; exit }')
	if [ -z "$a" ]; then
		echo "run_svc.sh: no $s in $prog" >&2
		exit 1
	fi
	range="${range:+$range,}0x$a+0x10"
done
rm -f "$log"
"$qemu" -singlestep -d cpu -dfilter "$range" -D "$log" "$prog" "$dump" "$mode"
test -s "$log"
