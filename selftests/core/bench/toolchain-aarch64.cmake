# SPDX-License-Identifier: GPL-2.0
#
# toolchain-aarch64.cmake - cross-build the core benchmark for AArch64 with
# Debian's cross g++ (g++-12-aarch64-linux-gnu, scripts/deps), linked
# statically so that qemu-user runs it without an arm64 root:
#
#   cmake -S selftests/core/bench -B build/core-bench-arm64 \
#         -DCMAKE_TOOLCHAIN_FILE=selftests/core/bench/toolchain-aarch64.cmake
#
# ctest and scripts/bench run it under qemu-aarch64-static
# (CMAKE_CROSSCOMPILING_EMULATOR), as selftests/core/unwind runs its
# cross-built chain programs.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
find_program(FSM_A64_CXX aarch64-linux-gnu-g++-12 REQUIRED)
find_program(FSM_A64_QEMU qemu-aarch64-static REQUIRED)
set(CMAKE_CXX_COMPILER "${FSM_A64_CXX}")
set(CMAKE_CROSSCOMPILING_EMULATOR "${FSM_A64_QEMU}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# Libraries and headers from the cross compiler's own tree only.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
