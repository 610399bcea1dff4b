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
 *                   (empty in a FALLBACK record with reason nested)
 *
 * stack_map_bin, version 4
 * ------------------------
 *   struct fsmb_header     (header_size bytes; readers skip unknown tails)
 *   nr_stacks times:                        kernel stacks (as in version 3)
 *     struct fsmb_entry    16 bytes
 *     __le64 ips[nr]       innermost frame first
 *   nr_ustacks times:                       user stacks (version >= 4)
 *     struct fsmb_uentry   ustack_entry_size bytes (skip unknown tails)
 *     __le64 frames[2 * nr]  (file id, offset | FSM_UFR_* flags) pairs,
 *                          innermost first (ustack_abi.h)
 *   file table (version >= 4), until a record with file_id 0:
 *     struct fsmb_file     16 bytes
 *     char path[path_len]  NUL-terminated
 *     __u8 build_id[bid_len]
 *     zero padding up to size bytes (a multiple of 8) from the record start
 *
 * Version 3 readers that honour header_size and stop after nr_stacks
 * entries read the kernel part of a version 4 file unchanged. The file
 * table holds the module's file ids at the time of reading (each record a
 * consistent copy; ids entered or replaced while the file is read may or
 * may not appear); a frame whose id is missing was evicted from the
 * module's table (a bounded cache, 512 ids).
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
 * 5 resetting, 6 invalid, 7 nested. 0 otherwise. Reasons 1..6 carry the
 * full stack in ips[]. Reason 7 (FSM_SID_REASON_NESTED) carries no stack
 * (ips[] empty): the probe ran nested deeper than task, softirq, irq and
 * NMI on its CPU and had no buffer to capture the stack in; the record
 * still follows its source event so that the pairing by position holds.
 */
#define FSM_SID_REASON_SHIFT	5
#define FSM_SID_REASON(flags)	((flags) >> FSM_SID_REASON_SHIFT)
#define FSM_SID_REASON_NESTED	7
#define FSM_SID_REASON_MAX	7

#define FSM_MAX_DEPTH		64	/* frames per stack (kernel stacks) */

/* ---- stack_map_bin ---- */

#define FSMB_MAGIC		0x464D5342u	/* "BSMF" in memory: 'F''M''S''B' */
#define FSMB_VERSION		4
#define FSMB_INSTANCE_LEN	64

/*
 * Header flags.
 * KERNEL:  the ips are kernel text addresses
 * PARTIAL: ids from nr_stacks (or nr_ustacks) on were still being
 *          published when the snapshot was taken: they are left out (read
 *          again later)
 * USER:    the instance has a user stack map (options/stackmap_user was
 *          set): the user sections describe it
 * HIDDEN:  the reader's credentials may not see kernel addresses (the
 *          policy of /proc/kallsyms, decided at open): every kernel ip and
 *          ref_symbol_addr are 0; ids, depths and hits are as usual.
 *          This flag changes what fields mean without a new FSMB_VERSION
 *          (it came within version 4, which tools may already parse): a
 *          parser must test it before it relocates or symbolizes kernel
 *          ips (ref_symbol_addr 0 is no KASLR offset: do not subtract it,
 *          and do not look up ip 0) and must accept it in any version 4
 *          file. User stacks and the file table are not affected.
 */
#define FSMB_F_KERNEL		0x1
#define FSMB_F_PARTIAL		0x2
#define FSMB_F_USER		0x4
#define FSMB_F_HIDDEN		0x8

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
	__le64 ref_symbol_addr;	/* address of FSMB_REF_SYMBOL, 0 if HIDDEN */
	char instance[FSMB_INSTANCE_LEN];	/* NUL-padded; "" = top level */
	/* version >= 4 */
	__le32 nr_ustacks;	/* user stack entries after the kernel ones */
	__le32 ugeneration;	/* user map generation (0: no user map) */
	__le32 ubits;		/* capacity exponent of the user map */
	__le32 umax_frames;	/* FSM_USTACK_MAX_RECORD_FRAMES */
	__le32 ustack_entry_size;	/* sizeof(struct fsmb_uentry) */
	__le32 reserved;	/* 0 */
};

struct fsmb_entry {
	__le32 stack_id;
	__le32 nr;		/* frames that follow */
	__le32 hits;		/* lookups that found this stack (saturated) */
	__le32 reserved;	/* 0 */
};

/* Version >= 4: one user stack. */
struct fsmb_uentry {
	__le32 ustack_id;
	__le32 nr;		/* frame pairs that follow */
	__le32 hits;		/* lookups that found this stack (saturated) */
	__le16 flags;		/* FSM_USF_IA32, FSM_USF_TRUNCATED */
	__u8 stop;		/* where the walk ended (user_stack "stop") */
	__u8 reserved;		/* 0 */
	/* address-space key: a keyed hash (never a pointer), equal for the
	 * stacks of one address space
	 */
	__le64 mm;
};

/* Version >= 4: one file of the file table. */
struct fsmb_file {
	__le64 file_id;		/* 0: end of the table */
	__le32 size;		/* bytes of this record, padding included */
	__le16 path_len;	/* bytes of path, NUL included */
	__u8 bid_len;		/* bytes of GNU build-id, 0: none */
	__u8 reserved;		/* 0 */
};

#endif /* _FTRACE_STACKMAP_ABI_H */
