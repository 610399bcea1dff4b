// SPDX-License-Identifier: GPL-2.0
/*
 * nodes_map.c - the readers of an instance's maps, for nodes.c's table:
 *
 *   stack_map          every stack, id order, symbolized (kernel stacks,
 *                      then user stacks and the file table when
 *                      options/stackmap_user was set); write "reset" or
 *                      "0" for a new generation of both, "redefine" for
 *                      a new recording epoch (ids defined again)
 *   stack_map_bin      binary snapshot (FSMB v4, ftrace_stackmap/abi.h)
 *
 * Kernel addresses (stack_map_bin's ips and ref_symbol_addr, frames of
 * stack_map that resolve to no symbol) follow the policy of /proc/kallsyms:
 * decided at open from the opener's credentials (fsm_compat_show_kaddr()),
 * zeros for a reader who may not see them.
 *
 * Readers of the map take inst->map_rwsem for reading in each read() call
 * (seq_file start/stop); a reset takes it for writing. A reader works on a
 * snapshot taken at open: the generation and the number of ids. Records are
 * immutable once published, so inserts that continue meanwhile do not
 * disturb it; a reset does: the next read() then fails with -ESTALE (open
 * the file again).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
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

/*
 * The instance of a node being opened, with a reference (nodes.c too).
 * Context: task. Return: it, or NULL if it is gone.
 */
struct fsm_inst *fsm_node_inst(struct inode *inode)
{
	return fsm_inst_get_by_key(inode->i_private);
}

/* ---- readers of the maps: stack_map and stack_map_bin ---- */

/*
 * A reader streams, one seq_file position each:
 *   stack_map_bin only: the header                        (1 position)
 *   kernel stacks, ids [0, nr)                            (nr)
 *   user stacks, ids [0, unr)                             (unr)
 *   with a user map: the file table, one slot each        (fsm_fileid_slots())
 *   stack_map_bin only: the file table's end record       (1)
 * Nothing is allocated per position; every position is a bounded piece of
 * work (one record, one file table entry copied under its lock).
 */
struct fsm_reader {
	struct fsm_inst *inst;
	struct fsm_map *map;	/* NULL: never recorded, empty */
	struct fsm_map *umap;	/* NULL: no user stacks */
	u32 gen;		/* generation at open */
	u32 nr;			/* ids [0, nr) belong to the snapshot */
	u32 ugen;		/* user map generation at open */
	u32 unr;		/* user ids [0, unr) belong to the snapshot */
	bool bin;		/* stack_map_bin (positions shifted by the header) */
	bool partial;		/* bin: ids from nr (or unr) on were unpublished */
	bool kaddr;		/* the opener may see kernel addresses */
	loff_t total;		/* positions */
	struct fsm_fileid_info fi;	/* scratch: one file table entry */
	char sym[KSYM_SYMBOL_LEN];	/* scratch: one symbolized frame */
};

/* Kinds of positions (fsm_reader_what()). */
enum fsm_rpos {
	FSM_RPOS_HEADER,
	FSM_RPOS_KSTACK,
	FSM_RPOS_USTACK,
	FSM_RPOS_FILE,
	FSM_RPOS_END,
};

static enum fsm_rpos fsm_reader_what(const struct fsm_reader *r, loff_t pos,
				     u32 *idx)
{
	if (r->bin) {
		if (!pos)
			return FSM_RPOS_HEADER;
		pos--;
	}
	if (pos < r->nr) {
		*idx = pos;
		return FSM_RPOS_KSTACK;
	}
	pos -= r->nr;
	if (pos < r->unr) {
		*idx = pos;
		return FSM_RPOS_USTACK;
	}
	pos -= r->unr;
	if (r->umap && pos < fsm_fileid_slots()) {
		*idx = pos;
		return FSM_RPOS_FILE;
	}
	return FSM_RPOS_END;
}

/*
 * Ids of @map in the snapshot: all handed out (@prefix false), or the
 * prefix of published ones (@prefix true: the binary header announces the
 * count, so exactly that many entries must follow; an id is published right
 * after it is handed out, later ones show on the next read).
 * Context: task, map_rwsem held for reading.
 */
static u32 fsm_reader_count(struct fsm_map *map, bool prefix, bool *partial)
{
	const unsigned long long *ips;
	unsigned long long hits;
	unsigned int depth;
	u32 nr, id;

	nr = fsm_map_nr_ids(map);
	if (!prefix)
		return nr;
	for (id = 0; id < nr; id++) {
		if (fsm_map_lookup_id(map, id, &ips, &depth, &hits))
			break;
		if (!(id & 1023))
			cond_resched();
	}
	*partial |= id < nr;
	return id;
}

