/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the one place that knows about kernel differences and about
 * kernel symbols that are not exported to modules.
 *
 * Nothing else in the module reads a kernel version, resolves a symbol by
 * name or touches a field whose name or meaning changed across kernels.
 *
 * Non-exported symbols
 * --------------------
 * tracefs_create_file() and tracefs_remove() are not exported (6.1, 6.12;
 * 7.x exports tracefs_create_file() only: called through the export where
 * the probes tracefs_create_file_export / tracefs_remove_export say so).
 * Otherwise they
 * are resolved once, at load, through a kprobe (register_kprobe() on the
 * name, read .addr, unregister: the technique lttng-modules uses), cached,
 * and every failure is reported once and degrades: without them the nodes
 * are offered with the same layout under debugfs
 * (/sys/kernel/debug/ftrace_stackmap/), and dmesg says so once.
 *
 * Indirect branch tracking (x86 IBT, arm64 BTI). 6.12 and 7.x seal at boot,
 * whatever the CPU, the ENDBR of every function whose address nothing in
 * the kernel takes: every function the module borrows by name is one
 * (tracefs_create_file on 6.12, tracefs_remove, kallsyms_show_value and
 * those of compat/ksyms.c; measured on Debian's 6.12.118 and 7.3.4 amd64).
 * Sealed means no pointer to it exists in the kernel, so none can be
 * taken from a kernel structure, and copying each function's body would
 * duplicate private logic over private layouts: the module calls them
 * directly instead, through static calls (on x86 a call instruction the
 * kernel patches to the function; an ENDBR is needed only by indirect
 * calls). Function pointers the module reads from kernel structures (the
 * trigger callbacks) are called indirectly, so they must be valid
 * indirect-call targets (ENDBR64 / BTI c / PACIASP); a sealed one is
 * refused whether or not the CPU enforces IBT, so that guests without IBT
 * prove what a CPU with it would do. The static calls are declared with
 * the kernel's prototypes where it declares them, so a signature change
 * breaks the build instead of a cast silently lying ("canary" checks, see
 * compat.c).
 *
 * kallsyms_show_value() (who may see kernel addresses, the policy of
 * /proc/kallsyms: kptr_restrict, perf_event_paranoid, CAP_SYSLOG of a
 * cred) is not exported either (6.1), nor are its pieces (kptr_restrict,
 * sysctl_perf_event_paranoid, security_capable()). It is resolved the same
 * way; when that fails, a stricter rule built from exported pieces stands
 * in (fsm_compat_show_kaddr()) and dmesg says so once.
 *
 * Optional kernel features
 * ------------------------
 * - CONFIG_FSNOTIFY: without it there is no way to hear of instance
 *   mkdir/rmdir; fsm_compat_watch_dir() says so and the caller polls.
 *
 * Compile probes
 * --------------
 * Differences between kernels are decided by compile probes, never by a
 * version number: scripts/kernel-probes compiles each file of
 * compat/probes/ against the target kernel before the module's build and
 * writes generated/fsm_probes.h, FSM_HAVE_<PROBE> 1 or 0 (the build prints
 * which way each one went; Documentation/build.rst lists them). A new
 * kernel line adds probes and the branches that test them, here and in
 * the other files of compat/ only.
 *
 * Kernel data structures read here
 * --------------------------------
 * - the event files of an instance: evfiles.h (6.1: through the
 *   persistent events/SYS/EV dentries, trace_event_file::dir; eventfs
 *   kernels, 6.6+, FSM_HAVE_EVENTFS: through the kernel's own lists under
 *   event_mutex);
 * - struct dentry::d_subdirs / d_child: children of a tracefs directory
 *   (the hlist d_children / d_sib in 6.8+, FSM_HAVE_DENTRY_D_CHILDREN);
 * - i_private of an instance's "trace" file (its trace_array, used as an
 *   opaque key) and, without eventfs, of events/SYS/EV/enable (the
 *   trace_event_file): read without trace_get_event_file(), whose
 *   trace_array reference makes a concurrent rmdir of the instance fail
 *   with -EBUSY;
 * - struct inode::i_ctime: the change time that identifies a file's
 *   version (fileid.c, fsm_compat_inode_ctime(); behind
 *   inode_get_ctime_sec()/_nsec() in 6.7+, FSM_HAVE_INODE_GET_CTIME_SEC);
 * - the kernel symbols borrowed by name (ksyms.h) and the kernel-internal
 *   types of the trigger code and of struct trace_array (layouts.h).
 * Each is guarded by a build-time check on the field's type, so a port to
 * another kernel fails to compile at the exact place to adapt.
 */
