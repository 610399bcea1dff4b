#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/deps/run.sh - TAP tests of the set-up (scripts/deps), run by the
# deps stage of `make check` after the install:
#  - the project's list installs together in one apt transaction on this
#    machine, on a fresh machine of the project's kind and on an empty one;
#  - the check cannot pass while the list conflicts: with gcc-multilib added
#    back (the Debian 12 conflict with every cross gcc) it fails, whether the
#    machine has none, one or both of the conflicting packages;
#  - a machine that has gcc-multilib is told, not silently changed;
#  - the abilities the packages give: -m32 programs (scripts/m32-cc, no
#    gcc-multilib), arm64 and armhf cross compilers.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
deps=$repo/scripts/deps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
# expect DESC RC-WANTED(0|nonzero) REGEX ENV... : run deps --check
expect() {
	local desc=$1 want=$2 re=$3 rc
	shift 3
	env "$@" "$deps" --check >"$tmp/out" 2>&1
	rc=$?
	if { [ "$want" = 0 ] && [ $rc -eq 0 ]; } ||
		{ [ "$want" = nonzero ] && [ $rc -ne 0 ]; }; then
		if [ -z "$re" ] || grep -E -- "$re" "$tmp/out" >/dev/null; then
			ok "$desc"
			return
		fi
	fi
	bad "$desc (exit $rc)"
	sed -n '1,20s/^/# /p' "$tmp/out"
}

expect "the project's list installs together (this machine, fresh image, empty)" 0 \
	'installs together on a machine with no packages'
expect "the check covers the fresh image's packages" 0 \
	"installs together on a fresh machine of the project's kind"

cross=g++-12-aarch64-linux-gnu
for inst in "" gcc-multilib "$cross" "gcc-multilib $cross"; do
	expect "conflicting list (gcc-multilib + cross gcc) fails; installed: ${inst:-none}" \
		nonzero 'Conflicts: gcc-multilib|gcc-multilib : Conflicts' \
		FSM_DEPS_EXTRA=gcc-multilib FSM_DEPS_INSTALLED="$inst"
done
expect "a machine with gcc-multilib is told that the list would replace it" \
	nonzero 'gcc-multilib' FSM_DEPS_INSTALLED=gcc-multilib

if "$deps" --list | grep -x gcc-multilib >/dev/null; then
	bad "gcc-multilib is not in the list"
else
	ok "gcc-multilib is not in the list"
fi

# -m32 without gcc-multilib: a program that needs <asm/...> (errno.h does).
cat >"$tmp/m32.c" <<'C'
#include <errno.h>
#include <stdio.h>
int main(void) { printf("%d %d\n", (int)sizeof(void *), errno); return 0; }
C
# The build is checked everywhere: an ELF32 i386 executable (EI_CLASS 1,
# e_machine 3). Running it needs a host kernel that takes i386 programs: one
# built without IA32_EMULATION, or booted with ia32_emulation=0 (seen on a
# 6.18 host), refuses them with ENOEXEC. Then the run is skipped, with the
# reason; the guests' kernels take them, and ustack_chain and tools_report
# run -m32 programs there.
if "$repo/scripts/m32-cc" -O1 -o "$tmp/m32" "$tmp/m32.c" 2>"$tmp/err" &&
	[ "$(od -An -tu1 -j4 -N1 "$tmp/m32" | tr -d ' ')" = 1 ] &&
	[ "$(od -An -tu2 -j18 -N2 "$tmp/m32" | tr -d ' ')" = 3 ]; then
	ok "scripts/m32-cc builds a 32-bit i386 program that includes <asm/*.h>"
	out=$("$tmp/m32" 2>"$tmp/err")
	if [ "$out" = "4 0" ]; then
		ok "the 32-bit program runs"
	elif grep -q 'Exec format error' "$tmp/err"; then
		ok "the 32-bit program runs # SKIP this host's kernel ($(uname -r)) refuses i386 programs (Exec format error); the guests run them"
	else
		bad "the 32-bit program runs (printed '$out')"
		sed 's/^/# /' "$tmp/err"
	fi
else
	bad "scripts/m32-cc builds a 32-bit i386 program"
	sed 's/^/# /' "$tmp/err"
fi

echo 'int f(int x) { return x + 1; }' >"$tmp/x.c"
for cc in aarch64-linux-gnu-gcc-12 aarch64-linux-gnu-g++-12 arm-linux-gnueabihf-gcc-12; do
	if "$cc" -x c -c -o "$tmp/x.o" "$tmp/x.c" 2>"$tmp/err"; then
		ok "cross compiler $cc"
	else
		bad "cross compiler $cc"
		sed 's/^/# /' "$tmp/err"
	fi
done

echo "1..$n"
[ "$fail" -eq 0 ]
