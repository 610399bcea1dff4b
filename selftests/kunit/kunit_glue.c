// SPDX-License-Identifier: GPL-2.0
/*
 * The KUnit module carries its own copy of the core's kernel platform glue,
 * compiled from the very same source as ftrace_stackmap.ko's.
 */
#include "../../src/kernel/core_glue.c"
