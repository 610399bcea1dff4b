// SPDX-License-Identifier: GPL-2.0
// The KUnit module's copy of the C++ core: the very same unity file that
// ftrace_stackmap.ko is built from (one C++ TU per module).
#include "../../src/core/core_unity.cpp"
