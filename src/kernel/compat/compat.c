// SPDX-License-Identifier: GPL-2.0
/*
 * compat.c - kernel differences and non-exported symbols (see compat.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/fsnotify_backend.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracefs.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include "compat.h"
#include "layouts.h"	/* generated layouts: scripts/kernel-layouts */

/*
 * Indirect branch tracking: an indirect call must land on a marker
 * instruction. Decided at build time from the kernel configuration.
 */
#if defined(CONFIG_X86_KERNEL_IBT)
#include <asm/ibt.h>
#define FSM_HAVE_IBT 1
#elif defined(CONFIG_ARM64_BTI_KERNEL)
#define FSM_HAVE_IBT 1
#else
#define FSM_HAVE_IBT 0
#endif /* CONFIG_X86_KERNEL_IBT || CONFIG_ARM64_BTI_KERNEL */

/*
 * Canaries: the cached pointers have exactly the type of the kernel's own
 * prototypes (typeof), and the prototypes we rely on are spelled out once
 * more here. A kernel that changes either signature fails this build.
 */
static_assert(__same_type(&tracefs_create_file,
			  struct dentry *(*)(const char *, umode_t,
					     struct dentry *, void *,
					     const struct file_operations *)),
	      "tracefs_create_file() changed its prototype: adapt compat.c");
static_assert(__same_type(&tracefs_remove, void (*)(struct dentry *)),
	      "tracefs_remove() changed its prototype: adapt compat.c");

#ifdef CONFIG_KALLSYMS
static_assert(__same_type(&kallsyms_show_value, bool (*)(const struct cred *)),
	      "kallsyms_show_value() changed its prototype: adapt compat.c");
#endif /* CONFIG_KALLSYMS */

/*
 * Fields read by this file (see compat.h), each on the branch its probe
 * chose; a rename breaks the build here.
 */
#if !FSM_HAVE_INODE_GET_CTIME_SEC
static_assert(__same_type(((struct inode *)NULL)->i_ctime,
			  struct timespec64),
	      "inode::i_ctime is gone: adapt compat.h (a probe)");
#endif /* !FSM_HAVE_INODE_GET_CTIME_SEC */
#if FSM_HAVE_DENTRY_D_CHILDREN
static_assert(__same_type(((struct dentry *)NULL)->d_children,
			  struct hlist_head),
	      "dentry::d_children changed type: adapt compat.c");
/* the subdirectories of a dentry, its d_lock held */
#define fsm_for_each_child(child, parent)				\
	hlist_for_each_entry(child, &(parent)->d_children, d_sib)
#else
static_assert(__same_type(((struct dentry *)NULL)->d_subdirs,
			  struct list_head),
	      "dentry::d_subdirs is gone: adapt compat.c (a probe)");
#define fsm_for_each_child(child, parent)				\
	list_for_each_entry(child, &(parent)->d_subdirs, d_child)
#endif /* FSM_HAVE_DENTRY_D_CHILDREN */

/*
 * The kernel functions this file borrows, called through static calls
 * (direct calls on x86: see fsm_kcall() in ksyms.h for why), each with a
 * flag that says it was set. Set at fsm_compat_init(), never changed.
 */
DEFINE_STATIC_CALL_NULL(fsm_sc_tracefs_create_file, tracefs_create_file);
DEFINE_STATIC_CALL_NULL(fsm_sc_tracefs_remove, tracefs_remove);
static bool fsm_have_tracefs;
static struct dentry *fsm_debugfs_root;
static const char *fsm_debugfs_why;
#ifdef CONFIG_KALLSYMS
DEFINE_STATIC_CALL_NULL(fsm_sc_kallsyms_show_value, kallsyms_show_value);
static bool fsm_have_show_value;
#endif /* CONFIG_KALLSYMS */

/* Borrowed functions found by name, and how many of them are sealed. */
static unsigned int fsm_borrowed_fns, fsm_borrowed_sealed;

#if defined(CONFIG_X86_KERNEL_IBT)
static int fsm_endbr_at(unsigned long addr);
#endif /* CONFIG_X86_KERNEL_IBT */

