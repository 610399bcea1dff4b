// SPDX-License-Identifier: GPL-2.0
/*
 * ustack_ukey.c - deferred user stacks: the walk and the user map key
 * (overview in ustack.c).
 *
 * fsm_ust_walk() runs once per kernel entry, in the walk task work
 * (ustack_work.c), through fsm_uwc_complete(): frame pointers with
 * copy_from_user_nofault() reads (the call-site checks of AArch32 and x86
 * read code under mmap_read_lock(), fsm_ust_read_code()), then, under the
 * same mmap_read_lock(), each address turned into (file, offset, flags),
 * then, with the lock dropped, file ids (fileid.c). The result is the
 * entry's user map key in its walk buffer (struct fsm_ust_stack; ustack.h, FSM_UKEY_*): the
 * address-space key (fsm_ust_mm_key()), a meta word, then (file id,
 * offset | flags) pairs. An exiting task (after exit_mm), an exec in
 * between, no mm: an empty stack with a reason.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/uaccess.h>

#include "compat/ustack_arch.h"
#include "ustack_internal.h"

atomic64_t fsm_ust_walks = ATOMIC64_INIT(0);

/* ---- the walk ---- */

static bool fsm_ust_read(void *ctx, unsigned long long addr, unsigned int size,
			 unsigned long long *val)
{
	u32 v32;

	if (size == 8)
		return !copy_from_user_nofault(val, (const void __user *)
					       (unsigned long)addr, 8);
	if (copy_from_user_nofault(&v32, (const void __user *)(unsigned long)addr,
				   4))
		return false;
	*val = v32;
	return true;
}

/* fsm_uw_walk()'s context: the code reader's lock state. */
struct fsm_ust_read_ctx {
	struct mm_struct *mm;
	bool locked;
	struct vm_area_struct *vma;	/* the last code vma found (lock held) */
};

/*
 * The vma of @addr, trying the last one found first: a stack's return
 * addresses mostly lie in a few mappings. Context: mmap_read_lock() held
 * since @*last was found.
 */
static struct vm_area_struct *fsm_ust_vma(struct mm_struct *mm, unsigned long addr,
					  struct vm_area_struct **last)
{
	struct vm_area_struct *vma = *last;

	if (vma && addr >= vma->vm_start && addr < vma->vm_end)
		return vma;
	vma = vma_lookup(mm, addr);
	if (vma)
		*last = vma;
	return vma;
}

/*
 * Code reads (the AArch32 call-site checks, and x86's check that a return
 * address is code after a call; fsm_unwind.h): @addr comes from a
 * candidate return address, any value a wrong frame layout or a frame
 * pointer used as a general register produced (an inode number that
 * fstat() wrote where the walk looks, Documentation/ustack.rst), so read
 * only an executable mapping that is not a device one
 * (VM_IO, VM_PFNMAP: UIO, VFIO, DRM registers, where a read may have side
 * effects). The mmap lock is taken at the first code read and held until
 * the walk ends (fsm_ust_walk()), so the vma cannot change between the
 * check and the read; the read stays nofault (a fault with page faults
 * disabled never takes the mmap lock, and no file system is waited for).
 * False means "not code". In such a mapping, a page that is not present
 * (reclaimed: the caller has not run for a while) is code whose bytes are
 * unknown: it reads as zeros, which decode as no call instruction, so x86
 * reports the frame flagged (unreliable) and AArch32 stops as before;
 * neither takes it for sure, and x86 does not drop a real caller.
 * arm64 walks never call it. Context: the walk task work, may sleep.
 */
static bool fsm_ust_read_code(void *ctx, unsigned long long addr,
			      unsigned int size, unsigned long long *val)
{
	struct fsm_ust_read_ctx *c = ctx;
	struct vm_area_struct *vma;

	if (!c->locked) {
		mmap_read_lock(c->mm);
		c->locked = true;
	}
	vma = fsm_ust_vma(c->mm, addr, &c->vma);
	if (!vma || !(vma->vm_flags & VM_EXEC) ||
	    (vma->vm_flags & (VM_IO | VM_PFNMAP)) || addr + size > vma->vm_end)
		return false;
	if (!fsm_ust_read(NULL, addr, size, val))
		*val = 0;	/* code, bytes unknown: no call */
	return true;
}


/*
 * Turn the walk's addresses ips[0..nr) into (file id, offset | flags)
 * pairs in fsm_ust_frames(stk). Context: task, may sleep; the mm is
 * current's and alive, its mmap_read_lock() held (the walk's code reads
 * took it, or the caller did): dropped here before the file ids.
 */
static void fsm_ust_translate(struct fsm_ust_stack *stk,
			      const unsigned long long *ips, unsigned int nr,
			      struct vm_area_struct *last)
{
	struct mm_struct *mm = current->mm;
	u64 *fr = fsm_ust_frames(stk);
	unsigned int i;

