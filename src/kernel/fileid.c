// SPDX-License-Identifier: GPL-2.0
/*
 * fileid.c - file identities of user stack frames.
 *
 * A frame in a file-backed mapping is reported as (file id, offset). The id
 * is siphash(struct file pointer) under a private random key: stable while
 * the mapping's file stays open, never a raw pointer, and unrelated to the
 * %p hashing key. The same pointer can later belong to another file (the
 * struct file was freed and reused): each table entry remembers the inode
 * it described and is refreshed (and its file_map record re-emitted at once)
 * when that changes. So an id only means something together with the most
 * recent stackmap:file_map record with that id before it in the trace.
 *
 * The table is preallocated at load time (FSM_FID_SLOTS entries, 4-way
 * probing, overwrite on overflow) and used from task context only (the
 * user-stack task work and the tracefs readers), under fsm_fid_mutex.
 * Each entry caches the path and the GNU build-id (read once from the ELF
 * program headers with kernel_read(), bounded) and, per instance, when
 * its file_map record was last written, for the reminder interval.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "ustack.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID	3	/* elf.h of newer kernels */
#endif

#define FSM_FID_SLOTS		FSM_FILEID_SLOTS	/* power of two */
#define FSM_FID_PROBE		4
#define FSM_FID_PATH		FSM_FILEID_PATH
#define FSM_FID_BID		FSM_FILEID_BID	/* SHA-1 build-ids; longer ones are cut */
#define FSM_FID_PHDRS		32	/* program headers looked at */
#define FSM_FID_NOTES		2048	/* bytes of PT_NOTE segments read */

struct fsm_fid {
	u64 id;			/* 0: free */
	const void *key;	/* the struct file, compared only, never shown */
	unsigned long ino;	/* the inode it described */
	dev_t dev;
	u8 bid_len;
	u8 bid[FSM_FID_BID];
	char path[FSM_FID_PATH];
	unsigned long last[FSM_UST_MAX_INST];	/* jiffies of the last file_map, 0: never */
	u32 epoch[FSM_UST_MAX_INST];		/* instance epoch at that time */
};

static siphash_key_t fsm_fid_key;
static struct fsm_fid *fsm_fids;
static DEFINE_MUTEX(fsm_fid_mutex);
static char *fsm_fid_buf;	/* d_path and ELF scratch, fsm_fid_mutex */

static unsigned int fsm_file_map_interval_ms = 200;