static struct fsm_reader *fsm_reader_open(struct inode *inode,
					   struct file *file, bool bin)
{
	struct fsm_reader *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	r->inst = fsm_node_inst(inode);
	if (!r->inst) {
		kfree(r);
		return ERR_PTR(-ENODEV);
	}
	r->bin = bin;
	/* decided at open from the opener's credentials, as /proc/kallsyms */
	r->kaddr = fsm_compat_show_kaddr(file);
	down_read(&r->inst->map_rwsem);
	/*
	 * Pairs with smp_store_release() in fsm_inst_prepare_map() (instances.c)
	 * and fsm_ust_umap_alloc() (ustack_deliver.c).
	 */
	r->map = smp_load_acquire(&r->inst->map);
	if (r->map) {
		r->gen = READ_ONCE(r->inst->gen);
		r->nr = fsm_reader_count(r->map, bin, &r->partial);
	}
	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	r->umap = smp_load_acquire(&r->inst->umap);
	if (r->umap) {
		r->ugen = READ_ONCE(r->inst->ugen);
		r->unr = fsm_reader_count(r->umap, bin, &r->partial);
	}
	up_read(&r->inst->map_rwsem);
	r->total = (loff_t)r->nr + r->unr + (r->umap ? fsm_fileid_slots() : 0) +
		   (bin ? 2 : 0);
	return r;
}

static int fsm_reader_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;
	struct fsm_reader *r = m->private;

	fsm_inst_put(r->inst);
	kfree(r);
	return seq_release(inode, file);
}

static void *fsm_reader_start(struct seq_file *m, loff_t *pos)
{
	struct fsm_reader *r = m->private;

	down_read(&r->inst->map_rwsem);
	/*
	 * Reset since open: the snapshot is gone. Not -EAGAIN: seq_lseek()
	 * retries traverse() as long as it gets -EAGAIN.
	 */
	if ((r->map && READ_ONCE(r->inst->gen) != r->gen) ||
	    (r->umap && READ_ONCE(r->inst->ugen) != r->ugen))
		return ERR_PTR(-ESTALE);
	if (*pos >= r->total)
		return NULL;
	return (void *)(unsigned long)(*pos + 1);
}

static void *fsm_reader_next(struct seq_file *m, void *v, loff_t *pos)
{
	struct fsm_reader *r = m->private;

	++*pos;
	return *pos < r->total ? (void *)(unsigned long)(*pos + 1) : NULL;
}

static void fsm_reader_stop(struct seq_file *m, void *v)
{
	struct fsm_reader *r = m->private;

	up_read(&r->inst->map_rwsem);
}

static struct fsm_reader *fsm_reader_seq_open(struct inode *inode,
					      struct file *file, bool bin,
					      const struct seq_operations *ops)
{
	struct fsm_reader *r;
	int ret;

	r = fsm_reader_open(inode, file, bin);
	if (IS_ERR(r))
		return r;
	ret = seq_open(file, ops);
	if (ret) {
		fsm_inst_put(r->inst);
		kfree(r);
		return ERR_PTR(ret);
	}
	((struct seq_file *)file->private_data)->private = r;
	return r;
}

/* ---- stack_map ---- */

static void fsm_show_kstack(struct seq_file *m, struct fsm_reader *r, u32 id)
{
	const unsigned long long *ips;
	unsigned long long hits;
	unsigned int nr, i;

	if (fsm_map_lookup_id(r->map, id, &ips, &nr, &hits))
		return;		/* handed out, not yet published */
	/*
	 * The id as the trace's records carry it (gen's low bits over the
	 * index), so that a grep for a record's stack_id finds its stack;
	 * the generation and the index as fields.
	 */
	seq_printf(m, "stack_id %u [gen %u, index %u, hits %llu, depth %u]\n",
		   FSM_SID_MAKE(r->gen, id), r->gen, id, hits, nr);
	for (i = 0; i < nr; i++) {
		/* as "%pS": symbol+offset/size, or the bare address if none */
		sprint_symbol(r->sym, (unsigned long)ips[i]);
		if (!r->kaddr && !strncmp(r->sym, "0x", 2))
			seq_printf(m, "  [%u] 0x%016x\n", i, 0);
		else
			seq_printf(m, "  [%u] %s\n", i, r->sym);
	}
}

