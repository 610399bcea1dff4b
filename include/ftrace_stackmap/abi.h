/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ftrace_stackmap/abi.h - formats shared by the module and user-space tools.
 *
 * 1. The kernel-stack records of system "stackmap" (record format 2).
 * 2. The binary export stack_map_bin ("FSMB" version 4).
 *
 * Everything is little-endian. This header includes only <linux/types.h>
 * and can be used from user space.
 *
 * Kernel-stack records (record format FSM_SID_FORMAT_VERSION = 2)
 * ----------------------------------------------------------------
 * Records are in the buffer of their instance. Every source event is
 * followed, on its CPU, by exactly one id record (an interrupt or NMI that
 * records events in between can separate them):
 *
 *   stackmap:stack_id        u32 stack_id                       16 bytes
 *   stackmap:stack_id_user   u32 stack_id, u32 cookie_lo,       24 bytes
 *                            u32 cookie_hi (the user-stack cookie,
 *                            ustack_abi.h; only when options/stackmap_user
 *                            asked for the task's user stack)
 *   stackmap:stack_fallback  u32 stack_id (FSM_STACK_ID_NONE), u32 flags,
 *                            u32 reason, __data_loc u64[] cookie (0 or 1),
 *                            __data_loc unsigned long[] ips: no id could
 *                            be had; the full stack (none for reason 7)
 *
 * (sizes with the 4-byte ring-buffer event header and the 8 bytes of
 * common fields). Rare records of their own:
 *
 *   stackmap:stack_def       u32 stack_id, u32 flags, __data_loc unsigned
 *                            long[] ips: the stack of stack_id, written
 *                            right after the id record that uses the id
 *                            first in a recording (FSM_SID_F_TRUNCATED,
 *                            FSM_SID_F_NEW in flags)
 *   stackmap:stack_reset     u32 stack_id (NONE), u32 generation: the full
 *                            generation that starts
 *
 * Every record starts with u32 stack_id at offset 8 (after the common
 * fields).
 *
 * The id (FSM_SID_*): bits 0..19 are the index in the instance's map (the
 * "stack_id" of stack_map and stack_map_bin; the bits parameter, at most
 * 20, bounds it), bits 20..31 the low 12 bits of the map generation the id
 * belongs to. A reader keys stacks by (instance, stack_id): a plain id
 * record names its generation itself, so no ordering between CPUs is
 * needed to pair it with its stack_def, around resets too. Two
 * generations with the same low 12 bits are 4096 resets apart; the
 * stack_reset records (each with the full generation) let a reader count
 * them. Order guarantee: the stack_reset record of generation G is
 * committed before G opens, so every record of generation G has a later
 * timestamp than it, with a trace clock consistent across CPUs (records of
 * G - 1 still in flight may follow it: their id says so; the reset waits
 * for every probe in flight before G opens, so no record older than G - 1
 * follows it).
 *
 * FSM_STACK_ID_NONE (0xffffffff) means "no id" only in stack_fallback and
 * stack_reset records. In stack_id, stack_id_user and stack_def records
 * every value is an id: with bits=20, index 0xfffff of a generation whose
 * low 12 bits are 0xfff is 0xffffffff. A filter that means "records with
 * an id" should name the events, not compare stack_id with NONE.
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

/* ---- kernel-stack records ---- */

#define FSM_SID_FORMAT_VERSION	2	/* 1: the single 28-byte stack_id record */

#define FSM_STACK_ID_NONE	0xffffffffu

/* The id: index bits, then the low bits of the generation. */
#define FSM_SID_INDEX_BITS	20
#define FSM_SID_GEN_BITS	12
#define FSM_SID_INDEX_MASK	((1u << FSM_SID_INDEX_BITS) - 1)
#define FSM_SID_GEN_MASK	((1u << FSM_SID_GEN_BITS) - 1)
#define FSM_SID_MAKE(gen, index) \
	((((gen) & FSM_SID_GEN_MASK) << FSM_SID_INDEX_BITS) | \
	 ((index) & FSM_SID_INDEX_MASK))
#define FSM_SID_INDEX(id)	((id) & FSM_SID_INDEX_MASK)
#define FSM_SID_GEN(id)		((id) >> FSM_SID_INDEX_BITS)

/*
 * Flags of stack_def and stack_fallback (the u32 "flags" field).
 * TRUNCATED: the stack was deeper than FSM_MAX_DEPTH frames
 * NEW:       (stack_def) this request created the id
 * REDEF:     (stack_def) written again: the ring buffer of this CPU may
 *            overwrite the id's last definition before the id's later
 *            uses (module parameter redefine_pct)
 * The values of format 1 are kept (0x1 INLINE, 0x2 FALLBACK and 0x8 RESET
 * are now record types of their own).
 */
#define FSM_SID_F_TRUNCATED	0x04
#define FSM_SID_F_NEW		0x10
#define FSM_SID_F_REDEF		0x20

/*
 * Why a stack_fallback record has no id (its "reason" field): 1 map_full,
 * 2 arena_full, 3 probe_limit, 4 busy, 5 resetting, 6 invalid, 7 nested.
 * Reasons 1..6 carry the full stack in ips[]. Reason 7
 * (FSM_SID_REASON_NESTED) carries no stack (ips[] empty): the probe ran
 * nested deeper than task, softirq, irq and NMI on its CPU and had no
 * buffer to capture the stack in; the record still follows its source
 * event so that the pairing by position holds.
 */
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
	/* FSM_USF_IA32 (ia32, or AArch32 on arm64), FSM_USF_TRUNCATED,
	 * FSM_USF_UNRELIABLE (ustack_abi.h); part of the dedup key
	 */
	__le16 flags;
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