#ifdef CONFIG_KPROBES
/*
 * Resolve @name once through a kprobe. Return: the symbol's address, or 0.
 *
 * register_kprobe() on a name (6.1, 6.12, 7.x: kernel/kprobes.c) looks it
 * up with kallsyms (kprobe_lookup_name()), lets the architecture step over
 * an ENDBR at a function entry (x86, arch_adjust_kprobe_addr(): the seal
 * poison counts as one there), and stores the result in @kp.addr *before*
 * any check of the address: for a data symbol the registration then fails
 * (-EINVAL, not kernel text) with @kp.addr set. So data and functions
 * resolve alike, and the module never calls kallsyms_lookup_name() (not
 * exported, and sealed on 6.12 and 7.x). The probe is registered disabled:
 * a function that registers is never armed. What came back is checked
 * with sprint_symbol() (exported): the start of a symbol, or 4 bytes into
 * one that starts with ENDBR or its poison; anything else is refused.
 * @quiet: say nothing when the name is not found (the caller says what it
 * does without).
 */
static unsigned long fsm_kprobe_lookup(const char *name, bool quiet)
{
	struct kprobe kp = {
		.symbol_name = name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr, off = ~0UL, size;
	char *buf, *p;
	int ret;

	ret = register_kprobe(&kp);
	if (!ret)
		unregister_kprobe(&kp);
	addr = (unsigned long)kp.addr;
	if (!addr) {
		if (!quiet)
			pr_warn("cannot resolve %s through a kprobe (%d)\n",
				name, ret);
		return 0;
	}
	buf = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	if (!buf)
		return 0;
	sprint_symbol(buf, addr);	/* "name+0xoff/0xsize" */
	p = strrchr(buf, '+');
	if (p && sscanf(p, "+%lx/%lx", &off, &size) == 2)
		*p = '\0';
	if (!p || off == ~0UL || strcmp(buf, name)) {
		off = ~0UL;
	} else if (off == 4) {
#if defined(CONFIG_X86_KERNEL_IBT)
		if (!fsm_endbr_at(addr - 4))
			off = ~0UL;
#else
		off = ~0UL;
#endif /* CONFIG_X86_KERNEL_IBT */
	} else if (off) {
		off = ~0UL;
	}
	kfree(buf);
	if (off == ~0UL) {
		pr_warn("%s: the kprobe gave %pS, not the symbol: not using it\n",
			name, (void *)addr);
		return 0;
	}
	return addr - off;
}
#else
static unsigned long fsm_kprobe_lookup(const char *name, bool quiet)
{
	if (!quiet)
		pr_warn("cannot resolve %s: kernel built without CONFIG_KPROBES\n",
			name);
	return 0;
}
#endif /* CONFIG_KPROBES */

#if defined(CONFIG_X86_KERNEL_IBT)
/*
 * The instruction at @addr: 1 for ENDBR64, -1 for the poison that
 * apply_seal_endbr() writes over the ENDBR of a function nothing calls
 * indirectly (with IBT on, an indirect call there faults with #CP), 0 for
 * anything else or an unreadable address. The kernel's is_endbr() takes
 * the poison for an ENDBR (it is the kprobe and ftrace test "is this a
 * function's first instruction"), and 7.x made it out of line and did not
 * export it; gen_endbr() and gen_endbr_poison() are inline in every line.
 */
static int fsm_endbr_at(unsigned long addr)
{
	u32 insn;

	if (copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)))
		return 0;
	if (insn == gen_endbr())
		return 1;
	return insn == gen_endbr_poison() ? -1 : 0;
}
#endif /* CONFIG_X86_KERNEL_IBT */

/*
 * With indirect branch tracking, check that @addr (a function pointer read
 * from a kernel structure) is a valid indirect-call target.
 * Return: @addr, or 0 to refuse.
 */