#ifndef FSM_COMPAT_H
#define FSM_COMPAT_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/task_work.h>
#include <linux/types.h>

#include "probes.h"

struct dentry;
struct trace_event_file;

/*
 * Kernel control-flow integrity: every indirect call checks the callee's
 * type. CONFIG_CFI_CLANG up to 6.x, CONFIG_CFI from 7.x on (the option
 * was renamed when GCC got kCFI too). Code that calls or hands the
 * kernel a function of another prototype must not be built for it.
 */
#if defined(CONFIG_CFI_CLANG) || defined(CONFIG_CFI)
#define FSM_HAVE_KCFI 1
#else
#define FSM_HAVE_KCFI 0
#endif

/**
 * fsm_compat_init - resolve the non-exported symbols.
 * @force_debugfs: do not even try tracefs (module parameter, for tests).
 *
 * Context: task (module init), may sleep.
 * Return: 0 (always: a failed resolution only selects the debugfs fallback).
 */
int fsm_compat_init(bool force_debugfs);

/**
 * fsm_compat_announce - say once in dmesg where the nodes are.
 * Context: task (end of module init).
 */
void fsm_compat_announce(void);

/**
 * fsm_compat_exit - undo fsm_compat_init().
 * Context: task (module exit); every node must already be removed.
 */
void fsm_compat_exit(void);

/**
 * fsm_compat_have_tracefs - can nodes be created inside tracefs?
 * Context: any.
 * Return: true when tracefs_create_file() and tracefs_remove() resolved.
 */
bool fsm_compat_have_tracefs(void);

/**
 * fsm_compat_create_file - create a file node (tracefs or debugfs).
 * @name:   file name
 * @mode:   permission bits
 * @parent: directory (a tracefs dentry in tracefs mode, a debugfs one else)
 * @data:   stored in the inode's i_private
 * @fops:   file operations (.owner must be THIS_MODULE)
 *
 * Context: task, may sleep; takes the parent's inode lock.
 * Return: the new dentry (the caller dget()s it if it keeps it) or an
 * ERR_PTR (-ENOENT when the parent directory was removed meanwhile).
 */
struct dentry *fsm_compat_create_file(const char *name, umode_t mode,
				      struct dentry *parent, void *data,
				      const struct file_operations *fops);

/**
 * fsm_compat_debugfs_root - the debugfs directory of the nodes.
 * Context: any.
 * Return: /sys/kernel/debug/ftrace_stackmap in debugfs mode, NULL in tracefs
 * mode.
 */
struct dentry *fsm_compat_debugfs_root(void);

/**
 * fsm_compat_create_dir - create a directory (debugfs mode only).
 * @name:   directory name
 * @parent: parent directory, NULL for the debugfs root
 *
 * Context: task, may sleep.
 * Return: the dentry or an ERR_PTR.
 */
struct dentry *fsm_compat_create_dir(const char *name, struct dentry *parent);

/**
 * fsm_compat_remove - remove a node created by this module (recursively).
 * @dentry: node; an ERR_PTR or NULL is ignored.
 *
 * Removing a node that the kernel already removed (rmdir of its instance)
 * is harmless. The caller still owns (and later dput()s) its own reference.
 * Context: task, may sleep.
 */
void fsm_compat_remove(struct dentry *dentry);

/* A name collected by fsm_compat_list_subdirs(). */
struct fsm_name {
	struct list_head list;
	char name[];
};

/**
 * fsm_compat_list_subdirs - names of the subdirectories of a directory.
 * @parent: directory (tracefs; its children are pinned dentries)
 * @match:  filter called under a spinlock (must not sleep), NULL = all
 * @arg:    passed to @match
 * @out:    list of struct fsm_name appended to (free with fsm_free_names())
 *
 * Context: task. Return: 0 or -ENOMEM (then @out holds what was collected).
 */
int fsm_compat_list_subdirs(struct dentry *parent,
			    bool (*match)(const char *name, void *arg),
			    void *arg, struct list_head *out);

/* Free a list filled by fsm_compat_list_subdirs(). */
void fsm_free_names(struct list_head *names);

