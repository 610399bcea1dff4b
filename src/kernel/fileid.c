// SPDX-License-Identifier: GPL-2.0
/*
 * fileid.c - file identities of user stack frames.
 *
 * A frame in a file-backed mapping is reported as (file id, offset). The id
 * is a keyed SipHash of the file's inode identity: the super block's dev_t,
 * the inode number, i_generation and the inode's ctime, under a private
 * random key (never a pointer, unrelated to the %p key). So every process
 * that maps a file gets the same id for it, however it opened it, and a file
 * changed in place (ctime moves) or an inode number reused for another file
 * (i_generation or ctime differ) gets another id.
 *
 * The table (2^file_table_bits entries, 4-way probing, the least recently
 * used of the 4 replaced when all are taken) caches per id the path and the
 * GNU build-id, so a file is described once however many processes map it,
 * and, per instance, when its file_map record was last written (reminder
 * interval). An id does not depend on the table: an entry that is replaced
 * and comes back keeps its id, and only its file_map record is written again.
 *
 * Per CPU, the position in that CPU's ring buffer of the last file_map
 * record of each (file, instance) written there (a small direct-mapped
 * table, fsm_fileid_claim()): a file_map is written again on a CPU whose
 * buffer may overwrite the last one before the user stacks that name the
 * file, as stack ids are (Documentation/flight-recorder.rst).
 *
 * No I/O, ever, and no lock held across anything slow:
 *  - the build-id is read by fsm_buildid_parse() (src/core) from pages
 *    already in the page cache and up to date (find_get_page(), never
 *    ->read_folio nor readahead, no fsnotify permission event): "not cached"
 *    is an answer (no build-id for now), and a later lookup of the file
 *    tries again, until the pages are there;
 *  - d_path() does no I/O; it runs on a per-CPU buffer, with no lock of ours;
 *  - fsm_fid_lock (a spinlock) covers only copies into and out of the table
 *    and the write of a file_map record (a ring-buffer write): readers
 *    (stack_map, stack_map_bin), the task works of all traced tasks and
 *    rmmod never wait for a file system.
 * Callers: the user-stack task work and the tracefs readers (task context).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/trace_seq.h>
#include <linux/vmalloc.h>

#include "compat/compat.h"
#include "fsm_buildid.h"
#include "param.h"
#include "ustack.h"

#define FSM_FID_PROBE		4
#define FSM_FID_PATH		FSM_FILEID_PATH
#define FSM_FID_BID		FSM_FILEID_BID

static_assert(FSM_FILEID_BID == FSM_BUILDID_MAX);

/* What makes a file the same file (all fields compared, no padding). */
struct fsm_fid_ident {
	u64 ino;
	s64 ctime_sec;
	u32 ctime_nsec;
	u32 dev;
	u32 gen;
	u32 zero;
};

struct fsm_fid {
	u64 id;			/* 0: free */
	struct fsm_fid_ident ident;
	unsigned long used;	/* jiffies of the last lookup: replacement order */
	u8 bid_state;		/* enum fsm_bid_result */
	u8 bid_len;
	u8 bid[FSM_FID_BID];
	char path[FSM_FID_PATH];
	unsigned long last[FSM_UST_MAX_INST];	/* jiffies of the last file_map, 0: never */
	u32 epoch[FSM_UST_MAX_INST];		/* instance epoch at that time */
};

static siphash_key_t fsm_fid_key;
static struct fsm_fid *fsm_fids;
static unsigned int fsm_fid_slots;	/* 2^file_table_bits, set at init */
/* Table contents only: never held across I/O, d_path or an allocation. */
static DEFINE_SPINLOCK(fsm_fid_lock);
static char __percpu *fsm_fid_pathbuf;	/* d_path scratch, PATH_MAX per CPU */

/*
 * Where a CPU's ring buffer of an instance got a file's last file_map
 * record: @id 0 is an empty entry; @iseq is the instance's serial number
 * (struct fsm_inst.seq, never reused), so that an instance id given to a
 * new instance, with a new buffer, finds no stamp of the old one.
 */
struct fsm_fid_stamp {
	u64 id;
	u32 iseq;
	u32 pos;
};

