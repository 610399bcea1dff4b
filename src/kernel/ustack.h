/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ustack.h - deferred user stacks (ustack.c) and file identities (fileid.c).
 *
 * Overview
 * --------
 * A stack_id probe in an instance with options/stackmap_user set calls
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

int fsm_ustack_init(void);
void fsm_ustack_exit(void);
u64 fsm_ustack_request(u32 inst_id);
void fsm_ustack_stat_show(struct seq_file *m, u32 inst_id);
extern const struct file_operations fsm_ustack_opt_fops;

/* fileid.c */
int fsm_fileid_init(void);
void fsm_fileid_exit(void);
u64 fsm_fileid_get(struct file *file);
typedef bool (*fsm_fileid_emit_fn)(void *ctx, u64 id, const char *path,
				   const u8 *build_id, u32 bid_len);
void fsm_fileid_emit(u64 id, u32 inst_id, u32 epoch, fsm_fileid_emit_fn fn,
		     void *ctx);
void fsm_fileid_show(struct seq_file *m, u64 id, u64 off);
void fsm_fileid_table_show(struct seq_file *m);

#endif /* FSM_USTACK_H */