/* One user frame: path+0xoffset, [vdso]+0xoffset, [anon] 0xaddress... */
static void fsm_show_uframe(struct seq_file *m, u64 file_id, u64 w)
{
	u64 off = w & FSM_UFR_OFFSET_MASK;

	if (w & FSM_UFR_NOVMA)
		seq_printf(m, "[novma] 0x%llx", off);
	else if (w & FSM_UFR_ANON)
		seq_printf(m, "[anon] 0x%llx", off);
	else if (w & FSM_UFR_VDSO)
		seq_printf(m, "[vdso]+0x%llx", off);
	else if (w & FSM_UFR_SPECIAL)
		seq_printf(m, "[special] 0x%llx", off);
	else
		fsm_fileid_show(m, file_id, off);
}

static void fsm_show_ustack(struct seq_file *m, struct fsm_reader *r, u32 id)
{
	const unsigned long long *w;
	unsigned long long hits;
	unsigned int nw, nr, i;
	u16 flags;

	if (fsm_map_lookup_id(r->umap, id, &w, &nw, &hits) || nw < FSM_UKEY_HDR)
		return;		/* handed out, not yet published */
	nr = (nw - FSM_UKEY_HDR) / 2;
	flags = FSM_UKEY_META_FLAGS(w[FSM_UKEY_META]);
	/* the user_stack records carry the index and the generation apart */
	seq_printf(m, "ustack_id %u [gen %u, hits %llu, depth %u, mm %016llx, stop %u%s%s%s]\n",
		   id, r->ugen, hits, nr, w[FSM_UKEY_MM],
		   FSM_UKEY_META_STOP(w[FSM_UKEY_META]),
		   flags & FSM_USF_IA32 ? ", " FSM_UST_ARCH_COMPAT_NAME : "",
		   flags & FSM_USF_TRUNCATED ? ", truncated" : "",
		   flags & FSM_USF_UNRELIABLE ? ", unreliable" : "");
	w += FSM_UKEY_HDR;
	for (i = 0; i < nr; i++) {
		seq_printf(m, "  [%u] ", i);
		fsm_show_uframe(m, w[2 * i], w[2 * i + 1]);
		seq_putc(m, '\n');
	}
}

static int fsm_map_show(struct seq_file *m, void *v)
{
	struct fsm_reader *r = m->private;
	u32 idx = 0;

	switch (fsm_reader_what(r, (unsigned long)v - 1, &idx)) {
	case FSM_RPOS_KSTACK:
		fsm_show_kstack(m, r, idx);
		break;
	case FSM_RPOS_USTACK:
		fsm_show_ustack(m, r, idx);
		break;
	case FSM_RPOS_FILE:
		if (!fsm_fileid_slot(idx, &r->fi))
			return SEQ_SKIP;
		/*
		 * "file ID BUILD_ID|- PATH": the path last, it may hold
		 * spaces. Escaped (%pE: bytes the kernel does not count as
		 * printable as \n, \t, \ooo...), as the trace prints it: any
		 * user names the files it runs, and a name with a newline
		 * must not forge lines that root and every parser of this
		 * file read. One way only (a backslash is not escaped):
		 * stack_map_bin has the exact path.
		 */
		seq_printf(m, "file %016llx ", r->fi.id);
		if (r->fi.bid_len)
			seq_printf(m, "%*phN", r->fi.bid_len, r->fi.bid);
		else
			seq_putc(m, '-');
		seq_printf(m, " %*pE\n",
			   (int)strnlen(r->fi.path, sizeof(r->fi.path)), r->fi.path);
		break;
	default:
		return SEQ_SKIP;
	}
	return 0;
}

static const struct seq_operations fsm_map_seq_ops = {
	.start = fsm_reader_start,
	.next = fsm_reader_next,
	.stop = fsm_reader_stop,
	.show = fsm_map_show,
};

static int fsm_map_open(struct inode *inode, struct file *file)
{
	return PTR_ERR_OR_ZERO(fsm_reader_seq_open(inode, file, false,
						   &fsm_map_seq_ops));
}