#define FSM_FID_STAMPS_BITS	8
static struct fsm_fid_stamp __percpu *fsm_fid_stamps;	/* [1 << BITS] per CPU */
/* Entries of its table a claim ages, and where the next one starts. */
#define FSM_FID_AGE_PER_CLAIM	2
static DEFINE_PER_CPU(unsigned int, fsm_fid_age_next);

/* Statistics (stack_map_stat, module-wide). */
static atomic64_t fsm_fid_lookups;	/* fsm_fileid_get() calls */
static atomic64_t fsm_fid_refills;	/* entries (re)described: d_path + build-id */
static atomic64_t fsm_fid_replaced;	/* refills that pushed another file out */
static atomic64_t fsm_fid_bid_later;	/* build-ids read by a later lookup */
static atomic64_t fsm_fid_bid_uncached;	/* build-id reads answered "not cached" */

static unsigned int fsm_file_map_interval_ms = 200;

static struct fsm_param_range fsm_interval_range = {
	.val = &fsm_file_map_interval_ms, .min = 1, .max = 3600000,
};
module_param_cb(file_map_interval_ms, &fsm_param_range_ops,
		&fsm_interval_range, 0644);
MODULE_PARM_DESC(file_map_interval_ms,
		 "Re-emit a stackmap:file_map record for a file id used after this many ms (1..3600000, default 200)");

static unsigned int fsm_file_table_bits = FSM_FILEID_BITS_DEFAULT;

/*
 * file_table_bits: 2^N entries in the file table, fixed at load time.
 * Validated like bits (param.h): never clamped.
 */
static struct fsm_param_range fsm_table_bits_range = {
	.val = &fsm_file_table_bits,
	.min = FSM_FILEID_BITS_MIN, .max = FSM_FILEID_BITS_MAX,
};
module_param_cb(file_table_bits, &fsm_param_range_ops, &fsm_table_bits_range,
		0444);
MODULE_PARM_DESC(file_table_bits,
		 "File table capacity exponent: 2^N distinct mapped files described at a time, accepted "
		 __stringify(FSM_FILEID_BITS_MIN) ".." __stringify(FSM_FILEID_BITS_MAX)
		 " (default " __stringify(FSM_FILEID_BITS_DEFAULT) ")");

/*
 * fsm_bid_read_fn for fsm_buildid_parse(): copy [off, off + len) of @ctx (a
 * struct file) from the page cache, or say why not. Never starts I/O: a page
 * that is absent or not up to date is FSM_BID_READ_AGAIN. Context: task; does
 * not sleep (find_get_page() takes the RCU read lock only).
 */
static int fsm_fid_read_cached(void *ctx, unsigned long long off, void *dst,
			       unsigned int len)
{
	struct file *file = ctx;
	struct address_space *mapping = file->f_mapping;
	loff_t size = i_size_read(mapping->host);
	u8 *d = dst;

	if (size < 0 || off > (u64)size || len > (u64)size - off)
		return FSM_BID_READ_EOF;
	while (len) {
		unsigned int po = offset_in_page(off);
		unsigned int n = min_t(unsigned int, len, PAGE_SIZE - po);
		struct page *page = find_get_page(mapping, off >> PAGE_SHIFT);
		void *kaddr;

		if (!page)
			return FSM_BID_READ_AGAIN;
		/*
		 * PageUptodate() has an smp_rmb() after the flag test, pairing
		 * with the smp_wmb() of SetPageUptodate() after the read that
		 * filled the page: its bytes are visible once the flag is.
		 */
		if (!PageUptodate(page)) {
			put_page(page);
			return FSM_BID_READ_AGAIN;
		}
		kaddr = kmap_local_page(page);
		memcpy(d, kaddr + po, n);
		kunmap_local(kaddr);
		put_page(page);
		d += n;
		off += n;
		len -= n;
	}
	return FSM_BID_READ_OK;
}

/* Build-id of @file from cached pages: enum fsm_bid_result, @bid/@len. */
static u8 fsm_fid_read_build_id(struct file *file, u8 *bid, u8 *len)
{
	unsigned int n = 0;
	int ret;

	ret = fsm_buildid_parse(fsm_fid_read_cached, file, bid, &n);
	*len = ret == FSM_BID_FOUND ? n : 0;
	if (ret == FSM_BID_UNAVAILABLE)
		atomic64_inc(&fsm_fid_bid_uncached);
	return ret;
}