/**
 * fsm_compat_lookup - positive child of a directory.
 * @parent: directory
 * @name:   child name
 *
 * Context: task, may sleep.
 * Return: the child with a reference (dput() it), or NULL.
 */
struct dentry *fsm_compat_lookup(struct dentry *parent, const char *name);

/**
 * fsm_compat_show_kaddr - may the opener of @file see kernel addresses?
 * @file: a file being opened (decided once, at open, like /proc/kallsyms)
 *
 * kallsyms_show_value(file->f_cred): kptr_restrict 0 with
 * perf_event_paranoid <= 1 lets everyone see them; kptr_restrict 0 or 1
 * needs CAP_SYSLOG in the initial user namespace (checked on the opener's
 * credentials, without audit); kptr_restrict 2 hides them from everyone.
 * Without the resolved symbol: CAP_SYSLOG of the opening task
 * (has_capability_noaudit(), or where it is not exported (7.x)
 * ns_capable_noaudit() on current's credentials) and what "%pK" shows it (zeros when
 * kptr_restrict is 2, or 1 and the task's euid/egid differ from its
 * uid/gid): never more permissive than kallsyms.
 * Context: task (the open of @file, current is the opener).
 * Return: true to show addresses, false to show zeros.
 */
bool fsm_compat_show_kaddr(const struct file *file);

/**
 * fsm_compat_child - positive child of a directory, from the dcache only.
 * @parent: tracefs directory (its children are pinned in the dcache)
 * @name:   child name
 *
 * Takes no inode lock (usable with the parent's inode lock held):
 * d_hash_and_lookup(), or try_lookup_noperm() where the former is not
 * exported (7.x, whose try_lookup_noperm() needs no lock).
 * Context: task or atomic. Return: the child with a reference, or NULL.
 */
struct dentry *fsm_compat_child(struct dentry *parent, const char *name);

/**
 * fsm_compat_instance_key - the trace_array of an instance directory.
 * @dir: the instance's tracefs directory (instances/NAME or the root)
 *
 * Read from the i_private of the instance's "trace" file (6.1: set to the
 * trace_array by init_tracer_tracefs()), never dereferenced: an opaque key.
 * Takes no lock and no reference on the instance (which would make a
 * concurrent rmdir fail with -EBUSY).
 * Context: task or atomic.
 * Return: the key, or NULL while the instance is not populated yet.
 */
void *fsm_compat_instance_key(struct dentry *dir);

/* What fsm_compat_watch_dir() reports about a subdirectory (an instance). */
enum fsm_dir_event {
	/*
	 * Created, still empty: tracefs_create_dir() inside instance_mkdir()
	 * or trace_array_get_by_name(), under event_mutex, trace_types_lock
	 * and the watched directory's inode lock. Atomic rules: no sleeping
	 * lock, no allocation with reclaim, no call into tracing.
	 */
	FSM_DIR_NEW,
	/*
	 * A mkdir(2) of an instance completed (its files exist) and has not
	 * returned yet: the mkdir caller's context, with no lock of tracefs
	 * or tracing held (see fsm_compat_watch_dir()). May sleep and take
	 * the module's mutexes and tracefs inode locks.
	 */
	FSM_DIR_MADE,
	/* Removed: under the tracing locks and inode locks, atomic rules. */
	FSM_DIR_GONE,
};

/* Called for each subdirectory event in a watched directory. */
typedef void (*fsm_dir_event_fn)(const struct qstr *name, enum fsm_dir_event ev);

/**
 * fsm_compat_ksym - address of a kernel symbol that is not exported.
 * @name: symbol name (data symbols need CONFIG_KALLSYMS_ALL)
 * @func: a function, to be called through a static call (fsm_kcall() in
 *        ksyms.h): counted for the load message, and where static calls
 *        are indirect (arm64) it must be a valid indirect-call target,
 *        else it is refused
 *
 * Resolved through a kprobe on the name, data symbols included
 * (compat.c, fsm_kprobe_lookup()): kallsyms_lookup_name() is neither
 * exported (5.7+) nor callable through a pointer on 6.12 and 7.x (sealed),
 * and the module does not need it. The caller checks what it got
 * (names can be ambiguous for static symbols) and says why in dmesg when
 * it gives up. Used by compat/ksyms.c only: the rest of the module reads
 * the cached symbols of struct fsm_ksyms.
 * Context: task. Return: the address, or NULL.
 */
void *fsm_compat_ksym(const char *name, bool func);