static unsigned long fsm_check_call_target(const char *name, unsigned long addr)
{
#if FSM_HAVE_IBT
#if defined(CONFIG_X86_KERNEL_IBT)
	int at = fsm_endbr_at(addr);

	if (at > 0)
		return addr;
	if (at < 0) {
		/*
		 * Sealed: the kernel poisons at boot, whatever the CPU, the
		 * ENDBR of a function whose address nothing takes (6.12 and
		 * 7.x). The poison is a NOP while the CPU does not enforce
		 * IBT (QEMU's TCG, ibt=off), and an indirect call there faults
		 * (#CP) once it does: refused always, so that a guest without
		 * IBT shows what a CPU with IBT would do.
		 */
		pr_warn("%s at %pS: its ENDBR is sealed (never called indirectly): not using it\n",
			name, (void *)addr);
		return 0;
	}
#else
	u32 insn;

	/* arm64: BTI c (0xd503245f), BTI jc (0xd50324df), PACIASP (0xd503233f) */
	if (!copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)) &&
	    (insn == 0xd503245f || insn == 0xd50324df || insn == 0xd503233f))
		return addr;
#endif /* CONFIG_X86_KERNEL_IBT */
	pr_warn("%s at %pS is not a valid indirect-call target (IBT/BTI): not using it\n",
		name, (void *)addr);
	return 0;
#else
	return addr;
#endif /* FSM_HAVE_IBT */
}

/*
 * Whether @addr, the start of the function @name found by name, may be
 * called through a static call (fsm_kcall(), ksyms.h). With arch static
 * calls (x86) that is a direct call: any function start will do, sealed or
 * not. Without them (arm64) it is an indirect call: the target must be a
 * valid one. Counts the functions, and the sealed ones, for
 * fsm_compat_announce(). Return: @addr, or 0 to refuse.
 */
static unsigned long fsm_direct_target(const char *name, unsigned long addr)
{
	fsm_borrowed_fns++;
#if defined(CONFIG_X86_KERNEL_IBT)
	if (fsm_endbr_at(addr) < 0)
		fsm_borrowed_sealed++;
#endif /* CONFIG_X86_KERNEL_IBT */
#ifdef CONFIG_HAVE_STATIC_CALL
	return addr;
#else
	return fsm_check_call_target(name, addr);
#endif /* CONFIG_HAVE_STATIC_CALL */
}

/* A function found by name, for a static call (fsm_direct_target()). */
static void *fsm_resolve(const char *name)
{
	unsigned long addr = fsm_kprobe_lookup(name, false);

	if (!addr)
		return NULL;
	return (void *)fsm_direct_target(name, addr);
}

/* fsm_compat_layouts_why(): NULL, or why the layouts are not this kernel's */
static const char *fsm_kl_why;

/* Decide fsm_kl_why. Context: task (module init). */
static void fsm_kl_check_kernel(void)
{
#ifdef FSM_KL_RELEASE
	static char why[4 * (__NEW_UTS_LEN + 1) + 128];
	const struct new_utsname *u = init_utsname();

	if (!strcmp(FSM_KL_VERSION, "unknown"))
		snprintf(why, sizeof(why),
			 "the layouts were read from %s, of an unknown version (build number and date): they may not be this kernel's",
			 FSM_KL_RELEASE);
	else if (strcmp(FSM_KL_RELEASE, u->release) ||
		 strcmp(FSM_KL_VERSION, u->version))
		snprintf(why, sizeof(why),
			 "the layouts were read from %s %s, this is %s %s (rebuild through the top Makefile)",
			 FSM_KL_RELEASE, FSM_KL_VERSION, u->release, u->version);
	else
		return;
	fsm_kl_why = why;
#else
	fsm_kl_why = "layouts not generated (build through the top Makefile)";
#endif /* FSM_KL_RELEASE */
}

const char *fsm_compat_layouts_why(void)
{
	return fsm_kl_why;
}