/*
 * The identity of @file's inode. The fields are read without the inode's
 * lock (a racing chmod or write may change ctime meanwhile): the worst case
 * is one lookup with a mixed ctime, i.e. an id that describes the same file
 * once more.
 */
static u64 fsm_fid_ident(struct file *file, struct fsm_fid_ident *ident)
{
	struct inode *inode = file_inode(file);
	u64 id;

	memset(ident, 0, sizeof(*ident));
	ident->ino = inode->i_ino;
	ident->dev = inode->i_sb->s_dev;
	ident->gen = READ_ONCE(inode->i_generation);
	fsm_compat_inode_ctime(inode, &ident->ctime_sec, &ident->ctime_nsec);
	id = siphash_4u64(ident->ino, ident->ctime_sec,
			  (u64)ident->dev << 32 | ident->gen, ident->ctime_nsec,
			  &fsm_fid_key);
	return id ? id : 1;
}

/* The entry of @id, or NULL. Context: fsm_fid_lock held. */
static struct fsm_fid *fsm_fid_find(u64 id)
{
	unsigned int i, s;

	lockdep_assert_held(&fsm_fid_lock);
	for (i = 0; i < FSM_FID_PROBE; i++) {
		s = (id + i) & (fsm_fid_slots - 1);
		if (fsm_fids[s].id == id)
			return &fsm_fids[s];
	}
	return NULL;
}

/* Where a new @id goes: a free slot, else the least recently used one. */
static struct fsm_fid *fsm_fid_victim(u64 id)
{
	struct fsm_fid *f, *old = NULL;
	unsigned int i;

	lockdep_assert_held(&fsm_fid_lock);
	for (i = 0; i < FSM_FID_PROBE; i++) {
		f = &fsm_fids[(id + i) & (fsm_fid_slots - 1)];
		if (!f->id)
			return f;
		if (!old || time_before(f->used, old->used))
			old = f;
	}
	atomic64_inc(&fsm_fid_replaced);
	return old;
}

/*
 * A new entry's description, made before fsm_fid_lock is taken: the path
 * users see (d_path of fsm_compat_file_path() on a per-CPU buffer, cut to
 * FSM_FID_PATH) and the build-id.
 */
struct fsm_fid_desc {
	u8 bid_state;
	u8 bid_len;
	u8 bid[FSM_FID_BID];
	char path[FSM_FID_PATH];
};

static void fsm_fid_describe(struct file *file, struct fsm_fid_desc *d)
{
	char *buf, *p;

	/* d_path does not sleep: no preemption while the buffer is ours */
	buf = get_cpu_ptr(fsm_fid_pathbuf);
	p = d_path(fsm_compat_file_path(file), buf, PATH_MAX);
	strscpy(d->path, IS_ERR(p) ? "?" : p, sizeof(d->path));
	put_cpu_ptr(fsm_fid_pathbuf);
	d->bid_state = fsm_fid_read_build_id(file, d->bid, &d->bid_len);
}

/* A build-id found after the entry was made: file_map records go out again. */
static void fsm_fid_set_bid(struct fsm_fid *f, const u8 *bid, u8 len, u8 state)
{
	lockdep_assert_held(&fsm_fid_lock);
	f->bid_state = state;
	f->bid_len = len;
	memcpy(f->bid, bid, len);
	memset(f->last, 0, sizeof(f->last));
}

/**
 * fsm_fileid_get - the id of a mapped file, described in the table.
 * @file: a mapping's file (the caller holds a reference)
 *
 * The first lookup of a file (and the first after its entry was replaced)
 * describes it: d_path and a build-id read from cached pages, both without
 * fsm_fid_lock. A file whose build-id pages were not cached is looked at
 * again on later lookups (cheap: page cache lookups only).
 *
 * Context: task, not under mmap_lock. Does not sleep, never waits for a
 * file system.
 * Return: the file id (never 0).
 */
