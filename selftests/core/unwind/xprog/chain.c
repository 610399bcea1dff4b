// SPDX-License-Identifier: GPL-2.0
/*
 * chain.c - a cross-built program with a known call chain that dumps its
 * own registers and stack, for the host-side walker test
 * (test_unwind_xarch.cpp). Built for AArch64, A32 (-marm) and Thumb
 * (-mthumb) with -fno-omit-frame-pointer -fno-optimize-sibling-calls,
 * static, and run under qemu-user (qemu-aarch64-static, qemu-arm-static).
 *
 * Call chain: main -> xc_f1 -> xc_f2 -> xc_f3 -> xc_capture (not a leaf:
 * it calls xc_sink, so it has a frame record), and, with argument "leaf",
 * main -> xc_f1 -> xc_f2 -> xc_f3 -> xc_capture_leaf (calls nothing: GCC
 * AArch64 keeps no frame record in a leaf, the return address stays in
 * lr), and, with argument "sink",
 * main -> xc_f1 -> xc_f2 -> xc_f3 -> xc_capture_sink -> xc_sink_leaf: a
 * leaf without register pressure (it only stores registers, through the
 * scratch registers), so that GCC -marm gives it the short frame
 * "str fp, [sp, #-4]!; add fp, sp, #0" (fp -> the saved fp, lr not saved)
 * and GCC -mthumb "push {r7}; add r7, sp, #0". xc_sink_leaf saves pc, sp,
 * the frame pointers and lr; its caller copies the stack right after it
 * returns (nothing runs below the caller's sp in between, so the stack is
 * the leaf's). With "getpid" or "write": main -> xc_f1 -> xc_f2 -> xc_f3 ->
 * xc_capture_sys -> glibc's wrapper, stopped at its svc (run_svc.sh).
 *
 * The capture functions read pc, sp, the frame pointer (x29; A32 r11;
 * Thumb r7, both are stored) and lr with inline assembly, then copy the
 * stack from sp up to __libc_stack_end, before anything else runs below
 * them. main writes the dump:
 *
 *   struct xc_header (little endian, fixed 64-bit fields) + stack bytes
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xc_dump.h"

extern void *__libc_stack_end;

static uint32_t xc_stack[64 * 1024];
static struct xc_header xc_hdr;
static volatile int xc_sunk;

__attribute__((noinline)) void xc_sink(int v)
{
	xc_sunk = v;
}

/*
 * Copy [sp, __libc_stack_end) into xc_stack, inline and without a call (a
 * volatile word loop is never turned into memcpy), so that the leaf stays
 * a leaf and nothing runs below sp before the copy.
 */
__attribute__((always_inline)) static inline void xc_copy_stack(void)
{
	const volatile uint32_t *src = (const volatile uint32_t *)(uintptr_t)xc_hdr.sp;
	uint32_t *dst = (uint32_t *)xc_stack;
	uint64_t len = (uint64_t)(uintptr_t)__libc_stack_end - xc_hdr.sp;
	uint64_t i;

	if (len > sizeof(xc_stack))
		len = sizeof(xc_stack);
	len &= ~3ull;
	for (i = 0; i < len / 4; i++)
		dst[i] = src[i];
	xc_hdr.len = len;
}

#if defined(__aarch64__)
#define XC_READ_REGS(pc_label)						\
	do {								\
		uint64_t pc_, sp_, fp_, lr_;				\
		__asm__ volatile("adr %0, " pc_label "\n"		\
				 pc_label ":\n\t"			\
				 "mov %1, sp\n\t"			\
				 "mov %2, x29\n\t"			\
				 "mov %3, x30\n\t"			\
				 : "=r"(pc_), "=r"(sp_), "=r"(fp_), "=r"(lr_)); \
		xc_hdr.pc = pc_;					\
		xc_hdr.sp = sp_;					\
		xc_hdr.fp = fp_;					\
		xc_hdr.lr = lr_;					\
	} while (0)
#define XC_ARCH XC_ARCH_AARCH64
#elif defined(__arm__)
/*
 * In Thumb code "adr" gives an even address of a Thumb label: the walk
 * only needs an address inside the function. r7 is the Thumb frame
 * pointer (GCC's and clang's), r11 the A32 one: both are stored.
 */
