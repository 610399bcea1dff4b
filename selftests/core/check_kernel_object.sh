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
# Usage: check_kernel_object.sh <repo root> <scratch dir> [g++]
set -eu

root=$1
out=$2
cxx=${3:-g++-12}
obj=$out/core_unity.kernel.o
mkdir -p "$out"

set -x
$cxx -std=gnu++20 -ffreestanding -fno-exceptions -fno-rtti \
	-fno-threadsafe-statics -fno-use-cxa-atexit -fno-unwind-tables \
	-fno-asynchronous-unwind-tables -nostdinc++ -mno-red-zone \
	-mcmodel=kernel -fno-pic -mno-sse -mno-mmx -mno-sse2 -mno-80387 \
	-mno-fp-ret-in-387 -fno-strict-aliasing -O2 -DFSM_KERNEL \
	-Wall -Wextra -Werror -c "$root/src/core/core_unity.cpp" -o "$obj"
set +x

status=0
bad_sections=$(objdump -h "$obj" | awk 'NF >= 7 { print $2 }' |
	grep -E '^\.(init_array|ctors|fini_array|dtors|eh_frame|gcc_except_table)' || true)
if [ -n "$bad_sections" ]; then
	echo "FAIL: forbidden sections: $bad_sections"
	status=1
fi

bad_syms=$(nm -u "$obj" | awk '{ print $2 }' |
	grep -Ev '^(fsm_plat_(alloc|free|cpu|nr_cpus|yield|random)|memcpy|memset|memcmp)$' || true)
if [ -n "$bad_syms" ]; then
	echo "FAIL: unexpected undefined symbols:"
	echo "$bad_syms"
	status=1
fi

# The exported C ABI must be there, unmangled.
for f in fsm_map_create fsm_map_destroy fsm_map_insert fsm_map_reset \
	 fsm_map_nr_ids fsm_map_lookup_id fsm_map_stats fsm_drop_reason_name \
	 fsm_core_selfcheck; do
	if ! nm "$obj" | grep -q " T $f\$"; then
		echo "FAIL: $f not defined"
		status=1
	fi
done

[ $status -eq 0 ] && echo "kernel object check: ok ($(size "$obj" | awk 'NR==2 {print $1}') bytes text)"
exit $status