u64 fsm_fileid_get(struct file *file)
{
	struct fsm_fid_ident ident;
	struct fsm_fid_desc d;
	struct fsm_fid *f;
	bool again = false;
	u64 id;

	atomic64_inc(&fsm_fid_lookups);
	id = fsm_fid_ident(file, &ident);
	spin_lock(&fsm_fid_lock);
	f = fsm_fid_find(id);
	if (f && !memcmp(&f->ident, &ident, sizeof(ident))) {
		f->used = jiffies;
		again = f->bid_state == FSM_BID_UNAVAILABLE;
		spin_unlock(&fsm_fid_lock);
		if (!again)
			return id;
		/* the build-id's pages were not cached: maybe they are now */
		d.bid_state = fsm_fid_read_build_id(file, d.bid, &d.bid_len);
		if (d.bid_state == FSM_BID_UNAVAILABLE)
			return id;
		spin_lock(&fsm_fid_lock);
		f = fsm_fid_find(id);
		if (f && !memcmp(&f->ident, &ident, sizeof(ident)) &&
		    f->bid_state == FSM_BID_UNAVAILABLE) {
			fsm_fid_set_bid(f, d.bid, d.bid_len, d.bid_state);
			if (d.bid_state == FSM_BID_FOUND)
				atomic64_inc(&fsm_fid_bid_later);
		}
		spin_unlock(&fsm_fid_lock);
		return id;
	}
	spin_unlock(&fsm_fid_lock);

	fsm_fid_describe(file, &d);

	spin_lock(&fsm_fid_lock);
	f = fsm_fid_find(id);
	if (f && !memcmp(&f->ident, &ident, sizeof(ident))) {
		/* described by another task meanwhile: keep the better build-id */
		if (f->bid_state == FSM_BID_UNAVAILABLE &&
		    d.bid_state != FSM_BID_UNAVAILABLE)
			fsm_fid_set_bid(f, d.bid, d.bid_len, d.bid_state);
		goto out;
	}
	if (!f)
		f = fsm_fid_victim(id);
	/* new, replaced or stale (same id, other identity: 2^-64) */
	memset(f, 0, sizeof(*f));
	f->ident = ident;
	f->used = jiffies;
	f->bid_state = d.bid_state;
	f->bid_len = d.bid_len;
	memcpy(f->bid, d.bid, d.bid_len);
	strscpy(f->path, d.path, sizeof(f->path));
	f->id = id;
	atomic64_inc(&fsm_fid_refills);
out:
	spin_unlock(&fsm_fid_lock);
	return id;
}

/**
 * fsm_fileid_emit - write the file_map record of @id into an instance if
 * it was never written in this recording (@epoch), or longer ago than
 * file_map_interval_ms.
 * @id:      file id (from fsm_fileid_get())
 * @inst_id: instance
 * @epoch:   the instance's recording epoch
 * @fn:      writes the record (must not sleep: called under fsm_fid_lock);
 *           returns false if the buffer refused it
 * @ctx:     for @fn
 *
 * Context: task. Return: the record was written.
 */
bool fsm_fileid_emit(u64 id, u32 inst_id, u32 epoch, fsm_fileid_emit_fn fn,
		     void *ctx)
{
	unsigned long now = jiffies, iv;
	struct fsm_fid *f;
	bool wrote = false;

	if (inst_id >= FSM_UST_MAX_INST)
		return false;
	iv = msecs_to_jiffies(READ_ONCE(fsm_file_map_interval_ms));
	spin_lock(&fsm_fid_lock);
	f = fsm_fid_find(id);
	if (!f)
		goto out;
	if (f->last[inst_id] && f->epoch[inst_id] == epoch &&
	    time_before(now, f->last[inst_id] + iv))
		goto out;
	if (fn(ctx, id, f->path, f->bid, f->bid_len)) {
		f->last[inst_id] = now ? now : 1;
		f->epoch[inst_id] = epoch;
		wrote = true;
	}
out:
	spin_unlock(&fsm_fid_lock);
	return wrote;
}

/**
 * fsm_fileid_write - write the file_map record of @id now.
 * @id, @fn, @ctx: as fsm_fileid_emit()
 * Context: task. Return: the record was written (false also when @id is
 * no longer in the table: then its user stacks name a file the trace
 * cannot describe, as for a stack walked before a replacement).
 */
bool fsm_fileid_write(u64 id, fsm_fileid_emit_fn fn, void *ctx)
{
	struct fsm_fid *f;
	bool wrote = false;

	spin_lock(&fsm_fid_lock);
	f = fsm_fid_find(id);
	if (f)
		wrote = fn(ctx, id, f->path, f->bid, f->bid_len);
	spin_unlock(&fsm_fid_lock);
	return wrote;
}

