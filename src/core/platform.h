/* SPDX-License-Identifier: GPL-2.0 */
/*
 * platform.h - the freestanding C++ subset every src/core file is written in.
 *
 * Overview
 * --------
 * The core is compiled twice: into the kernel module (kbuild, one unity
 * translation unit, FSM_KERNEL defined) and into user-space tests and
 * benchmarks (FSM_KERNEL undefined). Both builds see exactly the same code;
 * this header is the only place that knows which world it is in, and the
 * difference is confined to platform_kernel.h / platform_user.h (a handful
 * of lines: what an assertion does).
 *
 * The allowed subset (checked by selftests/core/check_kernel_object.sh):
 *  - gnu++20 language features: classes, templates, constexpr, static_assert,
 *    [[nodiscard]], namespaces, placement new with our own tag.
 *  - No exceptions, no RTTI, no standard library header (not even <new> or
 *    <atomic>; -nostdinc++ makes an accidental include fail), no kernel header.
 *  - No objects with dynamic initialisation at namespace scope (the module
 *    loader ignores .init_array), no function-local statics (no __cxa_guard),
 *    no destructors that would need atexit.
 *  - No floating point, no 128-bit division, no atomics wider than 8 bytes
 *    (all of those call libgcc, which a module cannot link). A 64x64->128
 *    multiplication is fine: it is one mul instruction on x86-64 and
 *    mul/umulh on arm64.
 *  - Atomics only through fsm::Atomic<T> below, with an explicit memory
 *    order at every call site, so that each one can carry its comment. A
 *    word that must live in a C structure shared with the glue (a C struct
 *    cannot hold a C++ class) or in C-owned memory (a per-CPU counter) is
 *    accessed through fsm::AtomicRef<T> instead, the same operations on a
 *    word it does not own (C++20's std::atomic_ref). Every access to such a
 *    word in src/core goes through an AtomicRef; the only exception is
 *    whole-structure initialisation while no other context can see it,
 *    said so where it happens. No __atomic builtin outside this header
 *    (selftests/core/check_atomics_rule.sh).
 *
 * Memory orders follow the C++ model (the GCC __atomic builtins implement
 * it): a release store/RMW and an acquire load that reads its value (or a
 * later value of the same RMW chain) order everything before the release
 * before everything after the acquire. seq_cst accesses additionally form a
 * single total order, which is what a store-then-load (Dekker) handshake
 * needs; on x86 a seq_cst RMW is one locked instruction, on arm64 the
 * ldaddal/ldar pair.
 */
#ifndef FSM_PLATFORM_H
#define FSM_PLATFORM_H

#ifndef __cplusplus
#error "src/core is C++: C code includes fsm_core.h only"
#endif

#ifdef FSM_KERNEL
#include "platform_kernel.h"
#else
#include "platform_user.h"
#endif

#include "fsm_core.h"

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

#define FSM_ALWAYS_INLINE	inline __attribute__((__always_inline__))
#define FSM_NOINLINE		__attribute__((__noinline__))

#ifndef FSM_ASSERT
#error "platform_{kernel,user}.h must define FSM_ASSERT"
#endif

namespace fsm {

using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;
using s32 = int;
using s64 = long long;
using usize = decltype(sizeof(0));
using uptr = __UINTPTR_TYPE__;

static_assert(sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(u64) == 8,
	      "LP64 or ILP32 data model expected");

/*
 * Memory order tags: x.load(acquire), x.store(v, release), ... The order is a
 * template argument, so it reaches the builtin as a literal even without
 * optimisation (a run-time order silently degrades to seq_cst, which would
 * hide an ordering bug from ThreadSanitizer).
 */
template <int M> struct MemOrder {
	static constexpr int value = M;
};
inline constexpr MemOrder<__ATOMIC_RELAXED> relaxed{};
inline constexpr MemOrder<__ATOMIC_ACQUIRE> acquire{};
inline constexpr MemOrder<__ATOMIC_RELEASE> release{};
inline constexpr MemOrder<__ATOMIC_ACQ_REL> acq_rel{};
inline constexpr MemOrder<__ATOMIC_SEQ_CST> seq_cst{};

/*
 * AtomicOps - the operations of Atomic<T> and AtomicRef<T> on the word
 * Self::word() returns. Nothing else in src/core calls an __atomic builtin.
 */
template <typename T, typename Self>
class AtomicOps {
	static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 ||
		      sizeof(T) == 8, "no 16-byte atomics: they call libgcc");