/* Start a new generation of both maps. Context: task. */
static void fsm_inst_reset(struct fsm_inst *inst)
{
	struct fsm_map *map, *umap;
	u32 gen = 0, ugen = 0;

	down_write(&inst->map_rwsem);
	/* Pairs with smp_store_release() in fsm_inst_prepare_map(). */
	map = smp_load_acquire(&inst->map);
	/* Pairs with smp_store_release() in fsm_ust_umap_alloc(). */
	umap = smp_load_acquire(&inst->umap);
	if (map) {
		/*
		 * The stack_reset record goes into the trace before the new
		 * generation opens, so that no record of the new generation
		 * can precede it (abi.h). Resets are serialised by map_rwsem,
		 * so the next generation is known: generations count modulo
		 * 2^31, skipping 0 (fsm_core.h).
		 */
		u32 next = inst->gen >= 0x7fffffffu ? 1 : inst->gen + 1;

		inst->gen_ts = fsm_write_reset_record(inst, next);
		/*
		 * Probes run with preemption off. Waiting for every one
		 * that may have taken an id of the old generation bounds how
		 * late its id record can come: before the map opens @next.
		 * So a record after this reset record carries the old or
		 * the new generation, never one 2^12 generations older with
		 * the same low bits (the reader's rule in abi.h is exact).
		 */
		synchronize_rcu();
		gen = fsm_map_reset(map);
		WARN_ON_ONCE(gen != next);
		WRITE_ONCE(inst->gen, gen);
	}
	if (umap) {
		ugen = fsm_map_reset(umap);
		WRITE_ONCE(inst->ugen, ugen);
	}
	if (map || umap)
		inst->resets++;
	up_write(&inst->map_rwsem);
	/* never recorded: nothing was reset, nothing to mark */
	if (umap)
		fsm_ustack_write_reset(inst, ugen);
}

/*
 * Every definition in the instance's buffer is to be taken as gone: each
 * id, kernel and user, and each file_map, goes out with its definition at
 * its next use on each CPU. For a reader that consumed the buffer
 * (stackmap-ctl extract): the definitions it took are no longer in the
 * buffer, the stamps that stand for them must not count, and the next read
 * must stand on its own. Each CPU sees the new value at its next record
 * (fsm_rb_position()): a plain value, no ordering needed. The user epoch
 * moves too, for the file_map records' own rule (fileid.c). Context: task.
 */
static void fsm_inst_redefine(struct fsm_inst *inst)
{
	atomic_inc(&inst->redefine_seq);
	fsm_ustack_redefine(inst);
}

/*
 * Write "reset" or "0", or "redefine" (one optional trailing newline), in
 * one write().
 */
static ssize_t fsm_map_write(struct file *file, const char __user *ubuf,
			     size_t cnt, loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	struct fsm_reader *r = m->private;
	char buf[16];

	if (!cnt || cnt >= sizeof(buf))
		goto bad;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	if (buf[cnt - 1] == '\n')
		buf[cnt - 1] = '\0';
	if (!strcmp(buf, "redefine")) {
		fsm_inst_redefine(r->inst);
		return cnt;
	}
	if (strcmp(buf, "reset") && strcmp(buf, "0"))
		goto bad;
	fsm_inst_reset(r->inst);
	return cnt;
bad:
	pr_warn_ratelimited("stack_map (%s): write \"reset\", \"0\" or \"redefine\"\n",
			    fsm_inst_label(r->inst));
	return -EINVAL;
}

const struct file_operations fsm_map_fops = {
	.owner = THIS_MODULE,
	.open = fsm_map_open,
	.read = seq_read,
	.write = fsm_map_write,
	.llseek = seq_lseek,
	.release = fsm_reader_release,
};

/* ---- stack_map_bin ---- */

static void fsm_bin_header(struct seq_file *m, struct fsm_reader *r)
{
	struct fsmb_header h = {};
	const char *name = r->inst->name ? r->inst->name : "";

	h.magic = cpu_to_le32(FSMB_MAGIC);
	h.version = cpu_to_le32(FSMB_VERSION);
	h.nr_stacks = cpu_to_le32(r->nr);
	h.header_size = cpu_to_le32(sizeof(h));
	h.generation = cpu_to_le32(r->gen);
	h.bits = cpu_to_le32(fsm_bits);
	h.flags = cpu_to_le32(FSMB_F_KERNEL | (r->partial ? FSMB_F_PARTIAL : 0) |
			      (r->umap ? FSMB_F_USER : 0) |
			      (r->kaddr ? 0 : FSMB_F_HIDDEN));
	h.max_depth = cpu_to_le32(FSM_MAX_KERNEL_DEPTH);
	h.ref_symbol_addr = cpu_to_le64(r->kaddr ? (unsigned long)&schedule : 0);
	strscpy(h.instance, name, sizeof(h.instance));
	h.nr_ustacks = cpu_to_le32(r->unr);
	h.ugeneration = cpu_to_le32(r->umap ? r->ugen : 0);
	h.ubits = cpu_to_le32(r->umap ? fsm_bits : 0);
	h.umax_frames = cpu_to_le32(FSM_USTACK_MAX_RECORD_FRAMES);
	h.ustack_entry_size = cpu_to_le32(sizeof(struct fsmb_uentry));
	seq_write(m, &h, sizeof(h));
}