int fsm_compat_init(bool force_debugfs)
{
	fsm_kl_check_kernel();

#ifdef CONFIG_KALLSYMS
	{
		typeof(kallsyms_show_value) *show;

		show = fsm_resolve("kallsyms_show_value");
		if (show) {
			static_call_update(fsm_sc_kallsyms_show_value, show);
			fsm_have_show_value = true;
		}
	}
#endif /* CONFIG_KALLSYMS */
	/* through the export where the kernel has one (7.x: create only) */
	if (!force_debugfs) {
		typeof(tracefs_create_file) *create;
		typeof(tracefs_remove) *remove = NULL;

#if FSM_HAVE_TRACEFS_CREATE_FILE_EXPORT
		create = tracefs_create_file;
#else
		create = fsm_resolve("tracefs_create_file");
#endif /* FSM_HAVE_TRACEFS_CREATE_FILE_EXPORT */
#if FSM_HAVE_TRACEFS_REMOVE_EXPORT
		remove = tracefs_remove;
#else
		if (create)
			remove = fsm_resolve("tracefs_remove");
#endif /* FSM_HAVE_TRACEFS_REMOVE_EXPORT */
		if (create && remove) {
			static_call_update(fsm_sc_tracefs_create_file, create);
			static_call_update(fsm_sc_tracefs_remove, remove);
			fsm_have_tracefs = true;
			return 0;
		}
	}
	fsm_debugfs_why = force_debugfs ? "force_debugfs=1" :
			  "tracefs_create_file/tracefs_remove not resolvable";

	fsm_debugfs_root = debugfs_create_dir("ftrace_stackmap", NULL);
	if (IS_ERR(fsm_debugfs_root)) {
		pr_warn("tracefs not usable and debugfs failed (%ld): no nodes\n",
			PTR_ERR(fsm_debugfs_root));
		fsm_debugfs_root = NULL;
	}
	return 0;
}

void fsm_compat_announce(void)
{
	pr_info("borrowed kernel functions: %u found by name, %u of them sealed (ENDBR poisoned), %s\n",
		fsm_borrowed_fns, fsm_borrowed_sealed,
		IS_ENABLED(CONFIG_HAVE_STATIC_CALL) ?
		"each called directly, never through a pointer" :
		"called through pointers (no arch static calls), each a valid indirect-call target");
#ifdef CONFIG_KALLSYMS
	if (!fsm_have_show_value)
		pr_warn("kallsyms_show_value not resolvable: kernel addresses only for openers with CAP_SYSLOG that %%pK does not hide from\n");
#endif /* CONFIG_KALLSYMS */
#if !FSM_HAVE_TRACE_ITER_BITS
	pr_warn("trace output: %s: options/sym-offset and sym-addr are not followed (offsets always shown)\n",
		FSM_TRACE_FLAGS_WHY);
#else
	if (fsm_kl_why)
		pr_warn("trace output: %s: options/sym-offset and sym-addr are not followed (offsets always shown)\n",
			fsm_kl_why);
#endif /* !FSM_HAVE_TRACE_ITER_BITS */
	if (fsm_have_tracefs)
		pr_info("nodes in tracefs (top level and every instance)\n");
	else if (fsm_debugfs_root)
		pr_warn("%s: nodes under /sys/kernel/debug/ftrace_stackmap/ (same layout as tracefs)\n",
			fsm_debugfs_why);
}

unsigned int fsm_compat_sym_flags(int flags)
{
#if FSM_HAVE_TRACE_ITER_BITS
	unsigned int f = 0;

	if (fsm_kl_why)
		return FSM_SYM_OFFSET;
	if (flags & FSM_TRACE_ITER_SYM_OFFSET)
		f |= FSM_SYM_OFFSET;
	if (flags & FSM_TRACE_ITER_SYM_ADDR)
		f |= FSM_SYM_ADDR;
	return f;
#else
	return FSM_SYM_OFFSET;
#endif /* FSM_HAVE_TRACE_ITER_BITS */
}

void fsm_compat_exit(void)
{
	debugfs_remove(fsm_debugfs_root);
	fsm_debugfs_root = NULL;
	fsm_have_tracefs = false;
#ifdef CONFIG_KALLSYMS
	fsm_have_show_value = false;
#endif /* CONFIG_KALLSYMS */
}

void *fsm_compat_ksym(const char *name, bool func)
{
	unsigned long addr = fsm_kprobe_lookup(name, true);

	if (!addr || !func)
		return (void *)addr;
	return (void *)fsm_direct_target(name, addr);
}

bool fsm_compat_call_target_ok(const char *what, const void *fn)
{
	return fn && fsm_check_call_target(what, (unsigned long)fn) ==
		     (unsigned long)fn;
}

