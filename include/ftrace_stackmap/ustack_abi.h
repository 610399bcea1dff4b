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
 *
 * User stacks are deduplicated per instance: a user stack map keyed by the
 * address space (a keyed hash, see user_stack.mm in stack_map) and the
 * frames gives each distinct stack a ustack_id (in generation gen). The
 * frames travel in the record only the first time an id appears in a
 * recording (FSM_USF_INLINE); later records carry the id and nr = 0. When
 * no id can be had the record carries the frames with FSM_USF_FALLBACK and
 * id_reason says why (FSM_UIR_*); nothing is lost silently. Empty stacks
 * (reason != 0 and nr == 0) have no id.
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
#define FSM_USF_TRUNCATED	0x4	/* deeper than FSM_USTACK_MAX_RECORD_FRAMES */
/*
 * INLINE:   first use of ustack_id in this recording: frames[] carries its
 *           stack
 * FALLBACK: no id (ustack_id is FSM_USTACK_ID_NONE): frames[] carries the
 *           stack, id_reason says why
 * NEW:      this record created the id
 * RESET:    marker: user map generation gen starts (echo reset >
 *           stack_map); no stack, cookie 0
 */
#define FSM_USF_INLINE		0x8
#define FSM_USF_FALLBACK	0x10
#define FSM_USF_NEW		0x20
#define FSM_USF_RESET		0x40
/*
 * Frames past the first may be wrong or missing. AArch32: the walk started
 * in Thumb state, or a frame was reported that was found after an
 * A32/Thumb switch, an ambiguous frame layout, or through lr (a leaf, a
 * syscall wrapper). x86: a return address was reported that no call
 * instruction precedes (a signal trampoline, a code pointer in data). See
 * FSM_UW_RES_UNRELIABLE and Documentation/ustack.rst. stack_map prints
 * "unreliable". Part of the dedup key.
 */
#define FSM_USF_UNRELIABLE	0x80
/*
 * REDEF: a definition only (with INLINE, cookie 0): the frames of
 * ustack_id written again after a user_stack record of that id, because
 * this CPU's ring buffer may overwrite the id's last definition before the
 * id's later uses (module parameter redefine_pct). Names no event.
 */
#define FSM_USF_REDEF		0x100

/* user_stack.ustack_id when the record has no id. */
#define FSM_USTACK_ID_NONE	0xffffffffu

/*
 * user_stack.id_reason with FSM_USF_FALLBACK: 1..6 are the map's drop
 * reasons (as stack_id's reason), 7: the instance has no user map.
 */
#define FSM_UIR_MAP_FULL	1
#define FSM_UIR_ARENA_FULL	2
#define FSM_UIR_PROBE_LIMIT	3
#define FSM_UIR_BUSY		4
#define FSM_UIR_RESETTING	5
#define FSM_UIR_INVALID		6
#define FSM_UIR_NO_MAP		7

#endif /* _FTRACE_STACKMAP_USTACK_ABI_H */