#define XC_READ_REGS(pc_label)						\
	do {								\
		uint32_t pc_, sp_, r11_, r7_, lr_, cpsr_t_;		\
		__asm__ volatile("adr %0, " pc_label "\n"		\
				 pc_label ":\n\t"			\
				 "mov %1, sp\n\t"			\
				 "mov %2, r11\n\t"			\
				 "mov %3, r7\n\t"			\
				 "mov %4, lr\n\t"			\
				 : "=r"(pc_), "=r"(sp_), "=r"(r11_),	\
				   "=r"(r7_), "=r"(lr_));		\
		cpsr_t_ = XC_THUMB;					\
		xc_hdr.pc = pc_;					\
		xc_hdr.sp = sp_;					\
		xc_hdr.fp = cpsr_t_ ? r7_ : r11_;			\
		xc_hdr.r11 = r11_;					\
		xc_hdr.r7 = r7_;					\
		xc_hdr.lr = lr_;					\
		xc_hdr.thumb = cpsr_t_;					\
	} while (0)
#ifdef __thumb__
#define XC_THUMB 1
#else
#define XC_THUMB 0
#endif
#define XC_ARCH XC_ARCH_ARM
#else
#error "chain.c is for AArch64 and AArch32"
#endif

__attribute__((noinline)) void xc_capture(int v)
{
	XC_READ_REGS(".Lxc_capture_pc");
	xc_copy_stack();
	xc_sink(v);
}

/* A leaf: no call, no frame record on AArch64 (GCC), lr holds the return. */
__attribute__((noinline)) void xc_capture_leaf(int v)
{
	XC_READ_REGS(".Lxc_capture_leaf_pc");
	xc_copy_stack();
	xc_sunk = v;
}

/*
 * Registers of xc_sink_leaf, stored by it (xc_capture_sink fills xc_hdr);
 * the offsets are the ones XC_LEAF_REGS uses (fp: AArch64 only).
 */
static struct {
	uintptr_t pc, sp, fp, r11, r7, lr;
} xc_lregs;

#if defined(__aarch64__)
#define XC_LEAF_REGS(pc_label)						\
	do {								\
		uintptr_t t_;						\
		__asm__ volatile("adr %0, " pc_label "\n"		\
				 pc_label ":\n\t"			\
				 "str %0, [%1, #0]\n\t"		\
				 "mov %0, sp\n\t"			\
				 "str %0, [%1, #8]\n\t"		\
				 "str x29, [%1, #16]\n\t"		\
				 "str x30, [%1, #40]\n\t"		\
				 : "=&r"(t_) : "r"(&xc_lregs) : "memory"); \
	} while (0)
#else
#define XC_LEAF_REGS(pc_label)						\
	do {								\
		uintptr_t t_;						\
		__asm__ volatile("adr %0, " pc_label "\n"		\
				 pc_label ":\n\t"			\
				 "str %0, [%1, #0]\n\t"		\
				 "mov %0, sp\n\t"			\
				 "str %0, [%1, #4]\n\t"		\
				 "str r11, [%1, #12]\n\t"		\
				 "str r7, [%1, #16]\n\t"		\
				 "str lr, [%1, #20]\n\t"		\
				 : "=&r"(t_) : "r"(&xc_lregs) : "memory"); \
	} while (0)
#endif

/* A leaf without register pressure (see the top). */
__attribute__((noinline)) void xc_sink_leaf(int v)
{
	XC_LEAF_REGS(".Lxc_sink_leaf_pc");
	xc_sunk = v;
}

__attribute__((noinline)) void xc_capture_sink(int v)
{
	xc_sink_leaf(v);
	/* Nothing ran below our sp since xc_sink_leaf returned: its stack. */
	xc_hdr.pc = xc_lregs.pc;
	xc_hdr.sp = xc_lregs.sp;
#if defined(__aarch64__)
	xc_hdr.fp = xc_lregs.fp;	/* x29 */
#else
	xc_hdr.fp = XC_THUMB ? xc_lregs.r7 : xc_lregs.r11;
	xc_hdr.r11 = xc_lregs.r11;
	xc_hdr.r7 = xc_lregs.r7;
	xc_hdr.thumb = XC_THUMB;
#endif
	xc_hdr.lr = xc_lregs.lr;
	xc_copy_stack();
	xc_sink(v);
}

