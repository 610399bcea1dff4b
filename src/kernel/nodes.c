// SPDX-License-Identifier: GPL-2.0
/*
 * nodes.c - the files of every instance (top level and instances/NAME):
 *
 *   stack_map          0640  every stack, id order, symbolized (kernel
 *                            stacks, then user stacks and the file table
 *                            when options/stackmap_user was set); write
 *                            "reset" or "0" for a new generation of both
 *   stack_map_stat     0440  counters
 *   stack_map_bin      0440  binary snapshot (FSMB v4, ftrace_stackmap/abi.h)
 *   stack_map_events   0640  source events (set_event syntax)
 *   options/stackmap   0640  1/0: stackmap:stack_id enabled in the instance
 *   options/stackmap_user
 *                      0640  1/0: user stacks too (ustack_deliver.c)
 *
 * Each node's i_private is the instance key (id and serial number,
 * fsm_inst_node_key()), not a pointer: open looks the instance up
 * (fsm_inst_get_by_key()) and takes a reference, so an instance whose
 * directory was just removed can never be reached through a stale inode,
 * not even when its id was given to a new instance.
 *
 * Creation and removal of an instance's nodes are serialised by
 * fsm_nodes_mutex (the mkdir caller, see lifecycle.c, the sync work and
 * module exit may all try); once removed, they are never created again. Every fops has .owner = THIS_MODULE: an open node keeps the
 * module loaded (rmmod fails with EBUSY).
 *
 * The readers of stack_map and stack_map_bin (and the reset written to
 * stack_map) are in nodes_map.c. options/stackmap_user switches the
 * user-stack side's state (ustack_deliver.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <ftrace_stackmap/abi.h>
#include <ftrace_stackmap/ustack_abi.h>

#include "compat/compat.h"
#include "tracing.h"
#include "compat/ustack_arch.h"
#include "ustack.h"

/* debugfs mode: ftrace_stackmap/instances */
static struct dentry *fsm_dbg_instances;

/*
 * Serialises creation and removal of nodes (inst->nodes[], dbg_dir,
 * dbg_opts, nodes_done, nodes_gone). Taken inside the "instances" inode
 * lock by the mkdir caller (lifecycle.c), never with fsm_mutex held;
 * inside it only the inode locks of an instance directory and its
 * options/ (or debugfs's) are taken.
 */
DEFINE_MUTEX(fsm_nodes_mutex);

/* ---- stack_map_stat ---- */

static u64 fsm_pcpu_sum(struct fsm_inst *inst, size_t off)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += local64_read((local64_t *)((char *)per_cpu_ptr(inst->pcpu, cpu) + off));
	return sum;
}

#define FSM_PCPU(inst, field) \
	fsm_pcpu_sum(inst, offsetof(struct fsm_inst_pcpu, field))

static u64 fsm_src_sum(struct fsm_src *src, size_t off)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += local64_read((local64_t *)((char *)per_cpu_ptr(src->pc, cpu) + off));
	return sum;
}

#define FSM_SRC_PCPU(src, field) \
	fsm_src_sum(src, offsetof(struct fsm_src_pcpu, field))

/*
 * The per-source section, last: "source_patterns: P" (the standing
 * patterns, empty if none), then one line per chosen source event,
 * "source SYS:EV: hits=H filtered=F records=R drops=D no_verdict=N
 * unpaired=U" (hits: source records kept; filtered: discarded by the
 * event's filter, soft disable or pid filter; records: id records written
 * for it; drops: hits that wrote none; no_verdict: records judged whose
 * post call found no verdict, e.g. a uprobe task preempted in between: no
 * id record). Counts since the source was chosen; the tracepoint-probe
 * path (no trigger layouts) counts as filtered the events that fired
 * soft-disabled, pid-filtered or while the instance's buffer took no
 * writes, as no_verdict those that fired while the event had a filter or
 * a conditional trigger (it cannot see their decision: src_probe.c), as
 * unpaired those whose record was not shown to be the one record written
 * between the kernel's probe and ours (no id record; always 0 on the
 * trigger path).
 * Context: task; takes fsm_mutex (sources are freed only after they left
 * the list under it).
 */