static int fsm_interval_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < 1 || v > 3600000) {
		pr_err("file_map_interval_ms=%s invalid (accepted: 1..3600000)\n",
		       val);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops fsm_interval_ops = {
	.set = fsm_interval_set,
	.get = param_get_uint,
};

module_param_cb(file_map_interval_ms, &fsm_interval_ops,
		&fsm_file_map_interval_ms, 0644);
MODULE_PARM_DESC(file_map_interval_ms,
		 "Re-emit a stackmap:file_map record for a file id used after this many ms (1..3600000, default 200)");

/* Bounded read of the GNU build-id note of an ELF file (fsm_fid_mutex). */
static void fsm_fid_read_build_id(struct file *file, struct fsm_fid *f)
{
	char *buf = fsm_fid_buf;
	struct elf64_phdr *ph64;
	struct elf32_phdr *ph32;
	unsigned int i, nph;
	bool is64;
	loff_t pos;
	u64 phoff;

	f->bid_len = 0;
	if (!(file->f_mode & FMODE_READ))
		return;
	pos = 0;
	if (kernel_read(file, buf, sizeof(struct elf64_hdr), &pos) !=
	    sizeof(struct elf64_hdr))
		return;
	if (memcmp(buf, ELFMAG, SELFMAG))
		return;
	is64 = buf[EI_CLASS] == ELFCLASS64;
	if (is64) {
		struct elf64_hdr *eh = (void *)buf;

		if (eh->e_phentsize != sizeof(*ph64))
			return;
		phoff = eh->e_phoff;
		nph = min_t(unsigned int, eh->e_phnum, FSM_FID_PHDRS);
	} else {
		struct elf32_hdr *eh = (void *)buf;

		if (buf[EI_CLASS] != ELFCLASS32 || eh->e_phentsize != sizeof(*ph32))
			return;
		phoff = eh->e_phoff;
		nph = min_t(unsigned int, eh->e_phnum, FSM_FID_PHDRS);
	}
	for (i = 0; i < nph; i++) {
		u64 off, sz;
		u32 type;
		char *n, *end;

		pos = phoff + (u64)i * (is64 ? sizeof(*ph64) : sizeof(*ph32));
		if (kernel_read(file, buf, is64 ? sizeof(*ph64) : sizeof(*ph32),
				&pos) != (is64 ? sizeof(*ph64) : sizeof(*ph32)))
			return;
		if (is64) {
			ph64 = (void *)buf;
			type = ph64->p_type;
			off = ph64->p_offset;
			sz = ph64->p_filesz;
		} else {
			ph32 = (void *)buf;
			type = ph32->p_type;
			off = ph32->p_offset;
			sz = ph32->p_filesz;
		}
		if (type != PT_NOTE)
			continue;
		sz = min_t(u64, sz, FSM_FID_NOTES);
		pos = off;
		if (kernel_read(file, buf, sz, &pos) != sz)
			continue;
		/* Elf32_Nhdr and Elf64_Nhdr are the same: three u32 */
		n = buf;
		end = buf + sz;
		while (n + sizeof(Elf32_Nhdr) <= end) {
			Elf32_Nhdr *nh = (void *)n;
			u32 nsz = ALIGN(nh->n_namesz, 4);
			u32 dsz = ALIGN(nh->n_descsz, 4);
			char *name = n + sizeof(*nh);

			if (nsz > FSM_FID_NOTES || dsz > FSM_FID_NOTES ||
			    name + nsz + dsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz) {
				f->bid_len = min_t(u32, nh->n_descsz, FSM_FID_BID);
				memcpy(f->bid, name + nsz, f->bid_len);
				return;
			}
			n = name + nsz + dsz;
		}
	}
}

static struct fsm_fid *fsm_fid_find(u64 id)
{
	unsigned int i, s;

	for (i = 0; i < FSM_FID_PROBE; i++) {
		s = (id + i) & (FSM_FID_SLOTS - 1);
		if (fsm_fids[s].id == id)
			return &fsm_fids[s];
	}
	return NULL;
}

/**
 * fsm_fileid_get - the id of a mapped file, entered into the table.
 * @file: a mapping's file (the caller holds a reference)
 *
 * Context: task, may sleep (d_path, kernel_read of the ELF headers the
 * first time a file is seen). Not under mmap_lock.
 * Return: the file id (never 0).
 */
u64 fsm_fileid_get(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct fsm_fid *f;
	unsigned int i, s;
	u64 id;
	char *p;

	id = siphash_1u64((u64)(unsigned long)file, &fsm_fid_key);
	id = id ? id : 1;
	mutex_lock(&fsm_fid_mutex);
	f = fsm_fid_find(id);
	if (f && f->key == file && f->ino == inode->i_ino &&
	    f->dev == inode->i_sb->s_dev)
		goto out;
	if (!f) {
		/* first free slot, else overwrite the home slot */
		f = &fsm_fids[id & (FSM_FID_SLOTS - 1)];
		for (i = 0; i < FSM_FID_PROBE; i++) {
			s = (id + i) & (FSM_FID_SLOTS - 1);
			if (!fsm_fids[s].id) {
				f = &fsm_fids[s];
				break;
			}
		}
	}
	/* new or stale: describe it again; file_map goes out on next use */
	memset(f, 0, sizeof(*f));
	f->key = file;
	f->ino = inode->i_ino;
	f->dev = inode->i_sb->s_dev;
	p = d_path(&file->f_path, fsm_fid_buf, PATH_MAX);
	strscpy(f->path, IS_ERR(p) ? "?" : p, sizeof(f->path));
	fsm_fid_read_build_id(file, f);
	f->id = id;
out:
	mutex_unlock(&fsm_fid_mutex);
	return id;
}

/**
 * fsm_fileid_emit - write the file_map record of @id into an instance if
 * it was never written in this recording (@epoch), or longer ago than
 * file_map_interval_ms.
 * @id:      file id (from fsm_fileid_get())
 * @inst_id: instance
 * @epoch:   the instance's recording epoch
 * @fn:      writes the record; returns false if the buffer refused it
 * @ctx:     for @fn
 *
 * Context: task.
 */
void fsm_fileid_emit(u64 id, u32 inst_id, u32 epoch, fsm_fileid_emit_fn fn,
		     void *ctx)
{
	unsigned long now = jiffies, iv;
	struct fsm_fid *f;

	if (inst_id >= FSM_UST_MAX_INST)
		return;
	iv = msecs_to_jiffies(READ_ONCE(fsm_file_map_interval_ms));
	mutex_lock(&fsm_fid_mutex);
	f = fsm_fid_find(id);
	if (!f)
		goto out;
	if (f->last[inst_id] && f->epoch[inst_id] == epoch &&
	    time_before(now, f->last[inst_id] + iv))
		goto out;
	if (fn(ctx, id, f->path, f->bid, f->bid_len)) {
		f->last[inst_id] = now ? now : 1;
		f->epoch[inst_id] = epoch;
	}
out:
	mutex_unlock(&fsm_fid_mutex);
}

/**
 * fsm_fileid_show - print a frame as path+0xoffset (or id+0xoffset if the
 * id left the table).
 * Context: task.
 */
void fsm_fileid_show(struct seq_file *m, u64 id, u64 off)
{
	struct fsm_fid *f;

	mutex_lock(&fsm_fid_mutex);
	f = fsm_fid_find(id);
	if (f)
		seq_printf(m, "%s+0x%llx", f->path, off);
	else
		seq_printf(m, "file:%016llx+0x%llx", id, off);
	mutex_unlock(&fsm_fid_mutex);
}

/**
 * fsm_fileid_slot - copy one entry of the file table.
 * @slot: 0 .. FSM_FILEID_SLOTS - 1
 * @out:  the copy (consistent: taken under the table's mutex)
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

	if (slot >= FSM_FID_SLOTS)
		return false;
	mutex_lock(&fsm_fid_mutex);
	f = &fsm_fids[slot];
	used = f->id != 0;
	if (used) {
		out->id = f->id;
		out->bid_len = f->bid_len;
		memcpy(out->bid, f->bid, sizeof(out->bid));
		strscpy(out->path, f->path, sizeof(out->path));
	}
	mutex_unlock(&fsm_fid_mutex);
	return used;
}

/**
 * fsm_fileid_init - allocate the table and the key.
 * Context: task (module init). Return: 0 or -ENOMEM.
 */
int fsm_fileid_init(void)
{
	get_random_bytes(&fsm_fid_key, sizeof(fsm_fid_key));
	fsm_fids = vzalloc(array_size(FSM_FID_SLOTS, sizeof(*fsm_fids)));
	fsm_fid_buf = kmalloc(max(PATH_MAX, FSM_FID_NOTES), GFP_KERNEL);
	if (!fsm_fids || !fsm_fid_buf) {
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
	kfree(fsm_fid_buf);
	fsm_fid_buf = NULL;
}
