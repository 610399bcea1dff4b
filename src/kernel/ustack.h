/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack.h - deferred user stacks (ustack*.c) and file identities (fileid.c).
 *
 * Overview
 * --------
 * The capture (record.c) in an instance with options/stackmap_user set calls
 * fsm_ustack_request() (any context, NMI included). It returns the cookie of
 * the current kernel entry and makes sure that, before the task returns to
 * user space, a task work walks the user stack once (fsm_uwc_* cache, per
 * task state in a preallocated table) and writes one stackmap:user_stack
 * record, preceded by the stackmap:file_map records it needs, into every
 * instance that asked. See Documentation/ustack.rst.
 */
#ifndef FSM_USTACK_H
#define FSM_USTACK_H

#include <linux/types.h>

struct file;
struct seq_file;

/* Instances that can ask for user stacks: bits of the cache's mask. */
#define FSM_UST_MAX_INST	63

struct fsm_inst;

int fsm_ustack_init(void);
void fsm_ustack_exit(void);
u64 fsm_ustack_request(u32 inst_id);
bool fsm_ustack_enabled(u32 inst_id);
void fsm_ustack_stat_show(struct seq_file *m, struct fsm_inst *inst);
void fsm_ustack_write_reset(struct fsm_inst *inst, u32 gen);
void fsm_ustack_redefine(struct fsm_inst *inst);
struct fsm_rb_pos;
void fsm_ustack_sweep_kick(struct fsm_inst *inst, const struct fsm_rb_pos *pos);
/* options/stackmap_user (the node is nodes.c's) */
int fsm_ustack_option_open(struct fsm_inst *inst, bool write);
bool fsm_ustack_option(const struct fsm_inst *inst);
int fsm_ustack_set_option(struct fsm_inst *inst, bool on);
/* instance id reuse (hooks of instances.c, wired by main.c; lifecycle.c) */
void fsm_ustack_id_retire(u32 id);
u64 fsm_ustack_ids_busy(void);
void fsm_ustack_id_reset(u32 id);

/*
 * The user stack map's key (and record) for a stack of nr frames:
 *   [0] FSM_UKEY_MM    address-space key (keyed siphash, never a pointer)
 *   [1] FSM_UKEY_META  FSM_USF_IA32 | FSM_USF_TRUNCATED | FSM_USF_UNRELIABLE
 *                      in bits 0..15,
 *                      the walk's stop reason in bits 16..23
 *   [2 + 2i], [3 + 2i] frame i: file id, offset | FSM_UFR_* flags
 * so a record of w words holds (w - FSM_UKEY_HDR) / 2 frames.
 */
#define FSM_UKEY_MM		0
#define FSM_UKEY_META		1
#define FSM_UKEY_HDR		2
#define FSM_UKEY_META_FLAGS(m)	((u16)(m))
#define FSM_UKEY_META_STOP(m)	((u8)((m) >> 16))

/* fileid.c */
int fsm_fileid_init(void);
void fsm_fileid_exit(void);
u64 fsm_fileid_get(struct file *file);
typedef bool (*fsm_fileid_emit_fn)(void *ctx, u64 id, const char *path,
				   const u8 *build_id, u32 bid_len);
bool fsm_fileid_emit(u64 id, u32 inst_id, u32 epoch, fsm_fileid_emit_fn fn,
		     void *ctx);
bool fsm_fileid_write(u64 id, fsm_fileid_emit_fn fn, void *ctx);
bool fsm_fileid_claim(u64 id, u32 iseq, u32 pos, u32 horizon);
void fsm_fileid_unclaim(u64 id, u32 iseq, u32 pos);
void fsm_fileid_show(struct seq_file *m, u64 id, u64 off);
struct trace_seq;
void fsm_fileid_trace_seq(struct trace_seq *s, u64 id, u64 off);
unsigned int fsm_fileid_slots(void);
void fsm_fileid_stat_show(struct seq_file *m);

/* File table capacity exponent (module parameter file_table_bits). */
#define FSM_FILEID_BITS_MIN	6
#define FSM_FILEID_BITS_MAX	14
#define FSM_FILEID_BITS_DEFAULT	10
#define FSM_FILEID_PATH		256	/* longest path kept, NUL included */
#define FSM_FILEID_BID		20	/* longest build-id kept */

/* A copy of one file table entry (fsm_fileid_slot()). */
struct fsm_fileid_info {
	u64 id;
	u8 bid_len;
	u8 bid[FSM_FILEID_BID];
	char path[FSM_FILEID_PATH];
};

bool fsm_fileid_slot(unsigned int slot, struct fsm_fileid_info *out);

#endif /* FSM_USTACK_H */