static void fsm_stat_sources(struct seq_file *m, struct fsm_inst *inst)
{
	struct fsm_src *src;

	mutex_lock(&fsm_mutex);
	/* the standing patterns (sources.c, "Patterns that follow") */
	seq_printf(m, "source_patterns: %s\n", inst->src_pat ?: "");
	list_for_each_entry(src, &inst->sources, list) {
		u64 hits = FSM_SRC_PCPU(src, hits);
		u64 filtered = FSM_SRC_PCPU(src, filtered);
		u64 judged = FSM_SRC_PCPU(src, judged);
		u64 unpaired = FSM_SRC_PCPU(src, unpaired);
		u64 known = hits + filtered + unpaired;

		seq_printf(m, "source %s: hits=%llu filtered=%llu records=%llu drops=%llu no_verdict=%llu unpaired=%llu\n",
			   src->name, hits, filtered, FSM_SRC_PCPU(src, records),
			   FSM_SRC_PCPU(src, drops),
			   judged > known ? judged - known : 0, unpaired);
	}
	mutex_unlock(&fsm_mutex);
}

static int fsm_stat_show(struct seq_file *m, void *v)
{
	struct fsm_inst *inst = m->private;
	struct fsm_map_stats st = {};
	unsigned long long drops = 0, req, rate;
	struct fsm_src *src;
	struct fsm_map *map;
	unsigned int r, nsrc = 0;
	bool recording;
	u64 resets;

	mutex_lock(&fsm_mutex);
	recording = inst->file != NULL;
	list_for_each_entry(src, &inst->sources, list)
		nsrc++;
	mutex_unlock(&fsm_mutex);

	down_read(&inst->map_rwsem);
	/* Pairs with smp_store_release() in fsm_inst_prepare_map(). */
	map = smp_load_acquire(&inst->map);
	if (map) {
		fsm_map_stats(map, &st);
	} else {
		st.bits = fsm_bits;
		st.capacity = 1U << fsm_bits;
		st.table_slots = 2U << fsm_bits;
		st.max_depth = FSM_MAX_KERNEL_DEPTH;
	}
	resets = inst->resets;
	up_read(&inst->map_rwsem);

	for (r = 1; r < FSM_DROP_NR_REASONS; r++)
		drops += st.drops[r];
	req = st.hits + st.inserts + drops;
	rate = req ? div64_u64(st.hits * 10000ULL, req) : 0;

	seq_printf(m, "instance: %s\n", inst->name ? inst->name : "");
	seq_printf(m, "inst_id: %u\n", inst->id);
	seq_printf(m, "recording: %d\n", recording);
	seq_printf(m, "sources: %u\n", nsrc);
	seq_printf(m, "map_allocated: %d\n", map != NULL);
	seq_printf(m, "bits: %u\n", st.bits);
	seq_printf(m, "entries: %u\n", st.entries);
	seq_printf(m, "capacity: %u\n", st.capacity);
	seq_printf(m, "table_slots: %u\n", st.table_slots);
	seq_printf(m, "max_depth: %u\n", st.max_depth);
	seq_printf(m, "arena_used: %llu\n", st.arena_used);
	seq_printf(m, "arena_size: %llu\n", st.arena_size);
	seq_printf(m, "memory_bytes: %llu\n", st.memory_bytes);
	seq_printf(m, "generation: %u\n", st.generation);
	seq_printf(m, "resets: %llu\n", resets);
	seq_printf(m, "requests: %llu\n", FSM_PCPU(inst, requests));
	seq_printf(m, "hits: %llu\n", st.hits);
	seq_printf(m, "inserts: %llu\n", st.inserts);
	seq_printf(m, "drops: %llu\n", drops);
	for (r = 1; r < FSM_DROP_NR_REASONS; r++)
		seq_printf(m, "drops_%s: %llu\n", fsm_drop_reason_name(r),
			   st.drops[r]);
	seq_printf(m, "lost_races: %llu\n", st.lost_races);
	seq_printf(m, "hit_rate: %llu.%02llu%%\n", rate / 100, rate % 100);
	seq_printf(m, "records: %llu\n", FSM_PCPU(inst, records));
	seq_printf(m, "inline_emits: %llu\n", FSM_PCPU(inst, inline_emits));
	seq_printf(m, "redefinitions: %llu\n", FSM_PCPU(inst, redefs));
	seq_printf(m, "fallbacks: %llu\n", FSM_PCPU(inst, fallbacks));
	seq_printf(m, "truncated: %llu\n", FSM_PCPU(inst, truncated));
	seq_printf(m, "records_lost: %llu\n", FSM_PCPU(inst, lost));
	seq_printf(m, "inline_lost: %llu\n", FSM_PCPU(inst, inline_lost));
	seq_printf(m, "nested_dropped: %llu\n", FSM_PCPU(inst, nested));
	seq_printf(m, "trigger_no_verdict: %llu\n",
		   FSM_PCPU(inst, trig_no_verdict));
	seq_printf(m, "own_frame_walks: %llu\n",
		   FSM_PCPU(inst, own_frame_walks));
	fsm_ustack_stat_show(m, inst);	/* user stacks (ustack_deliver.c) */
	fsm_fileid_stat_show(m);	/* the file table (fileid.c) */
	fsm_stat_sources(m, inst);
	return 0;
}