/**
 * fsm_compat_call_target_ok - may @fn be called through a pointer?
 * @what: name for the message
 * @fn:   a kernel function pointer read from a kernel structure
 *
 * Always true without IBT/BTI; with them, @fn must start with the marker
 * instruction (one dmesg line otherwise).
 * Context: task. Return: true if @fn is non-NULL and a valid target.
 */
bool fsm_compat_call_target_ok(const char *what, const void *fn);

/**
 * fsm_compat_fn_is - is a kernel function pointer the function it must be?
 * @what: the pointer, for the message ("stacktrace's reg")
 * @fn:   a function pointer read out of a kernel structure through the
 *        layouts of compat/layouts.h
 * @name: the kernel function it must be ("register_trigger")
 *
 * The layouts are checked at build time and the kernel's version at load
 * (fsm_compat_layouts_why()); this checks the value itself before the
 * module calls through it (or hands it to the kernel to call): what
 * sprint_symbol() says of @fn must be "@name+0x0/..." in the kernel
 * proper (no module), and @fn a valid indirect-call target
 * (fsm_compat_call_target_ok()).
 * Context: task, module init (the message is in a static buffer).
 * Return: NULL when it is, else why not ("stacktrace's reg is
 * foo+0x10/0x80, not register_trigger"), valid until the next call.
 */
const char *fsm_compat_fn_is(const char *what, const void *fn,
			     const char *name);

/* One fsm_compat_fn_is() check: @fn read as @what must be @name. */
struct fsm_fn_expect {
	const char *what;
	const void *fn;
	const char *name;
};

/*
 * fsm_compat_fns_are - fsm_compat_fn_is() on each of @n checks, in order.
 * Context: as fsm_compat_fn_is(). Return: NULL, or the first failure's why.
 */
const char *fsm_compat_fns_are(const struct fsm_fn_expect *e, unsigned int n);

/**
 * fsm_compat_layouts_why - were the layouts read from the running kernel?
 *
 * scripts/kernel-layouts records the release and the full version
 * (UTS_VERSION: build number, date, distribution version) of the kernel it
 * read the layouts from (FSM_KL_RELEASE, FSM_KL_VERSION). Two builds of one
 * release can differ in layout: both must equal the running kernel's
 * (init_utsname()). Decided once by fsm_compat_init().
 * Context: any, after fsm_compat_init().
 * Return: NULL when they were, else why not (for dmesg: the features that
 * rely on the layouts stay off).
 */
const char *fsm_compat_layouts_why(void);

/**
 * fsm_compat_watch_dir - be told when subdirectories come and go.
 * @dir: directory to watch (one at a time): tracefs "instances"; the
 *       caller keeps its reference until fsm_compat_unwatch_dir()
 * @fn:  callback, see enum fsm_dir_event for the context of each event
 *
 * A mkdir(2) of an instance reports FS_CREATE twice (6.1): from
 * tracefs_create_dir() before the instance has any file (FSM_DIR_NEW), and
 * from vfs_mkdir() once tracefs' mkdir returned. The second one arrives
 * with the watched directory's inode lock held by the mkdir caller (the
 * VFS took it; tracefs_syscall_mkdir() dropped and retook it around
 * instance_mkdir()), and no other lock of tracefs or tracing. The handler
 * drops that lock around FSM_DIR_MADE and takes it back before it
 * returns, exactly as tracefs_syscall_mkdir() does around instance_mkdir():
 * nothing of the VFS depends on it between the mkdir and its unlock.
 * Without that, anything @fn does in tracefs (creating files, looking up
 * an event directory) would take a tracefs inode lock of the same lockdep
 * class while holding the watched one (all tracefs inodes share one
 * i_rwsem class), which lockdep reports. The two FS_CREATE are told apart
 * by the instance's "trace" file (fsm_compat_instance_key()): created by
 * instance_mkdir() after the directory, so absent in the first.
 *
 * Context: task. Return: 0, or -EOPNOTSUPP without CONFIG_FSNOTIFY (poll
 * instead), or another -errno.
 */
int fsm_compat_watch_dir(struct dentry *dir, fsm_dir_event_fn fn);

/**
 * fsm_compat_unwatch_dir - stop watching; waits until @fn cannot run any more.
 * Context: task.
 */
void fsm_compat_unwatch_dir(void);

/**
 * fsm_compat_symbol_size - size of the symbol containing @addr.
 * @addr:  a kernel text address (or data, with CONFIG_KALLSYMS_ALL)
 * @start: set to the symbol's start
 *
 * Context: task. Return: the size in bytes, 0 if unknown.
 */
