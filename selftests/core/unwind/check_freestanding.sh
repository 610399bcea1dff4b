#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check_freestanding.sh SRCDIR OUTDIR [CXX] - the unwind core files compile
# as kernel C++ and produce objects the module loader can take.
#
# Compiles src/core/unwind_{user,cache}.cpp, each alone and both in one
# unity TU, with the kernel's C++ subset and x86-64 kernel code model, then
# refuses: .init_array .ctors .fini_array .dtors .eh_frame
# .gcc_except_table sections, and any undefined symbol but memcpy/memset.
# With aarch64-linux-gnu-g++-12 and/or clang available, also cross-compiles
# for aarch64 (and armv7 with clang), same rules: the walker is meant for
# arm64 kernels too.
# Prints TAP; exits non-zero on any failure.
set -u
src=${1:?usage: check_freestanding.sh SRCDIR OUTDIR [CXX]}
out=${2:?usage: check_freestanding.sh SRCDIR OUTDIR [CXX]}
cxx=${3:-g++-12}
mkdir -p "$out"

common="-std=gnu++20 -ffreestanding -fno-exceptions -fno-rtti
	-fno-threadsafe-statics -fno-use-cxa-atexit -fno-unwind-tables
	-fno-asynchronous-unwind-tables -nostdinc -nostdinc++ -fno-common -O2
	-DFSM_KERNEL -Wall -Wextra -Wno-unused-parameter -Werror
	-Wno-missing-field-initializers"
x86="-mno-red-zone -mcmodel=kernel -fno-pic -mno-sse -mno-mmx -mno-sse2 -mno-80387"

printf '#include "%s/unwind_user.cpp"\n#include "%s/unwind_cache.cpp"\n' \
	"$src" "$src" > "$out/unwind_unity.cpp"

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }

# check NAME OBJ NM OBJDUMP
check() {
	secs=$($4 -h "$2" | awk '{print $2}' |
		grep -E '^\.(init_array|ctors|fini_array|dtors|eh_frame|gcc_except_table)' |
		tr '\n' ' ')
	undef=$($3 -u "$2" | awk '{print $NF}' | grep -vxE 'memcpy|memset' | tr '\n' ' ')
	if [ -n "$secs" ]; then
		bad "$1: forbidden sections: $secs"
	elif [ -n "$undef" ]; then
		bad "$1: undefined symbols: $undef"
	else
		ok "$1"
	fi
}

# build NAME COMPILER FLAGS SOURCE NM OBJDUMP
build() {
	obj=$out/$1.o
	# shellcheck disable=SC2086
	if $2 $3 -c "$4" -o "$obj" > "$out/$1.log" 2>&1; then
		check "$1" "$obj" "$5" "$6"
	else
		sed 's/^/# /' "$out/$1.log" | head -20
		bad "$1: does not compile"
	fi
}

if command -v "$cxx" > /dev/null 2>&1 && [ "$(uname -m)" = x86_64 ]; then
	for f in unwind_user unwind_cache; do
		build "kernel-x86_64-$f" "$cxx" "$common $x86" "$src/$f.cpp" nm objdump
	done
	build kernel-x86_64-unity "$cxx" "$common $x86" "$out/unwind_unity.cpp" nm objdump
else
	ok "kernel-x86_64 # SKIP no $cxx or not an x86_64 host"
fi

# arm64: GCC (10+) and clang (when they find an aarch64 libgcc) default to
# -moutline-atomics, which turns every __atomic builtin into a call to
# libgcc's __aarch64_ldadd8_acq & co., undefined in a module. The arm64
# kernel Makefile (6.1) does not pass -mno-outline-atomics, so the module's
# C++ flags must.
arm64="-mgeneral-regs-only -mno-outline-atomics"
if command -v aarch64-linux-gnu-g++-12 > /dev/null 2>&1; then
	build kernel-aarch64-gcc-unity aarch64-linux-gnu-g++-12 "$common $arm64" \
		"$out/unwind_unity.cpp" aarch64-linux-gnu-nm aarch64-linux-gnu-objdump
else
	# scripts/deps installs it: missing is a failure, not a skip.
	bad "kernel-aarch64-gcc-unity: no aarch64-linux-gnu-g++-12 (run scripts/deps)"
fi
if command -v clang++ > /dev/null 2>&1 && command -v llvm-nm > /dev/null 2>&1 &&
   command -v llvm-objdump > /dev/null 2>&1; then
	build kernel-aarch64-unity clang++ "--target=aarch64-linux-gnu $common $arm64" \
		"$out/unwind_unity.cpp" llvm-nm llvm-objdump
	build kernel-armv7-unity clang++ "--target=armv7a-linux-gnueabihf $common" \
		"$out/unwind_unity.cpp" llvm-nm llvm-objdump
else
	ok "kernel-arm # SKIP no clang++/llvm-nm/llvm-objdump"
fi

echo "1..$n"
[ "$fail" -eq 0 ]