static struct fsm_fid_stamp *fsm_fid_stamp_of(u64 id, u32 iseq)
{
	return this_cpu_ptr(fsm_fid_stamps) +
	       hash_64(id ^ ((u64)iseq << 32), FSM_FID_STAMPS_BITS);
}

/**
 * fsm_fileid_claim - is a file_map record of @id due in this CPU's buffer
 * of the instance with serial number @iseq?
 * @pos:     the position in that buffer (fsm_rb_position()), read before
 *           the record is written
 * @horizon: how far behind @pos the last one may be; 0: always due
 *
 * As fsm_map_def_claim() for stack ids: due when this CPU has no stamp of
 * (@id, @iseq) (first time here, or another file took the entry) or the
 * stamp is @horizon or more behind; a due claim stamps @pos.
 * Context: task, preemption disabled from the claim to the write of the
 * record (the stamps are this CPU's; file_map records are written by task
 * works only, so nothing nests on the table). Return: due.
 */
bool fsm_fileid_claim(u64 id, u32 iseq, u32 pos, u32 horizon)
{
	struct fsm_fid_stamp *st = fsm_fid_stamp_of(id, iseq), *t;
	struct fsm_fid_stamp *tab = this_cpu_ptr(fsm_fid_stamps);
	unsigned int *next = this_cpu_ptr(&fsm_fid_age_next), i;

	/*
	 * Positions compare modulo 2^32: a stamp of a file not described
	 * here for k * 2^32 + [0, @horizon) positions would read fresh. So
	 * each claim empties the stamps of this instance a horizon old in
	 * the next FSM_FID_AGE_PER_CLAIM entries of the table (a pass every
	 * 128 claims); other instances' positions are not comparable with
	 * @pos, their own claims age them. Left: a table no claim of the
	 * instance passes over in 2^32 positions.
	 */
	for (i = 0; i < FSM_FID_AGE_PER_CLAIM; i++) {
		t = &tab[(*next)++ & ((1U << FSM_FID_STAMPS_BITS) - 1)];
		if (t->id && t->iseq == iseq && pos - t->pos >= horizon)
			t->id = 0;
	}
	if (st->id == id && st->iseq == iseq && pos - st->pos < horizon)
		return false;
	st->id = id;
	st->iseq = iseq;
	st->pos = pos;
	return true;
}

/**
 * fsm_fileid_unclaim - the record of a due fsm_fileid_claim() was not
 * written: forget its stamp. Context: as fsm_fileid_claim(), same CPU.
 */
void fsm_fileid_unclaim(u64 id, u32 iseq, u32 pos)
{
	struct fsm_fid_stamp *st = fsm_fid_stamp_of(id, iseq);

	if (st->id == id && st->iseq == iseq && st->pos == pos)
		st->id = 0;
}

/**
 * fsm_fileid_show - print a frame as path+0xoffset (or file:id+0xoffset if
 * the id is not in the table).
 * Context: task.
 */
void fsm_fileid_show(struct seq_file *m, u64 id, u64 off)
{
	struct fsm_fid *f;

	spin_lock(&fsm_fid_lock);
	f = fsm_fid_find(id);
	if (f)	/* escaped as in the trace (fsm_fileid_trace_seq()) */
		seq_printf(m, "%*pE+0x%llx", (int)strlen(f->path), f->path, off);
	else
		seq_printf(m, "file:%016llx+0x%llx", id, off);
	spin_unlock(&fsm_fid_lock);
}

/**
 * fsm_fileid_trace_seq - "path+0xoffset" of a file id, for the trace output.
 * @s:   where to print
 * @id:  file id
 * @off: file offset
 *
 * As fsm_fileid_show(), but never waits for the table's lock (the trace
 * output also runs from ftrace_dump(), interrupts off): when the lock is
 * busy, or the id is not in the table any more, prints file:ID+0xoffset.
 * Context: any.
 */
void fsm_fileid_trace_seq(struct trace_seq *s, u64 id, u64 off)
{
	struct fsm_fid *f;

	if (spin_trylock(&fsm_fid_lock)) {
		f = fsm_fid_find(id);
		if (f) {
			/*
			 * %pE escapes control characters: a file name
			 * with "\n" must not forge lines in root's trace.
			 */
			trace_seq_printf(s, "%*pE+0x%llx", (int)strlen(f->path),
					 f->path, off);
			spin_unlock(&fsm_fid_lock);
			return;
		}
		spin_unlock(&fsm_fid_lock);
	}
	trace_seq_printf(s, "file:%016llx+0x%llx", id, off);
}

