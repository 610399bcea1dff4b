#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check_kernel_object.sh - compile src/core/core_unity.cpp the way the kernel
# module does (freestanding, no exceptions/RTTI/SSE, -mcmodel=kernel,
# FSM_KERNEL) and check the object: no constructor/unwind sections, and no
# undefined symbol other than the fsm_plat_* hooks and memcpy/memset/memcmp
# (anything else, e.g. a libgcc helper such as __udivti3 or
# __atomic_compare_exchange_16, would not link into a module).
#
# With aarch64-linux-gnu-g++-12 installed it also checks the arm64 object.
#
# Usage: check_kernel_object.sh <repo root> <scratch dir> [g++]
set -eu

root=$1
out=$2
cxx=${3:-g++-12}
mkdir -p "$out"
status=0

# check <label> <object> <nm> <objdump>
check() {
	label=$1 obj=$2 nm=$3 objdump=$4
	bad_sections=$($objdump -h "$obj" | awk 'NF >= 7 { print $2 }' |
		grep -E '^\.(init_array|ctors|fini_array|dtors|eh_frame|gcc_except_table)' || true)
	if [ -n "$bad_sections" ]; then
		echo "FAIL($label): forbidden sections: $bad_sections"
		status=1
	fi
	bad_syms=$($nm -u "$obj" | awk '{ print $2 }' |
		grep -Ev '^(fsm_plat_(alloc|free|cpu|nr_cpus|yield|random|nopreempt_begin|nopreempt_end)|memcpy|memset|memcmp)$' || true)
	if [ -n "$bad_syms" ]; then
		echo "FAIL($label): unexpected undefined symbols:"
		echo "$bad_syms"
		status=1
	fi
	# The exported C ABI must be there, unmangled.
	for f in fsm_map_create fsm_map_destroy fsm_map_insert fsm_map_reset \
		 fsm_map_nr_ids fsm_map_lookup_id fsm_map_stats fsm_drop_reason_name \
		 fsm_core_selfcheck; do
		if ! $nm "$obj" | grep -q " T $f\$"; then
			echo "FAIL($label): $f not defined"
			status=1
		fi
	done
	echo "$label: ok, $(size "$obj" | awk 'NR == 2 { print $1 }') bytes of text"
}

common="-std=gnu++20 -ffreestanding -fno-exceptions -fno-rtti \
	-fno-threadsafe-statics -fno-use-cxa-atexit -fno-unwind-tables \
	-fno-asynchronous-unwind-tables -nostdinc++ -fno-strict-aliasing -O2 \
	-DFSM_KERNEL -Wall -Wextra -Werror"

# x86-64, the flags of the Debian 6.1 kernel that matter for codegen.
obj=$out/core_unity.x86_64.o
set -x
$cxx $common -mno-red-zone -mcmodel=kernel -fno-pic -mno-sse -mno-mmx \
	-mno-sse2 -mno-80387 -mno-fp-ret-in-387 \
	-c "$root/src/core/core_unity.cpp" -o "$obj"
set +x
check x86_64 "$obj" nm objdump
# The core knows no kernel layout: it reads the CPU number through the
# glue's fsm_plat_cpu() (platform_kernel.h), never a per-CPU variable of
# the kernel (6.1's cpu_number is a field of pcpu_hot from 6.2 on).
if ! nm -u "$obj" | grep -q ' fsm_plat_cpu$'; then
	echo "FAIL(x86_64): the core does not read the CPU number through fsm_plat_cpu()"
	status=1
fi
if nm -u "$obj" | grep -Eq ' (cpu_number|pcpu_hot)$'; then
	echo "FAIL(x86_64): the core reads a kernel per-CPU variable itself"
	status=1
fi

# arm64, with the cross compiler scripts/deps installs (g++-12-aarch64-linux-gnu):
# catches libgcc outline-atomics helpers, among others.
if command -v aarch64-linux-gnu-g++-12 >/dev/null 2>&1; then
	obj=$out/core_unity.arm64.o
	set -x
	aarch64-linux-gnu-g++-12 $common -mgeneral-regs-only -mabi=lp64 \
		-c "$root/src/core/core_unity.cpp" -o "$obj"
	set +x
	check arm64 "$obj" aarch64-linux-gnu-nm aarch64-linux-gnu-objdump
else
	# scripts/deps installs it: missing is a failure, not a skip.
	echo "arm64: FAILED: no aarch64-linux-gnu-g++-12 (run scripts/deps)"
	status=1
fi

[ $status -eq 0 ] && echo "kernel object check: ok"
exit $status