/*
 * A real syscall through glibc (Debian's armhf glibc is Thumb: getpid() is
 * an inline wrapper, "push {r7}; mov.w r7, #20; svc 0"; write() goes
 * through __libc_do_syscall, "push {r7, lr}; mov r7, ip; svc 0"). Once the
 * wrapper returned, nothing ran below our sp: the bytes there are its
 * stack at the svc.
 */
__attribute__((noinline)) void xc_capture_sys(int which)
{
	uintptr_t sp_;

	if (which == XC_MODE_SYS_GETPID)
		xc_sunk = (int)getpid();
	else
		xc_sunk = (int)write(-1, xc_stack, 0);
	__asm__ volatile("mov %0, sp" : "=r"(sp_));
	xc_hdr.sp = sp_ - XC_SYS_BELOW;
	xc_copy_stack();
	xc_sink(which);
}

__attribute__((noinline)) void xc_f3(int leaf, int v)
{
	if (leaf == XC_MODE_SYS_GETPID || leaf == XC_MODE_SYS_WRITE)
		xc_capture_sys(leaf);
	else if (leaf == XC_MODE_SINK)
		xc_capture_sink(v + 3);
	else if (leaf)
		xc_capture_leaf(v + 3);
	else
		xc_capture(v + 3);
	xc_sink(v);
}

__attribute__((noinline)) void xc_f2(int leaf, int v)
{
	xc_f3(leaf, v + 2);
	xc_sink(v);
}

__attribute__((noinline)) void xc_f1(int leaf, int v)
{
	xc_f2(leaf, v + 1);
	xc_sink(v);
}

/*
 * pac-ret signs a return address with a code in its top bits (54:48 under
 * qemu-user's 48-bit address space: 7 bits) made from a random key, so one
 * run in 128 signs xc_capture's saved lr with a code of 0, and the chain dump
 * holds no PAC to strip. Such a run exits XC_EXIT_PAC_ZERO and
 * run_seeded.sh runs the program again with the next seed.
 */
static int xc_pac_zero(void)
{
#ifdef __ARM_FEATURE_PAC_DEFAULT
	uint64_t off = xc_hdr.fp + 8 - xc_hdr.sp;
	uint64_t lr;

	if (xc_hdr.leaf != XC_MODE_CHAIN || xc_hdr.fp < xc_hdr.sp ||
	    off + sizeof(lr) > xc_hdr.len)
		return 0;
	memcpy(&lr, (const char *)xc_stack + off, sizeof(lr));
	return (lr >> 48) == 0;
#else
	return 0;
#endif
}

int main(int argc, char **argv)
{
	int leaf = argc < 3 ? XC_MODE_CHAIN :
		   !strcmp(argv[2], "leaf") ? XC_MODE_LEAF :
		   !strcmp(argv[2], "sink") ? XC_MODE_SINK :
		   !strcmp(argv[2], "getpid") ? XC_MODE_SYS_GETPID :
		   !strcmp(argv[2], "write") ? XC_MODE_SYS_WRITE : -1;
	FILE *f;

	if (argc < 2 || leaf < 0) {
		fprintf(stderr, "usage: %s DUMP [leaf|sink|getpid|write]\n", argv[0]);
		return 2;
	}
	xc_f1(leaf, argc);
	xc_hdr.magic = XC_MAGIC;
	xc_hdr.arch = XC_ARCH;
	xc_hdr.leaf = leaf;
	f = fopen(argv[1], "wb");
	if (!f || fwrite(&xc_hdr, sizeof(xc_hdr), 1, f) != 1 ||
	    fwrite(xc_stack, 1, xc_hdr.len, f) != xc_hdr.len || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	return xc_pac_zero() ? XC_EXIT_PAC_ZERO : 0;
}