/**
 * fsm_fileid_slots - entries of the file table (2^file_table_bits).
 * Context: any, after fsm_fileid_init().
 */
unsigned int fsm_fileid_slots(void)
{
	return fsm_fid_slots;
}

/**
 * fsm_fileid_slot - copy one entry of the file table.
 * @slot: 0 .. fsm_fileid_slots() - 1
 * @out:  the copy (consistent: taken under the table's lock)
 *
 * For readers that stream the table (stack_map, stack_map_bin): one short
 * critical section per entry, no allocation. Entries entered or replaced
 * meanwhile may or may not be seen.
 * Context: task.
 * Return: true if the slot holds a file, false if it is free (or @slot is
 * out of range).
 */
bool fsm_fileid_slot(unsigned int slot, struct fsm_fileid_info *out)
{
	struct fsm_fid *f;
	bool used;

	if (slot >= fsm_fid_slots)
		return false;
	spin_lock(&fsm_fid_lock);
	f = &fsm_fids[slot];
	used = f->id != 0;
	if (used) {
		out->id = f->id;
		out->bid_len = f->bid_len;
		memcpy(out->bid, f->bid, sizeof(out->bid));
		strscpy(out->path, f->path, sizeof(out->path));
	}
	spin_unlock(&fsm_fid_lock);
	return used;
}

/**
 * fsm_fileid_stat_show - file table lines of stack_map_stat (module-wide).
 * Context: task.
 */
void fsm_fileid_stat_show(struct seq_file *m)
{
	unsigned int i, used = 0, nobid = 0;

	for (i = 0; i < fsm_fid_slots; i++) {
		spin_lock(&fsm_fid_lock);
		if (fsm_fids[i].id) {
			used++;
			nobid += fsm_fids[i].bid_state == FSM_BID_UNAVAILABLE;
		}
		spin_unlock(&fsm_fid_lock);
		if (!(i & 1023))
			cond_resched();
	}
	seq_printf(m, "file_table_slots: %u\n", fsm_fid_slots);
	seq_printf(m, "file_table_used: %u\n", used);
	seq_printf(m, "file_table_bid_pending: %u\n", nobid);
	seq_printf(m, "file_lookups: %lld\n", atomic64_read(&fsm_fid_lookups));
	seq_printf(m, "file_map_refills: %lld\n", atomic64_read(&fsm_fid_refills));
	seq_printf(m, "file_map_replaced: %lld\n", atomic64_read(&fsm_fid_replaced));
	seq_printf(m, "file_bid_uncached: %lld\n",
		   atomic64_read(&fsm_fid_bid_uncached));
	seq_printf(m, "file_bid_later: %lld\n", atomic64_read(&fsm_fid_bid_later));
}

/**
 * fsm_fileid_init - allocate the table, the d_path buffers and the key.
 * Context: task (module init). Return: 0 or -ENOMEM.
 */
int fsm_fileid_init(void)
{
	get_random_bytes(&fsm_fid_key, sizeof(fsm_fid_key));
	fsm_fid_slots = 1U << fsm_file_table_bits;
	fsm_fids = vzalloc(array_size(fsm_fid_slots, sizeof(*fsm_fids)));
	fsm_fid_pathbuf = __alloc_percpu(PATH_MAX, SMP_CACHE_BYTES);
	fsm_fid_stamps = __alloc_percpu(sizeof(struct fsm_fid_stamp) << FSM_FID_STAMPS_BITS,
					SMP_CACHE_BYTES);
	if (!fsm_fids || !fsm_fid_pathbuf || !fsm_fid_stamps) {
		pr_warn("cannot allocate the file table (file_table_bits=%u)\n",
			fsm_file_table_bits);
		fsm_fileid_exit();
		return -ENOMEM;
	}
	return 0;
}

/**
 * fsm_fileid_exit - free the table.
 * Context: task (module exit), no user left.
 */
void fsm_fileid_exit(void)
{
	vfree(fsm_fids);
	fsm_fids = NULL;
	free_percpu(fsm_fid_pathbuf);
	fsm_fid_pathbuf = NULL;
	free_percpu(fsm_fid_stamps);
	fsm_fid_stamps = NULL;
}
