// SPDX-License-Identifier: GPL-2.0
/*
 * fusefn.c - the code that fusecall.c runs from a FUSE file (ustack_fileid).
 *
 * Built as a shared object without the C library, mapped by hand (never by
 * ld.so, so that its first page, with the ELF header and the build-id note,
 * is not read), position independent. The function is written in
 * assembly so that it has a frame record although it is a leaf (GCC sets
 * up none there): the user stack walk starts here (raw getppid) and
 * continues into fusecall's own frames.
 */
/* long fsm_fuse_fn(long nr): syscall nr, return its result */
#if defined(__x86_64__)
asm(".text\n"
    ".globl fsm_fuse_fn\n"
    ".type fsm_fuse_fn, @function\n"
    "fsm_fuse_fn:\n"
    "\tpush %rbp\n"
    "\tmov %rsp, %rbp\n"
    "\tmov %rdi, %rax\n"
    "\tsyscall\n"
    "\tpop %rbp\n"
    "\tret\n"
    ".size fsm_fuse_fn, . - fsm_fuse_fn\n");
#elif defined(__aarch64__)
/* a frame record {x29, x30} at x29, as GCC's non-leaf prologue makes */
asm(".text\n"
    ".globl fsm_fuse_fn\n"
    ".type fsm_fuse_fn, %function\n"
    "fsm_fuse_fn:\n"
    "\tstp x29, x30, [sp, #-16]!\n"
    "\tmov x29, sp\n"
    "\tmov x8, x0\n"
    "\tsvc #0\n"
    "\tldp x29, x30, [sp], #16\n"
    "\tret\n"
    ".size fsm_fuse_fn, . - fsm_fuse_fn\n");
#else
#error "fusefn.c: add fsm_fuse_fn for this architecture"
#endif