const char *fsm_compat_fn_is(const char *what, const void *fn,
			     const char *name)
{
	static char sym[KSYM_SYMBOL_LEN];
	static char why[KSYM_SYMBOL_LEN + 128];
	size_t len = strlen(name);

	if (!fn) {
		snprintf(why, sizeof(why), "%s is NULL, not %s", what, name);
		return why;
	}
	/* "name+0x0/0x1c0", with " [module]" after it for module text */
	sprint_symbol(sym, (unsigned long)fn);
	if (strncmp(sym, name, len) || strncmp(sym + len, "+0x0/", 5) ||
	    strchr(sym, ' ')) {
		snprintf(why, sizeof(why), "%s is %s, not %s", what, sym, name);
		return why;
	}
	if (!fsm_compat_call_target_ok(what, fn)) {
		snprintf(why, sizeof(why), "%s (%s) cannot be called from here",
			 what, name);
		return why;
	}
	return NULL;
}

const char *fsm_compat_fns_are(const struct fsm_fn_expect *e, unsigned int n)
{
	const char *why = NULL;
	unsigned int i;

	for (i = 0; i < n && !why; i++)
		why = fsm_compat_fn_is(e[i].what, e[i].fn, e[i].name);
	return why;
}

#ifdef CONFIG_KALLSYMS
/*
 * Stand-in for kallsyms_show_value(), at least as strict: "%pK" prints
 * zeros when kptr_restrict is 2, or 1 and the task lacks CAP_SYSLOG or
 * runs with euid/egid other than uid/gid; CAP_SYSLOG is required anyway.
 * Context: task, current is the opener.
 */
static bool fsm_show_kaddr_fallback(const struct file *file)
{
	char buf[32];
	int len;

	len = snprintf(buf, sizeof(buf), "%pK", file);
	if (len > 0 && strspn(buf, "0") == (size_t)len)
		return false;
#if FSM_HAVE_HAS_CAPABILITY_NOAUDIT
	return has_capability_noaudit(current, CAP_SYSLOG);
#else
	/*
	 * Not exported (7.x): the same question on current's subjective
	 * credentials, which at open are the opener's (the ones "%pK" asks
	 * about too). It marks the task PF_SUPERPRIV when it says yes.
	 */
	return ns_capable_noaudit(&init_user_ns, CAP_SYSLOG);
#endif /* FSM_HAVE_HAS_CAPABILITY_NOAUDIT */
}
#endif /* CONFIG_KALLSYMS */

bool fsm_compat_show_kaddr(const struct file *file)
{
#ifdef CONFIG_KALLSYMS
	if (fsm_have_show_value)
		return static_call(fsm_sc_kallsyms_show_value)(file->f_cred);
	return fsm_show_kaddr_fallback(file);
#else
	return kallsyms_show_value(file->f_cred);	/* false */
#endif /* CONFIG_KALLSYMS */
}

bool fsm_compat_have_tracefs(void)
{
	return fsm_have_tracefs;
}

struct dentry *fsm_compat_create_file(const char *name, umode_t mode,
				      struct dentry *parent, void *data,
				      const struct file_operations *fops)
{
	struct dentry *d;

	if (fsm_have_tracefs) {
		/* tracefs returns NULL on every failure (dead parent, lockdown) */
		d = static_call(fsm_sc_tracefs_create_file)(name, mode, parent,
							    data, fops);
		return d ? d : ERR_PTR(-ENOENT);
	}
	if (!fsm_debugfs_root)
		return ERR_PTR(-ENODEV);
	return debugfs_create_file(name, mode, parent, data, fops);
}

struct dentry *fsm_compat_debugfs_root(void)
{
	return fsm_debugfs_root;
}

struct dentry *fsm_compat_create_dir(const char *name, struct dentry *parent)
{
	if (!fsm_debugfs_root)
		return ERR_PTR(-ENODEV);
	return debugfs_create_dir(name, parent ? parent : fsm_debugfs_root);
}

void fsm_compat_remove(struct dentry *dentry)
{
	if (IS_ERR_OR_NULL(dentry))
		return;
	if (fsm_have_tracefs)
		static_call(fsm_sc_tracefs_remove)(dentry);
	else
		debugfs_remove(dentry);
}