	for (i = 0; i < nr; i++) {
		unsigned long ip = ips[i];
		struct vm_area_struct *vma = fsm_ust_vma(mm, ip, &last);
		const char *name;

		fr[2 * i] = 0;
		if (!vma) {
			fr[2 * i + 1] = (ip & FSM_UFR_OFFSET_MASK) | FSM_UFR_NOVMA;
		} else if (vma->vm_file) {
			/* the file pointer for now: its id after the unlock */
			fr[2 * i] = (unsigned long)get_file(vma->vm_file);
			fr[2 * i + 1] = (ip - vma->vm_start +
					 ((u64)vma->vm_pgoff << PAGE_SHIFT)) &
					FSM_UFR_OFFSET_MASK;
		} else if (vma->vm_ops && vma->vm_ops->name) {
			/* special mappings name themselves: [vdso], [vvar] */
			name = vma->vm_ops->name(vma);
			if (name && !strcmp(name, "[vdso]"))
				fr[2 * i + 1] = ((ip - vma->vm_start) &
						 FSM_UFR_OFFSET_MASK) | FSM_UFR_VDSO;
			else
				fr[2 * i + 1] = (ip & FSM_UFR_OFFSET_MASK) |
						FSM_UFR_SPECIAL;
		} else {
			fr[2 * i + 1] = (ip & FSM_UFR_OFFSET_MASK) | FSM_UFR_ANON;
		}
	}
	mmap_read_unlock(mm);
	/* file ids may sleep (path, build-id): without mmap_lock */
	for (i = 0; i < nr; i++) {
		struct file *f = (struct file *)(unsigned long)fr[2 * i];

		if (!f)
			continue;
		fr[2 * i] = fsm_fileid_get(f);
		fput(f);
	}
}

/*
 * The address-space identity of a user stack: a keyed hash of the mm, the
 * thread group leader's start time and exec count, under a key of our own
 * (never the raw pointer, never the %p key). Equal for all threads of a
 * process between two execs; a reused mm pointer of a later process hashes
 * differently. Context: task work of @t, @t->mm alive.
 */
static u64 fsm_ust_mm_key(struct task_struct *t)
{
	struct task_struct *leader;
	u64 start;
	u32 exec;

	rcu_read_lock();	/* group_leader changes only in a de_thread() exec */
	leader = READ_ONCE(t->group_leader);
	start = leader->start_time;
	exec = READ_ONCE(leader->self_exec_id);
	rcu_read_unlock();
	return siphash_3u64((unsigned long)t->mm, start, exec,
			    &fsm_ust_mm_siphash);
}

static unsigned int fsm_ust_abort(struct fsm_ust_stack *stk,
				  struct fsm_uw_result *res, u8 reason)
{
	memset(res, 0, sizeof(*res));
	res->stop = FSM_UW_STOP_ABORTED;
	stk->reason = reason;
	stk->stop = FSM_UW_STOP_ABORTED;
	stk->nr = 0;
	return 0;
}

/* fsm_uwc_walk_fn: called once per entry by fsm_uwc_complete(). */
unsigned int fsm_ust_walk(void *ctx, unsigned long long *entries,
				 unsigned int max, struct fsm_uw_result *res)
{
	struct fsm_ust_walk_ctx *c = ctx;
	struct fsm_ust_stack *stk = c->stk;
	struct task_struct *t = current;
	struct pt_regs *regs = c->regs;
	struct fsm_ust_read_ctx rc = { .mm = t->mm, .locked = false, .vma = NULL };
	struct fsm_uw_regs u;
	unsigned int nr;

	stk->flags = 0;
	/* after exit_mm() (sched_process_exit is later): never touch the mm */
	if (t->flags & PF_EXITING)
		return fsm_ust_abort(stk, res, FSM_URS_EXITING);
	if (!t->mm)
		return fsm_ust_abort(stk, res, FSM_URS_NO_MM);
	if (t->self_exec_id != c->exec_id)
		return fsm_ust_abort(stk, res, FSM_URS_EXEC);
	fsm_ust_regs(regs, &u);
	if (fsm_ust_arch_compat(&u)) {
		stk->flags |= FSM_USF_IA32;
		if (!fsm_ust_arch_flat(regs))
			return fsm_ust_abort(stk, res, FSM_URS_SEGMENTS);
	}
	atomic64_inc(&fsm_ust_walks);
	stk->words[FSM_UKEY_MM] = fsm_ust_mm_key(t);
	nr = fsm_uw_walk(&u, fsm_ust_read, fsm_ust_read_code, &rc, entries, max,
			 res);
	/* the vma lookups of the frames under the same lock hold */
	if (!rc.locked)
		mmap_read_lock(rc.mm);
	stk->stop = res->stop;
	stk->reason = res->stop == FSM_UW_STOP_FIRST_FAULT ?
		      FSM_URS_FIRST_FAULT : FSM_URS_WALKED;
	if (res->stop == FSM_UW_STOP_DEPTH)
		stk->flags |= FSM_USF_TRUNCATED;
	if (res->flags & FSM_UW_RES_UNRELIABLE)
		stk->flags |= FSM_USF_UNRELIABLE;
	fsm_ust_translate(stk, entries, nr, rc.vma);
	stk->nr = nr;
	/*
	 * The key's meta word, the same for every instance: records carry
	 * at most FSM_USTACK_MAX_RECORD_FRAMES frames (a deeper stack is cut
	 * and flagged truncated), and so do the map's keys.
	 */
	stk->words[FSM_UKEY_META] =
		((stk->flags | (nr > FSM_USTACK_MAX_RECORD_FRAMES ? FSM_USF_TRUNCATED : 0)) &
		 (FSM_USF_IA32 | FSM_USF_TRUNCATED | FSM_USF_UNRELIABLE)) |
		(u64)stk->stop << 16;
	return nr;
}

