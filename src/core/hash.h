/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hash.h - keyed 64-bit hash of a stack (array of u64 addresses).
 *
 * Overview
 * --------
 * The map needs a hash that is (1) fast: it runs on every traced event, the
 * budget for a whole 16-frame hit is ~40 ns; (2) keyed: the stacks of user
 * tasks are chosen by whoever runs the task, so a fixed public function
 * (the RFC's jhash2 with a fixed seed) lets anyone craft stacks that pile up
 * in one bucket; (3) free of libgcc helpers.
 *
 * It is a multiply-mix hash in the wyhash/xxh3 family: the basic step is
 * mum(a, b) = lo64(a*b) ^ hi64(a*b) of the full 64x64->128 product (one
 * mul instruction on x86-64, mul+umulh on arm64; a 128-bit multiplication
 * never calls libgcc, only 128-bit division would). Two frames are absorbed
 * per step: lane = mum(ip[i] ^ secret, ip[i+1] ^ lane). Two independent
 * lanes take alternate pairs so that a 16-frame stack costs four dependent
 * multiplications instead of eight. The frame count is folded into the
 * initial state, so a stack and its prefixes hash independently.
 *
 * The 128-bit key (fsm_map_params.key) is expanded once into four 64-bit
 * secrets (HashKey) at map creation. The map takes whatever key its caller
 * passes: the kernel module draws one random key at load (main.c, fsm_key)
 * and gives it to every map it creates, kernel and user stack maps of every
 * instance alike, so the key is random per module load, not per map. (A
 * reset keeps the key.) Tests pass fixed keys.
 *
 * Collision-resistance caveat: this is NOT a cryptographic PRF (siphash is,
 * and costs ~3x more here). Its strength against crafted inputs rests on the
 * key staying secret: an adversary who never sees hash values cannot aim
 * for a bucket. Known weaknesses of the construction: (a) a step with an
 * all-zero operand (ip ^ secret == 0) forgets the lane state; hitting that
 * needs the secret, i.e. 1 in 2^64 blind; (b) the table layout and timing
 * may leak a few low bits of hashes to a local observer over many probes.
 * None of this can produce a wrong id: the map compares the full stack on a
 * tag match. The worst a successful attacker achieves is long probe runs,
 * i.e. FSM_DROP_PROBE_LIMIT drops for its own stacks (the caller falls back
 * to writing the full stack), bounded by the probe limit.
 *
 * Output use: low bits select the bucket, the high 32 bits are the slot tag.
 */
#ifndef FSM_HASH_H
#define FSM_HASH_H

#include "platform.h"

namespace fsm {

/* Secrets derived from the 128-bit map key. */
struct HashKey {
	u64 s[4];
};

/* Odd constants with balanced bits (the wyhash primes). */
inline constexpr u64 kHashP0 = 0xa0761d6478bd642full;
inline constexpr u64 kHashP1 = 0xe7037ed1a0b428dbull;
inline constexpr u64 kHashP2 = 0x8ebc6af09c88c6e3ull;
inline constexpr u64 kHashP3 = 0x589965cc75374cc3ull;

/* 64x64->128 multiply, folded: the only non-trivial operation of the hash. */
FSM_ALWAYS_INLINE u64 mum(u64 a, u64 b)
{
	unsigned __int128 r = (unsigned __int128)a * b;

	return (u64)r ^ (u64)(r >> 64);
}

/*
 * hash_key_expand - derive the four secrets of a map from its key.
 * Any key is accepted (an all-zero key gives a fixed, unkeyed hash: fine
 * for tests, what the kernel must avoid by passing random bytes).
 * Context: any.
 */
inline HashKey hash_key_expand(u64 k0, u64 k1)
{
	HashKey key{};

	key.s[0] = k0 ^ kHashP0;
	key.s[1] = k1 ^ kHashP1;
	key.s[2] = mum(k0 ^ kHashP2, k1 ^ kHashP3) ^ kHashP1;
	key.s[3] = mum(k1 ^ kHashP0, k0 ^ kHashP2) ^ kHashP3;
	return key;
}

/*
 * hash_stack - keyed hash of @nr frames at @ips.
 * Context: any (pure function, no memory written).
 * Return: 64-bit hash; any value, 0 included.
 */
FSM_ALWAYS_INLINE u64 hash_stack(const HashKey &key, const u64 *ips, u32 nr)
{
	u64 a = key.s[0] ^ ((u64)nr * kHashP2);
	u64 b = key.s[1] ^ nr;
	u32 i = 0;

	/* Two independent lanes, two frames per lane per round. */
	for (; i + 4 <= nr; i += 4) {
		a = mum(ips[i] ^ key.s[2], ips[i + 1] ^ a);
		b = mum(ips[i + 2] ^ key.s[3], ips[i + 3] ^ b);
	}
	if (nr - i >= 2) {
		a = mum(ips[i] ^ key.s[2], ips[i + 1] ^ a);
		i += 2;
	}
	if (nr - i == 1)
		b = mum(ips[i] ^ key.s[3], b ^ key.s[0]);

	/* Final fold of both lanes, keyed again so the lanes cannot cancel. */
	return mum(a ^ key.s[1], b ^ key.s[2]);
}

} /* namespace fsm */

#endif /* FSM_HASH_H */
