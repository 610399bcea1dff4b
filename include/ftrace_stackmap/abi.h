/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ftrace_stackmap/abi.h - formats shared by the module and user-space tools.
 *
 * 1. The stackmap:stack_id trace event (flags, special ids).
 * 2. The binary export stack_map_bin ("FSMB" version 3).
 *
 * Everything is little-endian. This header includes only <linux/types.h>
 * and can be used from user space.
 *
 * stackmap:stack_id
 * -----------------
 * One record follows each source event in the same instance's buffer
 * (the instance is the buffer it is in). 16 bytes after the common header,
 * 28 bytes of ring buffer per record when both arrays are empty, which is
 * the common case (a known id, no user stacks):
 *
 *   u32 stack_id    id in the instance's map; FSM_STACK_ID_NONE if none
 *                   (FSM_SID_F_FALLBACK); in a FSM_SID_F_RESET record the
 *                   full 32-bit generation that starts
 *   u16 src_type    trace_event type id of the source event ("ID" in its
 *                   format file / common_type of the preceding record)
 *   u8  gen         low 8 bits of the generation the id belongs to
 *   u8  flags       FSM_SID_F_* in bits 0..4, FSM_SID_REASON() in bits 5..7
 *   u64 cookie[]    __data_loc array: one element, the user-stack cookie,
 *                   when options/stackmap_user asked for the task's user
 *                   stack (ustack_abi.h); else empty
 *   unsigned long ips[]   __data_loc array: the stack, innermost first;
 *                   present only with FSM_SID_F_INLINE or FSM_SID_F_FALLBACK
 *
 * stack_map_bin, version 3
 * ------------------------
 *   struct fsmb_header     (header_size bytes; readers skip unknown tails)
 *   nr_stacks times:
 *     struct fsmb_entry    16 bytes
 *     __le64 ips[nr]       innermost frame first
 */
#ifndef _FTRACE_STACKMAP_ABI_H
#define _FTRACE_STACKMAP_ABI_H

#include <linux/types.h>

/* ---- stackmap:stack_id ---- */

#define FSM_STACK_ID_NONE	0xffffffffu

/*
 * Record flags (the u8 "flags" field, bits 0..4).
 * INLINE:    first time this id appears in this recording: ips[] carries
 *            its stack
 * FALLBACK:  no id could be had (stack_id is FSM_STACK_ID_NONE): ips[]
 *            carries the full stack, FSM_SID_REASON() says why
 * TRUNCATED: the stack was deeper than FSM_MAX_DEPTH frames
 * RESET:     reset record: the generation in stack_id starts now; ids of
 *            older generations are reused from here on; no stack, src 0
 * NEW:       this request created the id
 */
#define FSM_SID_F_INLINE	0x01
#define FSM_SID_F_FALLBACK	0x02
#define FSM_SID_F_TRUNCATED	0x04
#define FSM_SID_F_RESET		0x08
#define FSM_SID_F_NEW		0x10

/*
 * Why a FALLBACK record has no id (bits 5..7 of flags, "reason=" in the
 * printed record): 1 map_full, 2 arena_full, 3 probe_limit, 4 busy,
 * 5 resetting, 6 invalid. 0 otherwise.
 */
#define FSM_SID_REASON_SHIFT	5
#define FSM_SID_REASON(flags)	((flags) >> FSM_SID_REASON_SHIFT)
#define FSM_SID_REASON_MAX	7

#define FSM_MAX_DEPTH		64	/* frames per stack (kernel stacks) */

/* ---- stack_map_bin ---- */

#define FSMB_MAGIC		0x464D5342u	/* "BSMF" in memory: 'F''M''S''B' */
#define FSMB_VERSION		3
#define FSMB_INSTANCE_LEN	64

/* Header flags */
/*
 * Header flags.
 * KERNEL:  the ips are kernel text addresses
 * PARTIAL: ids from nr_stacks on were still being published when the
 *          snapshot was taken: they are left out (read again later)
 */
#define FSMB_F_KERNEL		0x1
#define FSMB_F_PARTIAL		0x2

/*
 * ref_symbol_addr is the run-time address of the kernel function
 * "schedule": compare it with /proc/kallsyms to detect another boot or
 * another KASLR offset before symbolizing the ips.
 */
#define FSMB_REF_SYMBOL		"schedule"

struct fsmb_header {
	__le32 magic;		/* FSMB_MAGIC */
	__le32 version;		/* FSMB_VERSION */
	__le32 nr_stacks;	/* entries that follow */
	__le32 header_size;	/* version >= 3: sizeof(struct fsmb_header) */
	__le32 generation;	/* map generation of every entry */
	__le32 bits;		/* capacity exponent of the map */
	__le32 flags;		/* FSMB_F_* */
	__le32 max_depth;	/* FSM_MAX_DEPTH */
	__le64 ref_symbol_addr;	/* address of FSMB_REF_SYMBOL */
	char instance[FSMB_INSTANCE_LEN];	/* NUL-padded; "" = top level */
};

struct fsmb_entry {
	__le32 stack_id;
	__le32 nr;		/* frames that follow */
	__le32 hits;		/* lookups that found this stack (saturated) */
	__le32 reserved;	/* 0 */
};

#endif /* _FTRACE_STACKMAP_ABI_H */
