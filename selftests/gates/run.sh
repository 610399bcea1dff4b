#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh KDIR - negative tests of the C++ build gates (TAP output).
# An arm64 KDIR (CONFIG_ARM64 in its .config) is cross-built
# (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-): there is no objtool for
# arm64 in 6.1 (that case is a SKIP), and outline atomics are refused.
#
# Each case in cases/ is built as a tiny module through the very same C++
# rule as ftrace_stackmap.ko (scripts/kbuild/cxx.mk, scripts/cxx-gate,
# scripts/objtool-strict, scripts/check-ko). good.cpp must build; every
# bad_*.cpp must be rejected, by the gate named in the table below (the
# expected message), so a test fails if a gate stops working or if the
# build breaks for an unrelated reason.
set -uo pipefail

kdir=${1:?usage: run.sh KDIR}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/fsm-gates.XXXXXX)
trap 'rm -rf "$work"' EXIT

# case  expected-result  pattern that must appear in the build output
cases=(
	"good         pass  ''"
	"bad_ctor     fail  'forbidden section.*\\.init_array'"
	"bad_attr_ctor fail 'forbidden section.*(\\.init_array|non-sanitizer)'"
	"bad_eh       fail  'forbidden section.*\\.eh_frame'"
	"bad_runtime  fail  'runtime/libgcc symbol.*(__udivti3|__cxa_pure_virtual)'"
	"bad_objtool  fail  'objtool-strict: .*objtool warnings are errors'"
	"bad_outline_atomics fail 'runtime/libgcc symbol.*__aarch64_ldadd8_acq_rel'"
	"bad_comdat   fail  'COMDAT group.*twice'"
)
cross=()
arch=x86
if grep -q '^CONFIG_ARM64=y' "$kdir/.config" 2>/dev/null; then
	arch=arm64
	cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
fi
# skip_case NAME: why NAME does not apply to this architecture, or nothing
skip_case() {
	case $arch:$1 in
	arm64:bad_objtool) echo "no objtool for arm64 in 6.1" ;;
	x86:bad_outline_atomics) echo "arm64 only (x86 atomics are instructions)" ;;
	esac
}

build_case() { # name -> build log in $work/$1.log, returns make status
	local d=$work/$1
	mkdir -p "$d"
	cp "$here/cases/$1.cpp" "$d/gate.cpp"
	cp "$here/gate_c.c" "$d/gate_c.c"
	cat > "$d/Kbuild" <<KB
obj-m += fsm_gate.o
fsm_gate-y := gate_c.o gate.o
FSM_GATE := $repo/scripts/cxx-gate
include $repo/scripts/kbuild/cxx.mk
KB
	{
		FSM_REAL_OBJTOOL=$kdir/tools/objtool/objtool \
		make -C "$kdir" "${cross[@]}" M="$d" objtool="$repo/scripts/objtool-strict" \
			FSM_REAL_OBJTOOL="$kdir/tools/objtool/objtool" modules &&
		"$repo/scripts/check-ko" "$d/fsm_gate.ko"
	} > "$work/$1.log" 2>&1
}

n=0 failed=0
echo "TAP version 13"
echo "1..${#cases[@]}"
for c in "${cases[@]}"; do
	eval "set -- $c"
	name=$1 want=$2 pattern=$3
	n=$((n + 1))
	why=$(skip_case "$name")
	if [ -n "$why" ]; then
		echo "ok $n - gate: $name # SKIP $why"
		continue
	fi
	if build_case "$name"; then got=pass; else got=fail; fi
	if [ "$got" = "$want" ] &&
	   { [ -z "$pattern" ] || grep -Eq "$pattern" "$work/$name.log"; }; then
		echo "ok $n - gate: $name ($want${pattern:+, matched })"
	else
		echo "not ok $n - gate: $name: expected $want${pattern:+ with /$pattern/}, got $got"
		sed 's/^/# /' "$work/$name.log" | tail -25
		failed=$((failed + 1))
	fi
done
exit $((failed > 0))
