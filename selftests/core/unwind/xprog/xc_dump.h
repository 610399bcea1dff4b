/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xc_dump.h - the dump chain.c writes and test_unwind_xarch.cpp reads:
 * this header, then xc_header.len bytes of stack starting at xc_header.sp.
 * Fixed-size fields, little endian (both targets and the host are).
 */
#ifndef FSM_SELFTESTS_XC_DUMP_H
#define FSM_SELFTESTS_XC_DUMP_H

#include <stdint.h>

#define XC_MAGIC	0x31435846u	/* "FXC1" */
#define XC_ARCH_AARCH64	1u
#define XC_ARCH_ARM	2u

/* The dump is written, but pac-ret signed the saved lr with a code of 0. */
#define XC_EXIT_PAC_ZERO	3

/* xc_header.leaf */
#define XC_MODE_CHAIN	0	/* xc_capture (has a frame record) */
#define XC_MODE_LEAF	1	/* xc_capture_leaf (a leaf that copies the stack) */
#define XC_MODE_SINK	2	/* xc_sink_leaf (a leaf without register pressure) */
/*
 * xc_capture_sys calls getpid() / write(-1, buf, 0) and dumps the stack from
 * XC_SYS_BELOW bytes below its sp once the wrapper returned; the registers
 * at the wrapper's svc come from qemu-user's CPU log (run_svc.sh), and
 * pc, fp, lr, r11, r7 are 0 in the header (sp: where the bytes start).
 */
#define XC_MODE_SYS_GETPID	3
#define XC_MODE_SYS_WRITE	4
#define XC_SYS_BELOW	256

struct xc_header {
	uint32_t magic;
	uint32_t arch;		/* XC_ARCH_* */
	uint32_t thumb;		/* AArch32: the capture ran in Thumb state */
	uint32_t leaf;		/* XC_MODE_*: where the capture ran */
	uint64_t pc;		/* an address inside the capture function */
	uint64_t sp;
	uint64_t fp;		/* x29; AArch32: r7 in Thumb state, else r11 */
	uint64_t lr;		/* x30 / r14 */
	uint64_t r11;		/* AArch32 only */
	uint64_t r7;		/* AArch32 only */
	uint64_t len;		/* stack bytes that follow */
};

#endif /* FSM_SELFTESTS_XC_DUMP_H */
