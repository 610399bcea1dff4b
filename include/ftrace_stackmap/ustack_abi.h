/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack_abi.h - meaning of the stackmap:user_stack and stackmap:file_map
 * records (Documentation/ustack.rst has the full description).
 *
 * A stack_id record written while options/stackmap_user is 1 and the task
 * came from user space carries a cookie (never 0). Later, before that task
 * returns to user space, one stackmap:user_stack record with the same cookie
 * is written into every instance that asked: the task's user stack as
 * (file id, offset | flags) pairs, innermost first. File ids are resolved by
 * the most recent stackmap:file_map record with that id before the
 * user_stack record in the same instance.
 */
#ifndef _FTRACE_STACKMAP_USTACK_ABI_H
#define _FTRACE_STACKMAP_USTACK_ABI_H

/* Most frames in one user stack (ip included); fsm_unwind.h agrees. */
#define FSM_USTACK_MAX_FRAMES		127
/*
 * Most frames in one user_stack record: its printed line (19 characters
 * per u64) must fit the kernel's 4 KiB trace_seq, or reading "trace"
 * cannot print it (6.1 retries such a line forever). Deeper stacks are cut
 * with FSM_USF_TRUNCATED.
 */
#define FSM_USTACK_MAX_RECORD_FRAMES	90

/*
 * Second word of a frame pair: offset in the file (bits 0..55), flags in
 * bits 56..63. For FSM_UFR_ANON and FSM_UFR_NOVMA frames the file id is 0
 * and the offset is the absolute user address; for FSM_UFR_VDSO frames the
 * file id is 0 and the offset is relative to the start of the vdso.
 */
#define FSM_UFR_OFFSET_MASK		((1ull << 56) - 1)
#define FSM_UFR_ANON			(1ull << 56)	/* anonymous memory (JIT) */
#define FSM_UFR_VDSO			(1ull << 57)	/* the vdso */
#define FSM_UFR_NOVMA			(1ull << 58)	/* no mapping at that address */
#define FSM_UFR_SPECIAL			(1ull << 59)	/* other special mapping */

/* user_stack.reason: why the stack is empty or short (0: walked). */
#define FSM_URS_WALKED		0	/* walked; "stop" says where it ended */
#define FSM_URS_EXITING		1	/* the task was exiting: not walked */
#define FSM_URS_EXEC		2	/* exec between request and walk */
#define FSM_URS_NO_MM		3	/* no user address space */
#define FSM_URS_FIRST_FAULT	4	/* first frame record unreadable: ip only */
#define FSM_URS_NOMEM		5	/* no memory for the translation */
#define FSM_URS_SEGMENTS	6	/* ia32 with non-flat segments */
#define FSM_URS_NR		7

/* user_stack.flags */
#define FSM_USF_IA32		0x1	/* 32-bit (compat) user stack */
#define FSM_USF_LATE		0x2	/* emitted after the walk (CACHED path) */
#define FSM_USF_TRUNCATED	0x4	/* deeper than FSM_USTACK_MAX_FRAMES */

#endif /* _FTRACE_STACKMAP_USTACK_ABI_H */
