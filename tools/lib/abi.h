/* SPDX-License-Identifier: GPL-2.0 */
/*
 * abi.h - the module's ABI for the tools: include/ftrace_stackmap/abi.h
 * and ustack_abi.h, included as they are (they need only __le/__u types).
 */
#ifndef STACKMAP_REPORT_ABI_H
#define STACKMAP_REPORT_ABI_H

#include <linux/types.h>
#include "ftrace_stackmap/abi.h"
#include "ftrace_stackmap/ustack_abi.h"

#endif