static int fsm_inst_single_open(struct inode *inode, struct file *file,
				int (*show)(struct seq_file *, void *))
{
	struct fsm_inst *inst = fsm_node_inst(inode);
	int ret;

	if (!inst)
		return -ENODEV;
	ret = single_open(file, show, inst);
	if (ret)
		fsm_inst_put(inst);
	return ret;
}

static int fsm_inst_single_release(struct inode *inode, struct file *file)
{
	struct fsm_inst *inst = ((struct seq_file *)file->private_data)->private;

	fsm_inst_put(inst);
	return single_release(inode, file);
}

static int fsm_stat_open(struct inode *inode, struct file *file)
{
	return fsm_inst_single_open(inode, file, fsm_stat_show);
}

static const struct file_operations fsm_stat_fops = {
	.owner = THIS_MODULE,
	.open = fsm_stat_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = fsm_inst_single_release,
};

/* ---- stack_map_events ---- */

/*
 * Largest write() accepted, and longest unfinished token held across
 * writes (see fsm_events_write()). A write is applied together with the
 * token held before it: at most FSM_SRC_TEXT_MAX bytes at once.
 */
#define FSM_EV_WRITE_MAX	4096
#define FSM_EV_HELD		4096

/*
 * The write context of one open file. Writes of one open file can run in
 * parallel: write(2) takes no f_pos_lock when the file has one user, and
 * io_uring's workers of different tasks take none at all. @lock serialises
 * them; every field below it is read and written only under it (and by
 * release, when no write can run any more).
 */
struct fsm_ev_ctx {
	struct fsm_inst *inst;
	struct mutex lock;
	bool replace;	/* O_TRUNC open, nothing applied yet: the text replaces the set */
	size_t len;	/* bytes held in @held: one unfinished token */
	char held[FSM_EV_HELD + 1];
};

static int fsm_events_show(struct seq_file *m, void *v)
{
	struct fsm_ev_ctx *c = m->private;

	return fsm_sources_show(m, c->inst);
}

static int fsm_events_open(struct inode *inode, struct file *file)
{
	struct fsm_ev_ctx *c;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->inst = fsm_node_inst(inode);
	if (!c->inst) {
		kfree(c);
		return -ENODEV;
	}
	mutex_init(&c->lock);
	c->replace = (file->f_mode & FMODE_WRITE) && (file->f_flags & O_TRUNC);
	ret = single_open(file, fsm_events_show, c);
	if (ret) {
		fsm_inst_put(c->inst);
		kfree(c);
	}
	return ret;
}

static bool fsm_is_sep(char c)
{
	return c == ',' || isspace(c);
}