int fsm_compat_list_subdirs(struct dentry *parent,
			    bool (*match)(const char *name, void *arg),
			    void *arg, struct list_head *out)
{
	struct dentry *child;
	struct fsm_name *n;
	int ret = 0;

	/*
	 * tracefs has no rename: names are stable; d_lock of the parent keeps
	 * the list, the child's d_lock its type. Allocation is atomic because
	 * of the spinlocks; the lists are small (instances, systems, events).
	 */
	spin_lock(&parent->d_lock);
	fsm_for_each_child(child, parent) {
		bool want;

		spin_lock_nested(&child->d_lock, DENTRY_D_LOCK_NESTED);
		want = simple_positive(child) && d_is_dir(child) &&
		       (!match || match(child->d_name.name, arg));
		if (want) {
			n = kmalloc(struct_size(n, name, child->d_name.len + 1),
				    GFP_ATOMIC);
			if (n) {
				memcpy(n->name, child->d_name.name,
				       child->d_name.len);
				n->name[child->d_name.len] = '\0';
				list_add_tail(&n->list, out);
			} else {
				ret = -ENOMEM;
			}
		}
		spin_unlock(&child->d_lock);
		if (ret)
			break;
	}
	spin_unlock(&parent->d_lock);
	return ret;
}

void fsm_free_names(struct list_head *names)
{
	struct fsm_name *n, *tmp;

	list_for_each_entry_safe(n, tmp, names, list) {
		list_del(&n->list);
		kfree(n);
	}
}

struct dentry *fsm_compat_lookup(struct dentry *parent, const char *name)
{
	struct dentry *d;

#if FSM_HAVE_LOOKUP_NOPERM_UNLOCKED
	struct qstr q = QSTR_INIT(name, strlen(name));

	d = lookup_noperm_unlocked(&q, parent);
#else
	d = lookup_one_len_unlocked(name, parent, strlen(name));
#endif /* FSM_HAVE_LOOKUP_NOPERM_UNLOCKED */
	if (IS_ERR(d))
		return NULL;
	if (!simple_positive(d)) {
		dput(d);
		return NULL;
	}
	return d;
}

/*
 * @parent's child @name (@len bytes) from the dcache: no lock taken, no
 * sleep, the filesystem never asked. The name is copied, as both lookups
 * write the hash into the qstr they are given.
 * Return: the dentry with a reference, NULL or an ERR_PTR.
 */
static struct dentry *fsm_dcache_lookup(struct dentry *parent,
					const unsigned char *name,
					unsigned int len)
{
	struct qstr q = QSTR_INIT(name, len);

#if FSM_HAVE_TRY_LOOKUP_NOPERM
	return try_lookup_noperm(&q, parent);
#else
	return d_hash_and_lookup(parent, &q);
#endif /* FSM_HAVE_TRY_LOOKUP_NOPERM */
}

struct dentry *fsm_compat_child(struct dentry *parent, const char *name)
{
	struct dentry *d;

	d = fsm_dcache_lookup(parent, (const unsigned char *)name, strlen(name));
	if (IS_ERR_OR_NULL(d))
		return NULL;
	if (!simple_positive(d)) {
		dput(d);
		return NULL;
	}
	return d;
}

void *fsm_compat_instance_key(struct dentry *dir)
{
	struct dentry *trace = fsm_compat_child(dir, "trace");
	void *tr;

	if (!trace)
		return NULL;
	/* init_tracer_tracefs(): "trace" is created with the trace_array */
	tr = d_inode(trace)->i_private;
	dput(trace);
	return tr;
}

unsigned long fsm_compat_symbol_size(unsigned long addr, unsigned long *start)
{
	unsigned long off, size;
	char *buf, *p;

	/* sprint_symbol() is exported, kallsyms_lookup_size_offset() is not */
	buf = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	if (!buf)
		return 0;
	sprint_symbol(buf, addr);	/* "name+0xoff/0xsize [mod]" */
	p = strrchr(buf, '+');
	if (!p || sscanf(p, "+%lx/%lx", &off, &size) != 2 || off > addr) {
		kfree(buf);
		return 0;
	}
	kfree(buf);
	*start = addr - off;
	return size;
}