	FSM_ALWAYS_INLINE T *w() const { return static_cast<const Self *>(this)->word(); }

public:
	template <int M>
	FSM_ALWAYS_INLINE T load(MemOrder<M>) const
	{
		static_assert(M != __ATOMIC_RELEASE && M != __ATOMIC_ACQ_REL,
			      "not a load order");
		return __atomic_load_n(w(), M);
	}

	template <int M>
	FSM_ALWAYS_INLINE void store(T v, MemOrder<M>)
	{
		static_assert(M != __ATOMIC_ACQUIRE && M != __ATOMIC_ACQ_REL,
			      "not a store order");
		__atomic_store_n(w(), v, M);
	}

	/* Strong compare-and-exchange; on failure @expected gets the value seen. */
	template <int MS, int MF>
	[[nodiscard]] FSM_ALWAYS_INLINE bool cmpxchg(T &expected, T desired,
						      MemOrder<MS>, MemOrder<MF>)
	{
		return __atomic_compare_exchange_n(w(), &expected, desired,
						   false, MS, MF);
	}

	template <int M>
	FSM_ALWAYS_INLINE T fetch_add(T d, MemOrder<M>)
	{
		return __atomic_fetch_add(w(), d, M);
	}

	template <int M>
	FSM_ALWAYS_INLINE T fetch_sub(T d, MemOrder<M>)
	{
		return __atomic_fetch_sub(w(), d, M);
	}

	template <int M>
	FSM_ALWAYS_INLINE T fetch_or(T d, MemOrder<M>)
	{
		return __atomic_fetch_or(w(), d, M);
	}

	/*
	 * cpu_add / cpu_cmpxchg - RMWs on a word that only contexts of one
	 * CPU write (a per-CPU counter, a per-CPU cache word): atomic against
	 * every context that may nest on this CPU (interrupt, NMI), and
	 * ordered as @M says, but not necessarily against other CPUs.
	 *
	 * Where the platform guarantees that every writer of such a word runs
	 * on the CPU it belongs to, without migrating in between
	 * (FSM_PLAT_CPU_LOCAL: the kernel, whose callers all run with
	 * preemption off or in interrupt or NMI context), x86-64 uses one
	 * instruction without the lock prefix, as the kernel's this_cpu_add()
	 * and this_cpu_cmpxchg() do: an interrupt or NMI is taken between two
	 * instructions, never inside one, so a nested context sees the word
	 * before or after, and x86 stores are ordered after every earlier
	 * load and store of the CPU (TSO): the add is a release as it stands,
	 * and the "memory" clobber keeps the compiler from moving accesses
	 * across it. That saves the lock prefix, a full barrier on x86:
	 * with exits and the hit-cache word CPU-local, a hit of one hot
	 * stack took 17 ns instead of 23 (user-space bench, side by side in
	 * one process; the Zipf case gained about 10%, bound by cache misses).
	 * Other CPUs reading the word see the old or the new value (one
	 * aligned store). Elsewhere (arm64, where the kernel's
	 * this_cpu ops are the same LL/SC or LSE atomics, only without
	 * barriers; user space, whose threads migrate) they are the ordinary
	 * atomic RMWs with order @M, relaxed or release.
	 */
	template <int M>
	FSM_ALWAYS_INLINE void cpu_add(T d, MemOrder<M>)
	{
		static_assert(M == __ATOMIC_RELAXED || M == __ATOMIC_RELEASE,
			      "cpu_add: relaxed or release");
#if defined(FSM_PLAT_CPU_LOCAL) && defined(__x86_64__)
		asm volatile("add %1, %0" : "+m"(*w()) : "r"(d) : "memory");
#else
		(void)__atomic_fetch_add(w(), d, M);
#endif
	}