/*
 * The part of fsm_events_write() under c->lock. @text has room for the
 * held token in front of it: text[-FSM_EV_HELD..-1] is free. @cnt bytes
 * of the write follow, NUL-terminated, with no NUL among them. Changes
 * c->held, c->len and c->replace only on success.
 * Context: task, c->lock held.
 */
static int fsm_events_take(struct fsm_ev_ctx *c, char *text, size_t cnt)
{
	size_t total, cut, tail = 0, done, i;
	bool blank = true;
	char save;
	int ret;

	lockdep_assert_held(&c->lock);
	/* the held token, then the write: one text */
	text -= c->len;
	memcpy(text, c->held, c->len);
	total = c->len + cnt;

	for (cut = total; cut && !fsm_is_sep(text[cut - 1]); cut--)
		;
	if (cut < total &&
	    fsm_sources_classify(c->inst, text + cut) == FSM_TOK_PREFIX)
		tail = total - cut;	/* unfinished last token: hold it */
	if (tail > FSM_EV_HELD) {
		pr_warn_ratelimited("stack_map_events: unfinished token longer than %d bytes\n",
				    FSM_EV_HELD);
		return -EINVAL;
	}
	done = total - tail;
	for (i = 0; i < done; i++)
		blank &= fsm_is_sep(text[i]);
	/*
	 * Apply the complete part, all of it or nothing. Blank: nothing to
	 * apply, except "echo > stack_map_events" (O_TRUNC, blank, nothing
	 * held): that clears. An O_TRUNC open whose complete part is blank
	 * but holds a token replaces the set when that token is applied.
	 */
	if (!blank || (c->replace && !tail)) {
		save = text[done];
		text[done] = '\0';
		ret = fsm_sources_update(c->inst, text,
					 c->replace ? FSM_SRC_REPLACE : 0);
		text[done] = save;
		if (ret)
			return ret;
		c->replace = false;
	}
	memcpy(c->held, text + done, tail);
	c->held[tail] = '\0';
	c->len = tail;
	return 0;
}

/*
 * The unit of a change is the write() call: the set changes by all of its
 * complete tokens or not at all. A token is complete when a separator
 * follows it, or when it is the last one and names an event exactly or
 * cannot become valid. A last token that more text could still make valid
 * (fsm_sources_classify(): "sched:sched_sw", or "sched" which could become
 * "sched:...") is held: the write applies its complete tokens, is
 * accepted, and the held token is put in front of the next write() of
 * this open file, or applied at close. So a long list written in 4096-byte
 * pieces (stdio) or with any write size (dd bs=1) gives the same result.
 * A refused write changes nothing: the set stays as it was and the token
 * held before it stays held (the bytes of accepted writes are never
 * dropped); it also ends a pending O_TRUNC replace (a refused
 * "echo ... >" does not clear the set, not even at close). An error of
 * the held token found at close can only be reported in dmesg.
 *
 * The user's bytes are copied before c->lock is taken: a buffer that
 * faults slowly (userfaultfd, a file on a hung FUSE mount) blocks its own
 * writer only, not the other writers of this file.
 */