static int fsm_bin_kstack(struct seq_file *m, struct fsm_reader *r, u32 id)
{
	const unsigned long long *ips;
	struct fsmb_entry e = {};
	unsigned long long hits;
	unsigned int nr, i;
	__le64 ip;

	/* published at open (prefix), immutable in this generation */
	if (fsm_map_lookup_id(r->map, id, &ips, &nr, &hits))
		return -EIO;
	e.stack_id = cpu_to_le32(id);
	e.nr = cpu_to_le32(nr);
	e.hits = cpu_to_le32(min_t(unsigned long long, hits, U32_MAX));
	seq_write(m, &e, sizeof(e));
	for (i = 0; i < nr; i++) {
		ip = cpu_to_le64(r->kaddr ? ips[i] : 0);
		seq_write(m, &ip, sizeof(ip));
	}
	return 0;
}

static int fsm_bin_ustack(struct seq_file *m, struct fsm_reader *r, u32 id)
{
	const unsigned long long *w;
	struct fsmb_uentry e = {};
	unsigned long long hits;
	unsigned int nw, i;
	__le64 x;

	/* published at open (prefix), immutable in this generation */
	if (fsm_map_lookup_id(r->umap, id, &w, &nw, &hits) || nw < FSM_UKEY_HDR)
		return -EIO;
	e.ustack_id = cpu_to_le32(id);
	e.nr = cpu_to_le32((nw - FSM_UKEY_HDR) / 2);
	e.hits = cpu_to_le32(min_t(unsigned long long, hits, U32_MAX));
	e.flags = cpu_to_le16(FSM_UKEY_META_FLAGS(w[FSM_UKEY_META]));
	e.stop = FSM_UKEY_META_STOP(w[FSM_UKEY_META]);
	e.mm = cpu_to_le64(w[FSM_UKEY_MM]);
	seq_write(m, &e, sizeof(e));
	for (i = FSM_UKEY_HDR; i < FSM_UKEY_HDR + 2 * le32_to_cpu(e.nr); i++) {
		x = cpu_to_le64(w[i]);
		seq_write(m, &x, sizeof(x));
	}
	return 0;
}

static int fsm_bin_file(struct seq_file *m, struct fsm_reader *r, u32 slot)
{
	static const u8 zero[8];
	struct fsmb_file f = {};
	u32 plen, len;

	if (!fsm_fileid_slot(slot, &r->fi))
		return SEQ_SKIP;
	plen = strnlen(r->fi.path, sizeof(r->fi.path) - 1) + 1;
	len = sizeof(f) + plen + r->fi.bid_len;
	f.file_id = cpu_to_le64(r->fi.id);
	f.size = cpu_to_le32(ALIGN(len, 8));
	f.path_len = cpu_to_le16(plen);
	f.bid_len = r->fi.bid_len;
	seq_write(m, &f, sizeof(f));
	seq_write(m, r->fi.path, plen);
	seq_write(m, r->fi.bid, r->fi.bid_len);
	seq_write(m, zero, ALIGN(len, 8) - len);
	return 0;
}

static int fsm_bin_show(struct seq_file *m, void *v)
{
	struct fsm_reader *r = m->private;
	struct fsmb_file end = { .size = cpu_to_le32(sizeof(end)) };
	u32 idx = 0;

	switch (fsm_reader_what(r, (unsigned long)v - 1, &idx)) {
	case FSM_RPOS_HEADER:
		fsm_bin_header(m, r);
		return 0;
	case FSM_RPOS_KSTACK:
		return fsm_bin_kstack(m, r, idx);
	case FSM_RPOS_USTACK:
		return fsm_bin_ustack(m, r, idx);
	case FSM_RPOS_FILE:
		return fsm_bin_file(m, r, idx);
	case FSM_RPOS_END:
	default:
		seq_write(m, &end, sizeof(end));	/* file_id 0 */
		return 0;
	}
}

static const struct seq_operations fsm_bin_seq_ops = {
	.start = fsm_reader_start,
	.next = fsm_reader_next,
	.stop = fsm_reader_stop,
	.show = fsm_bin_show,
};

static int fsm_bin_open(struct inode *inode, struct file *file)
{
	return PTR_ERR_OR_ZERO(fsm_reader_seq_open(inode, file, true,
						   &fsm_bin_seq_ops));
}

const struct file_operations fsm_bin_fops = {
	.owner = THIS_MODULE,
	.open = fsm_bin_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = fsm_reader_release,
};