	/* One attempt; on failure @expected gets the value seen. Relaxed. */
	[[nodiscard]] FSM_ALWAYS_INLINE bool cpu_cmpxchg(T &expected, T desired)
	{
#if defined(FSM_PLAT_CPU_LOCAL) && defined(__x86_64__)
		bool ok;

		asm volatile("cmpxchg %3, %1"
			     : "=@ccz"(ok), "+m"(*w()), "+a"(expected)
			     : "r"(desired)
			     : "memory");
		return ok;
#else
		return __atomic_compare_exchange_n(w(), &expected, desired, false,
						   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
	}

	/*
	 * Plain access for phases where no other context can touch the word
	 * (initialisation, reset after every inserter has left). Still an
	 * atomic access underneath so that sanitizers and the compiler see
	 * one consistent kind of access.
	 */
	FSM_ALWAYS_INLINE void init(T v) { __atomic_store_n(w(), v, __ATOMIC_RELAXED); }
};

/*
 * Atomic<T> - a naturally aligned word accessed only with __atomic builtins.
 * Trivially default-constructible: zeroed memory from fsm_plat_alloc() is a
 * valid array of them. Not copyable (a copy would be a non-atomic read).
 */
template <typename T>
class Atomic : public AtomicOps<T, Atomic<T>> {
	friend class AtomicOps<T, Atomic<T>>;

public:
	Atomic() = default;
	Atomic(const Atomic &) = delete;
	Atomic &operator=(const Atomic &) = delete;

private:
	FSM_ALWAYS_INLINE T *word() const { return const_cast<T *>(&v_); }

	T v_;
};

/*
 * AtomicRef<T> - the operations of Atomic<T> on a word owned by C code (a
 * field of a C struct, a C per-CPU counter): AtomicRef(t.state).load(acquire).
 * T may be const (loads only). The word must be naturally aligned (checked
 * where FSM_ASSERT checks) and, in src/core, accessed only through
 * AtomicRefs (platform.h's rule above).
 */
template <typename T>
class AtomicRef : public AtomicOps<T, AtomicRef<T>> {
	friend class AtomicOps<T, AtomicRef<T>>;

public:
	explicit FSM_ALWAYS_INLINE AtomicRef(T &word) : p_(&word)
	{
		FSM_ASSERT(((uptr)p_ & (sizeof(T) - 1)) == 0);
	}

private:
	FSM_ALWAYS_INLINE T *word() const { return p_; }

	T *p_;
};

static_assert(sizeof(Atomic<u64>) == 8 && alignof(Atomic<u64>) == 8,
	      "Atomic<u64> must be a naturally aligned word");

/* Spin-wait hint: PAUSE on x86, YIELD on arm64. Usable in any context. */
FSM_ALWAYS_INLINE void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
	asm volatile("yield" ::: "memory");
#else
	asm volatile("" ::: "memory");
#endif
}

/*
 * plat_cpu - the current CPU number (fsm_plat_cpu() of fsm_core.h), inline
 * where platform_{kernel,user}.h provide FSM_PLAT_CPU_INLINE.
 * Context: any; the caller tolerates migration right after the read.
 */
FSM_ALWAYS_INLINE u32 plat_cpu()
{
#ifdef FSM_PLAT_CPU_INLINE
	return FSM_PLAT_CPU_INLINE();
#else
	return fsm_plat_cpu();
#endif
}

/* Compiler-only barrier. */
FSM_ALWAYS_INLINE void barrier() { asm volatile("" ::: "memory"); }

/*
 * memcpy/memset: the builtins inline small constant sizes and otherwise call
 * memcpy/memset, which the kernel and libc both provide.
 */
FSM_ALWAYS_INLINE void copy_bytes(void *d, const void *s, usize n)
{
	__builtin_memcpy(d, s, n);
}

FSM_ALWAYS_INLINE void zero_bytes(void *d, usize n) { __builtin_memset(d, 0, n); }

template <typename T> constexpr T min(T a, T b) { return a < b ? a : b; }
template <typename T> constexpr T max(T a, T b) { return a > b ? a : b; }

/* Round up to a power-of-two alignment. */
constexpr u64 align_up(u64 v, u64 a) { return (v + a - 1) & ~(a - 1); }

inline constexpr usize kCacheLine = 64;

/* Tag for our placement new (avoids needing <new>, never clashes with it). */
struct PlaceTag {};
inline constexpr PlaceTag place{};

} /* namespace fsm */

FSM_ALWAYS_INLINE void *operator new(fsm::usize, void *p, fsm::PlaceTag) noexcept
{
	return p;
}

#endif /* FSM_PLATFORM_H */