static ssize_t fsm_events_write(struct file *file, const char __user *ubuf,
				size_t cnt, loff_t *ppos)
{
	struct fsm_ev_ctx *c = ((struct seq_file *)file->private_data)->private;
	char *buf, *text;
	int ret = 0;

	BUILD_BUG_ON(FSM_EV_HELD + FSM_EV_WRITE_MAX > FSM_SRC_TEXT_MAX);
	if (cnt > FSM_EV_WRITE_MAX) {
		pr_warn_ratelimited("stack_map_events: write of %zu bytes, at most %d\n",
				    cnt, FSM_EV_WRITE_MAX);
		return -EINVAL;
	}
	/* room for the held token in front of the write */
	buf = kmalloc(FSM_EV_HELD + cnt + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	text = buf + FSM_EV_HELD;
	if (copy_from_user(text, ubuf, cnt)) {
		ret = -EFAULT;
	} else {
		text[cnt] = '\0';
		if (strnlen(text, cnt) != cnt) {
			pr_warn_ratelimited("stack_map_events: NUL byte in the text\n");
			ret = -EINVAL;
		}
	}
	if (mutex_lock_killable(&c->lock)) {
		kfree(buf);
		return -EINTR;
	}
	if (!ret)
		ret = fsm_events_take(c, text, cnt);
	if (ret)
		c->replace = false;	/* refused: the old set stays */
	mutex_unlock(&c->lock);
	kfree(buf);
	return ret ? ret : cnt;
}

static int fsm_events_release(struct inode *inode, struct file *file)
{
	struct fsm_ev_ctx *c = ((struct seq_file *)file->private_data)->private;
	int ret;

	/* the last reference: no write can run, the lock is for lockdep */
	mutex_lock(&c->lock);
	if (c->len || c->replace) {
		/* a held token, or an O_TRUNC open without any write */
		c->held[c->len] = '\0';
		ret = fsm_sources_update(c->inst, c->held,
					 c->replace ? FSM_SRC_REPLACE : 0);
		if (ret)
			pr_warn_ratelimited("stack_map_events: '%.64s' at close: error %d, set unchanged\n",
					    c->held, ret);
	}
	mutex_unlock(&c->lock);
	mutex_destroy(&c->lock);
	fsm_inst_put(c->inst);
	kfree(c);
	return single_release(inode, file);
}

static const struct file_operations fsm_events_fops = {
	.owner = THIS_MODULE,
	.open = fsm_events_open,
	.read = seq_read,
	.write = fsm_events_write,
	.llseek = seq_lseek,
	.release = fsm_events_release,
};

/* ---- options/stackmap ---- */

static int fsm_opt_open(struct inode *inode, struct file *file)
{
	struct fsm_inst *inst = fsm_node_inst(inode);

	if (!inst)
		return -ENODEV;
	file->private_data = inst;
	return nonseekable_open(inode, file);	/* always 0 */
}

static int fsm_opt_release(struct inode *inode, struct file *file)
{
	fsm_inst_put(file->private_data);
	return 0;
}

static ssize_t fsm_opt_read(struct file *file, char __user *ubuf, size_t cnt,
			    loff_t *ppos)
{
	struct fsm_inst *inst = file->private_data;
	char buf[2] = { READ_ONCE(inst->file) ? '1' : '0', '\n' };

	return simple_read_from_buffer(ubuf, cnt, ppos, buf, sizeof(buf));
}

static ssize_t fsm_opt_write(struct file *file, const char __user *ubuf,
			     size_t cnt, loff_t *ppos)
{
	struct fsm_inst *inst = file->private_data;
	bool on;
	int ret;

	if (!cnt || cnt > 8 || kstrtobool_from_user(ubuf, cnt, &on)) {
		pr_warn_ratelimited("options/stackmap (%s): write 1 or 0\n",
				    fsm_inst_label(inst));
		return -EINVAL;
	}
	/* The map is allocated and zeroed here, outside every lock. */
	ret = on ? fsm_inst_prepare_map(inst) : 0;
	if (!ret)
		ret = fsm_inst_set_recording(inst, on);
	return ret ? ret : cnt;
}

static const struct file_operations fsm_opt_fops = {
	.owner = THIS_MODULE,
	.open = fsm_opt_open,
	.read = fsm_opt_read,
	.write = fsm_opt_write,
	.llseek = FSM_NO_LLSEEK,
	.release = fsm_opt_release,
};

/* ---- creation and removal ---- */

/* ---- options/stackmap_user ---- */

/*
 * The option holds a reference on its instance while open (i_private is
 * the node key, id and serial number): the id cannot pass to another
 * instance meanwhile. What it switches is the user-stack side's
 * (ustack_deliver.c).
 */
static int fsm_uopt_open(struct inode *inode, struct file *file)
{
	struct fsm_inst *inst = fsm_node_inst(inode);
	int ret;

	if (!inst)
		return -ENODEV;
	ret = fsm_ustack_option_open(inst, file->f_mode & FMODE_WRITE);
	if (ret) {
		fsm_inst_put(inst);
		return ret;
	}
	file->private_data = inst;
	return nonseekable_open(inode, file);
}

static int fsm_uopt_release(struct inode *inode, struct file *file)
{
	fsm_inst_put(file->private_data);
	return 0;
}

static ssize_t fsm_uopt_read(struct file *file, char __user *ubuf,
			     size_t cnt, loff_t *ppos)
{
	char buf[2] = { fsm_ustack_option(file->private_data) ? '1' : '0',
			'\n' };

	return simple_read_from_buffer(ubuf, cnt, ppos, buf, sizeof(buf));
}

static ssize_t fsm_uopt_write(struct file *file, const char __user *ubuf,
			      size_t cnt, loff_t *ppos)
{
	bool on;
	int ret;

	if (!cnt || cnt > 8 || kstrtobool_from_user(ubuf, cnt, &on)) {
		pr_warn_ratelimited("options/stackmap_user: write 1 or 0\n");
		return -EINVAL;
	}
	ret = fsm_ustack_set_option(file->private_data, on);
	return ret ? ret : cnt;
}

static const struct file_operations fsm_uopt_fops = {
	.owner = THIS_MODULE,
	.open = fsm_uopt_open,
	.read = fsm_uopt_read,
	.write = fsm_uopt_write,
	.llseek = FSM_NO_LLSEEK,
	.release = fsm_uopt_release,
};

static const struct {
	const char *name;
	umode_t mode;
	const struct file_operations *fops;
	bool option;
} fsm_node_defs[FSM_NR_NODES] = {
	[FSM_NODE_MAP] = { "stack_map", 0640, &fsm_map_fops },
	[FSM_NODE_STAT] = { "stack_map_stat", 0440, &fsm_stat_fops },
	[FSM_NODE_BIN] = { "stack_map_bin", 0440, &fsm_bin_fops },
	[FSM_NODE_EVENTS] = { "stack_map_events", 0640, &fsm_events_fops },
	[FSM_NODE_OPTION] = { "stackmap", 0640, &fsm_opt_fops, true },
	[FSM_NODE_UOPTION] = { "stackmap_user", 0640, &fsm_uopt_fops, true },
};

static void fsm_nodes_remove_locked(struct fsm_inst *inst, bool forever);

/**
 * fsm_nodes_create - create the nodes of an instance, once.
 * @inst: instance (reference held by the caller)
 *
 * Does nothing when they exist or were removed for good.
 *
 * A live instance may be seen half made: the sync work can learn it while
 * instance_mkdir() (or trace_array_get_by_name()) still populates it. In
 * 6.1 init_tracer_tracefs() creates "trace" (what fsm_compat_instance_key()
 * needs) a dozen files before "options", and in debugfs mode the
 * ftrace_stackmap/instances/NAME directory of a removed instance of the
 * same name may still exist until fsm_reap_dead() removed it. Both are
 * -EAGAIN: nothing is left created and the instance is NOT marked
 * nodes_gone, so a later try (the sync work's retry, or FSM_DIR_MADE once
 * the mkdir is complete) creates the nodes. Only other failures are for
 * good.
 * Context: task, may sleep; takes fsm_nodes_mutex, must not hold
 * fsm_mutex.
 * Return: 0, -ENOENT if the instance directory was removed meanwhile,
 * -EAGAIN (try again later), or another -errno (what was created is
 * removed again, and the instance stays without nodes).
 */
int fsm_nodes_create(struct fsm_inst *inst)
{
	struct dentry *dir, *opts, *d;
	void *data = fsm_inst_node_key(inst);
	int i, ret = 0;

	mutex_lock(&fsm_nodes_mutex);
	if (inst->nodes_done || inst->nodes_gone)
		goto out;
	if (!fsm_inst_alive(inst)) {
		ret = -ENOENT;
		goto out;
	}

	if (fsm_compat_have_tracefs()) {
		dir = inst->dir;
		opts = fsm_compat_child(inst->dir, "options");
		if (!opts) {
			ret = -EAGAIN;	/* half made: see above */
			goto out;
		}
	} else {
		if (!fsm_compat_debugfs_root()) {
			ret = -ENODEV;
			goto fail;
		}
		if (inst->name) {
			d = fsm_compat_create_dir(inst->name, fsm_dbg_instances);
			if (IS_ERR(d)) {
				ret = PTR_ERR(d);
				/* an old instance's, not reaped yet: see above */
				if (ret == -EEXIST)
					ret = -EAGAIN;
				goto fail;
			}
			inst->dbg_dir = dget(d);
			dir = d;
		} else {
			dir = fsm_compat_debugfs_root();
		}
		d = fsm_compat_create_dir("options", dir);
		if (IS_ERR(d)) {
			ret = PTR_ERR(d);
			goto fail;
		}
		inst->dbg_opts = dget(d);
		opts = dget(d);
	}

	for (i = 0; i < FSM_NR_NODES; i++) {
		d = fsm_compat_create_file(fsm_node_defs[i].name,
					   fsm_node_defs[i].mode,
					   fsm_node_defs[i].option ? opts : dir,
					   data, fsm_node_defs[i].fops);
		if (IS_ERR(d)) {
			ret = PTR_ERR(d);
			break;
		}
		/* our own reference: the dentry outlives a removal by rmdir */
		inst->nodes[i] = dget(d);
	}
	dput(opts);
	if (!ret) {
		WRITE_ONCE(inst->nodes_done, true);
		goto out;
	}
fail:
	fsm_nodes_remove_locked(inst, ret != -EAGAIN);
out:
	mutex_unlock(&fsm_nodes_mutex);
	return ret;
}

/*
 * Remove what exists of the nodes; @forever: never create them again.
 * Context: fsm_nodes_mutex held.
 */
static void fsm_nodes_remove_locked(struct fsm_inst *inst, bool forever)
{
	int i;

	lockdep_assert_held(&fsm_nodes_mutex);
	if (forever)
		WRITE_ONCE(inst->nodes_gone, true);

	for (i = 0; i < FSM_NR_NODES; i++) {
		if (!inst->nodes[i])
			continue;
		fsm_compat_remove(inst->nodes[i]);
		dput(inst->nodes[i]);
		inst->nodes[i] = NULL;
	}
	if (inst->dbg_opts) {
		fsm_compat_remove(inst->dbg_opts);
		dput(inst->dbg_opts);
		inst->dbg_opts = NULL;
	}
	if (inst->dbg_dir) {
		fsm_compat_remove(inst->dbg_dir);
		dput(inst->dbg_dir);
		inst->dbg_dir = NULL;
	}
}

/**
 * fsm_nodes_remove - remove the nodes of an instance, for good.
 * @inst: instance
 *
 * Harmless for nodes the kernel already removed with their instance.
 * Context: task, may sleep; takes fsm_nodes_mutex, must not hold
 * fsm_mutex.
 */
void fsm_nodes_remove(struct fsm_inst *inst)
{
	mutex_lock(&fsm_nodes_mutex);
	fsm_nodes_remove_locked(inst, true);
	mutex_unlock(&fsm_nodes_mutex);
}

/**
 * fsm_nodes_init - debugfs mode: create ftrace_stackmap/instances.
 * Context: task (module init). Return: 0 or -errno.
 */
int fsm_nodes_init(void)
{
	struct dentry *d;

	if (fsm_compat_have_tracefs() || !fsm_compat_debugfs_root())
		return 0;
	d = fsm_compat_create_dir("instances", NULL);
	if (IS_ERR(d))
		return PTR_ERR(d);
	fsm_dbg_instances = dget(d);
	return 0;
}

/**
 * fsm_nodes_exit - undo fsm_nodes_init().
 * Context: task (module exit).
 */
void fsm_nodes_exit(void)
{
	if (fsm_dbg_instances) {
		fsm_compat_remove(fsm_dbg_instances);
		dput(fsm_dbg_instances);
		fsm_dbg_instances = NULL;
	}
}
