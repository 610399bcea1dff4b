/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seed_map.h - a user-space re-implementation of the algorithm of the seed
 * RFC ("trace: add lock-free stackmap for stack trace deduplication",
 * ftrace_stackmap_get_id()), written from its description, for side-by-side
 * benchmarking only. Faithful in what costs time and memory:
 *  - 32-bit jhash2 (lookup3 "hashword") over the ips as u32 words, with one
 *    fixed seed for every map; bucket = top (bits+1) bits of the hash;
 *  - table of 2^(bits+1) {u32 key, elt pointer} entries, linear probing,
 *    key compared first, then nr and memcmp of the ips;
 *  - hit: atomic_inc(&elt->ref_count) and atomic64_inc(&map->hits), both
 *    shared cache lines; a relaxed read of map->resetting first;
 *  - one preallocated element per stack, each allocated on its own
 *    (kzalloc of 4 + 4 + 64 * 8 = 520 bytes, a kmalloc-1k object), ips
 *    fixed at 64 entries;
 *  - miss: cmpxchg the key, take an element, fill it, smp_wmb, publish.
 * memcmp is the kernel's generic one (lib/string.c: a word loop on x86-64,
 * which has no arch memcmp), out of line as in the kernel.
 */
#ifndef FSM_BENCH_SEED_MAP_H
#define FSM_BENCH_SEED_MAP_H

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace seed {

using u32 = uint32_t;
using u64 = uint64_t;

constexpr unsigned kMaxDepth = 64;
constexpr u32 kJhashInitval = 0xdeadbeef;

inline u32 rol32(u32 w, unsigned s) { return (w << s) | (w >> (32 - s)); }

/* Bob Jenkins' lookup3 hashword(), as include/linux/jhash.h jhash2(). */
inline u32 jhash2(const u32 *k, u32 length, u32 initval)
{
	u32 a, b, c;

	a = b = c = kJhashInitval + (length << 2) + initval;
	while (length > 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		/* mix */
		a -= c; a ^= rol32(c, 4);  c += b;
		b -= a; b ^= rol32(a, 6);  a += c;
		c -= b; c ^= rol32(b, 8);  b += a;
		a -= c; a ^= rol32(c, 16); c += b;
		b -= a; b ^= rol32(a, 19); a += c;
		c -= b; c ^= rol32(b, 4);  b += a;
		length -= 3;
		k += 3;
	}
	switch (length) {
	case 3: c += k[2]; [[fallthrough]];
	case 2: b += k[1]; [[fallthrough]];
	case 1: a += k[0];
		/* final */
		c ^= b; c -= rol32(b, 14);
		a ^= c; a -= rol32(c, 11);
		b ^= a; b -= rol32(a, 25);
		c ^= b; c -= rol32(b, 16);
		a ^= c; a -= rol32(c, 4);
		b ^= a; b -= rol32(a, 14);
		c ^= b; c -= rol32(b, 24);
		break;
	case 0:
		break;
	}
	return c;
}

/* lib/string.c memcmp with CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS. */
__attribute__((noinline)) inline int kernel_memcmp(const void *cs, const void *ct, size_t count)
{
	const unsigned char *su1, *su2;
	int res = 0;

	if (count >= sizeof(unsigned long)) {
		const unsigned long *u1 = static_cast<const unsigned long *>(cs);
		const unsigned long *u2 = static_cast<const unsigned long *>(ct);
		do {
			if (*u1 != *u2)
				break;
			u1++;
			u2++;
			count -= sizeof(unsigned long);
		} while (count >= sizeof(unsigned long));
		cs = u1;
		ct = u2;
	}
	for (su1 = static_cast<const unsigned char *>(cs), su2 = static_cast<const unsigned char *>(ct);
	     0 < count; ++su1, ++su2, count--)
		if ((res = *su1 - *su2) != 0)
			break;
	return res;
}

struct Elt {
	u32 nr;
	std::atomic<int> ref_count;
	unsigned long ips[kMaxDepth];
};

struct Entry {
	std::atomic<u32> key;	/* 0 = free */
	std::atomic<Elt *> val;	/* NULL until published */
};

class alignas(64) Map {
public:
	explicit Map(unsigned bits) : bits_(bits), map_size_(2u << bits), max_elts_(1u << bits)
	{
		entries_ = static_cast<Entry *>(calloc(map_size_, sizeof(Entry)));
		elts_ = static_cast<Elt **>(calloc(max_elts_, sizeof(Elt *)));
		for (u32 i = 0; i < max_elts_; i++)
			elts_[i] = static_cast<Elt *>(calloc(1, sizeof(Elt)));
	}
	~Map()
	{
		for (u32 i = 0; i < max_elts_; i++)
			free(elts_[i]);
		free(elts_);
		free(entries_);
	}
	Map(const Map &) = delete;
	Map &operator=(const Map &) = delete;

	/* The RFC's fixed, map-independent seed (random once per boot there). */
	static constexpr u32 kSeed = 0x6b43a9b5;

	/* ftrace_stackmap_get_id(): slot index, or -1 (-EINVAL/-ENOSPC). */
	int get_id(const unsigned long *ips, unsigned nr)
	{
		if (!nr || resetting_.load(std::memory_order_relaxed))
			return -1;
		if (nr > kMaxDepth)
			nr = kMaxDepth;
		const u32 trace_len = nr * sizeof(unsigned long);
		u32 key_hash = jhash2(reinterpret_cast<const u32 *>(ips), trace_len / 4, kSeed);
		if (key_hash == 0)
			key_hash = 1;
		u32 idx = key_hash >> (32 - (bits_ + 1));
		u32 dup_try = 0;

		while (true) {
			idx &= map_size_ - 1;
			Entry *entry = &entries_[idx];
			u32 test_key = entry->key.load(std::memory_order_relaxed);

			if (test_key && test_key == key_hash) {
				Elt *val = entry->val.load(std::memory_order_acquire);	/* READ_ONCE */
				if (val && val->nr == nr && kernel_memcmp(val->ips, ips, trace_len) == 0) {
					val->ref_count.fetch_add(1, std::memory_order_relaxed);	/* atomic_inc */
					hits_.fetch_add(1, std::memory_order_relaxed);		/* atomic64_inc */
					return (int)idx;
				} else if (!val) {
					if (++dup_try > map_size_) {
						drops_.fetch_add(1, std::memory_order_relaxed);
						break;
					}
					continue;
				}
			}
			if (!test_key) {
				u32 expected = 0;
				if (entry->key.compare_exchange_strong(expected, key_hash)) {
					int i = next_elt_.load(std::memory_order_relaxed);
					Elt *elt = nullptr;
					/* atomic_fetch_add_unless(&next_elt, 1, max_elts) */
					while (i < (int)max_elts_ &&
					       !next_elt_.compare_exchange_weak(i, i + 1))
						;
					if (i < (int)max_elts_)
						elt = elts_[i];
					if (!elt) {
						drops_.fetch_add(1, std::memory_order_relaxed);
						break;
					}
					elt->nr = nr;
					elt->ref_count.store(1, std::memory_order_relaxed);
					memcpy(elt->ips, ips, trace_len);
					entry->val.store(elt, std::memory_order_release);	/* smp_wmb + WRITE_ONCE */
					hits_.fetch_add(1, std::memory_order_relaxed);
					return (int)idx;
				}
				dup_try++;
				continue;
			}
			idx++;
			if (++dup_try > map_size_) {
				drops_.fetch_add(1, std::memory_order_relaxed);
				break;
			}
		}
		return -1;
	}

	/* Per-stack memory: the element (kmalloc rounds 520 up to 1024). */
	static constexpr size_t kEltBytes = sizeof(Elt);
	static constexpr size_t kEltSlabBytes = 1024;
	size_t table_bytes() const { return (size_t)map_size_ * sizeof(Entry) + max_elts_ * sizeof(Elt *); }
	u32 capacity() const { return max_elts_; }
	const Elt *elt_at(int idx) const { return entries_[idx].val.load(std::memory_order_acquire); }

private:
	/* Field order of struct ftrace_stackmap: one 64-byte kmalloc object,
	 * so the shared hits counter sits on the line every lookup reads. */
	unsigned bits_;
	u32 map_size_, max_elts_;
	std::atomic<int> next_elt_{0};
	Entry *entries_;
	Elt **elts_;
	std::atomic<int> resetting_{0};
	std::atomic<int64_t> hits_{0};
	std::atomic<int64_t> drops_{0};
};

} // namespace seed

#endif /* FSM_BENCH_SEED_MAP_H */