#ifdef CONFIG_FSNOTIFY
static struct fsnotify_group *fsm_fsn_group;
static struct fsnotify_mark *fsm_fsn_mark;
static fsm_dir_event_fn fsm_fsn_fn;
static struct dentry *fsm_fsn_dir;	/* the watched directory */

/*
 * Is this FS_CREATE the one of vfs_mkdir(), after instance_mkdir() made the
 * instance's files (see fsm_compat_watch_dir())? Context: atomic rules.
 */
static bool fsm_fsn_mkdir_done(struct inode *dir, const struct qstr *name)
{
	struct dentry *d;
	bool done;

	if (dir != d_inode(fsm_fsn_dir))
		return false;
	d = fsm_dcache_lookup(fsm_fsn_dir, name->name, name->len);
	if (IS_ERR_OR_NULL(d))
		return false;
	done = simple_positive(d) && fsm_compat_instance_key(d);
	dput(d);
	return done;
}

/* In the mkdir/rmdir path; see fsm_compat_watch_dir() for the rules. */
static int fsm_fsn_event(struct fsnotify_mark *mark, u32 mask,
			 struct inode *inode, struct inode *dir,
			 const struct qstr *name, u32 cookie)
{
	if (!(mask & FS_ISDIR) || !name || !dir)
		return 0;
	if (mask & FS_DELETE) {
		fsm_fsn_fn(name, FSM_DIR_GONE);
	} else if (!fsm_fsn_mkdir_done(dir, name)) {
		fsm_fsn_fn(name, FSM_DIR_NEW);
	} else {
		/* vfs_mkdir(): the caller holds dir's lock, and only that */
		inode_unlock(dir);
		fsm_fsn_fn(name, FSM_DIR_MADE);
		inode_lock(dir);	/* as tracefs_syscall_mkdir() retakes it */
	}
	return 0;
}

static void fsm_fsn_free_mark(struct fsnotify_mark *mark)
{
	kfree(mark);
}

static const struct fsnotify_ops fsm_fsn_ops = {
	.handle_inode_event = fsm_fsn_event,
	.free_mark = fsm_fsn_free_mark,
};

int fsm_compat_watch_dir(struct dentry *dir, fsm_dir_event_fn fn)
{
	int ret;

	fsm_fsn_fn = fn;
	fsm_fsn_dir = dir;	/* the caller keeps it until unwatch */
	fsm_fsn_group = fsnotify_alloc_group(&fsm_fsn_ops, 0);
	if (IS_ERR(fsm_fsn_group)) {
		ret = PTR_ERR(fsm_fsn_group);
		fsm_fsn_group = NULL;
		return ret;
	}
	fsm_fsn_mark = kzalloc(sizeof(*fsm_fsn_mark), GFP_KERNEL);
	if (!fsm_fsn_mark)
		return -ENOMEM;
	fsnotify_init_mark(fsm_fsn_mark, fsm_fsn_group);
	fsm_fsn_mark->mask = FS_CREATE | FS_DELETE;
	ret = fsnotify_add_inode_mark(fsm_fsn_mark, d_inode(dir), 0);
	if (ret) {
		fsnotify_put_mark(fsm_fsn_mark);	/* frees it */
		fsm_fsn_mark = NULL;
	}
	return ret;
}

void fsm_compat_unwatch_dir(void)
{
	if (fsm_fsn_mark) {
		fsnotify_destroy_mark(fsm_fsn_mark, fsm_fsn_group);
		fsnotify_put_mark(fsm_fsn_mark);
		fsm_fsn_mark = NULL;
	}
	/* the handler and free_mark are module text: wait for them */
	fsnotify_wait_marks_destroyed();
	if (fsm_fsn_group) {
		fsnotify_put_group(fsm_fsn_group);
		fsm_fsn_group = NULL;
	}
}
#else
int fsm_compat_watch_dir(struct dentry *dir, fsm_dir_event_fn fn)
{
	return -EOPNOTSUPP;
}

void fsm_compat_unwatch_dir(void)
{
}
#endif /* CONFIG_FSNOTIFY */

task_work_func_t fsm_compat_kfree_task_work(void)
{
	return (task_work_func_t)(void *)kfree;
}