unsigned long fsm_compat_symbol_size(unsigned long addr, unsigned long *start);

/**
 * fsm_compat_kfree_task_work - kfree() as a task work function.
 *
 * For a work object whose callback_head is its first member: running it
 * frees the object, with no module code (ustack_work.c's unload). Calls kfree()
 * through a pointer of another prototype (a const void * argument in the
 * same register): fine without kernel control-flow integrity, which would
 * trap on the prototype mismatch; such a kernel fails the build here.
 */
#if FSM_HAVE_KCFI
#error "ftrace_stackmap: kernel CFI: task works cannot be disarmed with kfree()"
#endif /* FSM_HAVE_KCFI */
task_work_func_t fsm_compat_kfree_task_work(void);

/*
 * Symbol options of the trace output. print_trace_fmt() hands an event's
 * output callback tr->trace_flags & TRACE_ITER_SYM_MASK as "flags"; the
 * TRACE_ITER_* bits are private to kernel/trace/trace.h. Their values are
 * read at build time from the target kernel (scripts/kernel-layouts,
 * compat/layouts.h: its BTF or its source tree); when that was
 * not possible, or they were read from another kernel than the running
 * one (fsm_compat_layouts_why()), the build or fsm_compat_announce() says
 * why, and symbols are printed with their offsets whatever the options are.
 */
#define FSM_SYM_OFFSET	0x1	/* options/sym-offset: func+0x1a/0x40 */
#define FSM_SYM_ADDR	0x2	/* options/sym-addr: " <address>" after it */

/**
 * fsm_compat_sym_flags - decode the output callback's @flags.
 * Context: any. Return: FSM_SYM_* bits.
 */
unsigned int fsm_compat_sym_flags(int flags);

/**
 * fsm_compat_inode_ctime - an inode's change time, read without its lock.
 * @inode: the inode (a reference held by the caller)
 * @sec:   set to the seconds
 * @nsec:  set to the nanoseconds
 *
 * A racing change may give seconds and nanoseconds of two times (the
 * caller copes). Through inode_get_ctime_sec()/_nsec() where the kernel
 * has them (FSM_HAVE_INODE_GET_CTIME_SEC: i_ctime is private there), else
 * struct inode::i_ctime (its type is checked in compat.c).
 * Context: any.
 */
static inline void fsm_compat_inode_ctime(const struct inode *inode,
					  s64 *sec, u32 *nsec)
{
#if FSM_HAVE_INODE_GET_CTIME_SEC
	*sec = inode_get_ctime_sec(inode);
	*nsec = inode_get_ctime_nsec(inode);
#else
	*sec = READ_ONCE(inode->i_ctime.tv_sec);
	*nsec = READ_ONCE(inode->i_ctime.tv_nsec);
#endif /* FSM_HAVE_INODE_GET_CTIME_SEC */
}

/**
 * fsm_compat_file_path - the path of a mapped file as its users see it.
 * @file: a file (a vma's vm_file, a reference held)
 *
 * A file that overlayfs maps is, on 6.8+, a backing file: its f_path is
 * the real file's (a path inside the upper or lower layer), and the path
 * /proc/PID/maps shows is file_user_path() (FSM_HAVE_FILE_USER_PATH). On
 * 6.1 overlayfs opened the real file with the overlay path as its f_path.
 * Context: any. Return: the path (valid while @file is).
 */
static inline const struct path *fsm_compat_file_path(const struct file *file)
{
#if FSM_HAVE_FILE_USER_PATH
	return file_user_path(file);
#else
	return &file->f_path;
#endif /* FSM_HAVE_FILE_USER_PATH */
}

/*
 * FSM_NO_LLSEEK - the .llseek of a node that cannot seek (the options/
 * files: one value, read and written whole): no_llseek where the kernel
 * has it (FSM_HAVE_NO_LLSEEK), else NULL, which means the same there
 * (6.12 removed no_llseek: without FMODE_LSEEK, lseek() fails with
 * -ESPIPE as it did).
 */
#if FSM_HAVE_NO_LLSEEK
#define FSM_NO_LLSEEK	no_llseek
#else
#define FSM_NO_LLSEEK	NULL
#endif /* FSM_HAVE_NO_LLSEEK */

#endif /* FSM_COMPAT_H */
