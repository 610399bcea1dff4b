# SPDX-License-Identifier: GPL-2.0
#
# core_libs.cmake - the core as the module compiles it, for user space.
# Included by selftests/core/CMakeLists.txt and by selftests/core/bench when
# that is built on its own (the arm64 cross build, Documentation/testing.rst
# "Benchmarks").
#
# In:  FSM_ROOT (the repository), FSM_SANITIZE ("" unless set).
# Out: FSM_CORE_DIR, FSM_CORE_FLAGS, the targets fsm_core (exactly what the
#      module compiles: one unity translation unit, restricted) and
#      fsm_platform_user (the fsm_plat_* hooks on libc).
set(FSM_CORE_DIR "${FSM_ROOT}/src/core")

set(FSM_CORE_FLAGS -fno-exceptions -fno-rtti -nostdinc++ -fno-threadsafe-statics
    -fno-use-cxa-atexit -fno-strict-aliasing -Wall -Wextra -Werror)
if(FSM_SANITIZE STREQUAL "address")
  list(APPEND FSM_CORE_FLAGS -fno-sanitize=vptr)	# needs RTTI
endif()
# The module never calls libgcc's outline atomics (platform_kernel.h turns
# them off with a pragma): inline LL/SC here too, as in the kernel.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$" AND
   CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND FSM_CORE_FLAGS -mno-outline-atomics)
endif()

add_library(fsm_core STATIC "${FSM_CORE_DIR}/core_unity.cpp")
target_compile_options(fsm_core PRIVATE ${FSM_CORE_FLAGS})
target_include_directories(fsm_core PUBLIC "${FSM_CORE_DIR}")

add_library(fsm_platform_user STATIC "${FSM_ROOT}/selftests/core/platform_user.cpp")
target_include_directories(fsm_platform_user PUBLIC "${FSM_CORE_DIR}"
                           "${FSM_ROOT}/selftests/core")
