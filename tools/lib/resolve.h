/* SPDX-License-Identifier: GPL-2.0 */
/*
 * resolve.h - from stack ids to stacks: the semantics of record format 2
 * (Documentation/tracing.rst, "The stack records") and of user stacks
 * (Documentation/ustack.rst), without any trace.dat code, so that the
 * tests can feed it records of their own.
 *
 * Keys. A kernel stack is named by (buffer, full generation, stack_id):
 * the id carries the low 12 bits of its generation; the stack_reset
 * records of the buffer (each with the full generation) give the full one.
 * A user stack is named by (buffer, user generation, ustack_id); the
 * user_stack record carries its full generation. A stack_id_user record
 * names its user stack by (buffer, cookie): the user_stack record with
 * that cookie in the same buffer, written later.
 *
 * Two passes. Pass 1 adds every definition (stack_def, stack_reset, inline
 * user_stack records, file_map, snapshots); finish() then keys them. Pass 2
 * asks for the stack of each id record: a definition written after its
 * first use (another CPU, a moment later, or written again by the module
 * after later uses: REDEF stack_def and definition-only user_stack records)
 * is found as well, so the position of a definition never matters. What
 * has no definition anywhere is reported unresolved, never guessed.
 *
 * A buffer without stack_def and stack_reset records (a recording of
 * stackmap:stack_id alone) tells no full generation: its ids carry only
 * the low 12 bits. snapshot_generation() then accepts a snapshot whose
 * generation has the bits of every id of the buffer and takes the
 * snapshot's full generation for them (add_id() collects the bits).
 */
#ifndef STACKMAP_REPORT_RESOLVE_H
#define STACKMAP_REPORT_RESOLVE_H

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "fsmb.h"

namespace smr {

using UFrame = std::pair<uint64_t, uint64_t>;	/* file id, offset | flags */

struct UserStackRec {
	uint64_t cookie = 0;
	uint32_t ustack_id = 0;
	uint32_t gen = 0;
	uint16_t flags = 0;
	uint8_t reason = 0;
	uint8_t id_reason = 0;
	std::vector<UFrame> frames;
};

struct FileInfo {
	std::string path;
	std::string build_id;	/* hex, "" when unknown */
};

enum class Status {
	OK,
	UNRESOLVED,	/* no definition of the id in the trace or snapshots */
	NONE,		/* the record has no stack (nested fallback, empty) */
	MISSING,	/* stack_id_user whose user_stack record is not in the trace */
};

struct KernelResult {
	Status status = Status::UNRESOLVED;
	uint64_t generation = 0;	/* full generation of the id */
	const std::vector<uint64_t> *ips = nullptr;
	bool truncated = false;
};

struct UserResult {
	Status status = Status::MISSING;
	const UserStackRec *rec = nullptr;	/* the user_stack record */
	const std::vector<UFrame> *frames = nullptr;
	bool ia32 = false;
	bool truncated = false;
	bool unreliable = false;	/* FSM_USF_UNRELIABLE */
};

/*
 * The name of the compat mode of a user stack with FSM_USF_IA32, as the
 * kernel's stack_map prints it: "ia32" (x86-64 kernels) or "aarch32"
 * (arm64 kernels), told apart by the ELF machine of one of its files
 * (EM_386, EM_ARM); "compat" when no file says.
 */
const char *compat_name(uint16_t e_machine);

/*
 * The flag words of a user stack header as stack_map prints them:
 * ", ia32" / ", aarch32" (FSM_USF_IA32), ", truncated", ", unreliable"
 * (FSM_USF_UNRELIABLE, 0x80: frames past entry 0 may be wrong or missing:
 * AArch32's layouts, x86 return addresses no call precedes); "" for none.
 */
std::string ustack_flag_text(uint16_t flags, uint16_t e_machine);

class Resolver {
public:
	/* ---- pass 1 ---- */
	void add_def(int buf, uint64_t ts, uint32_t stack_id, uint32_t flags,
		     std::vector<uint64_t> ips);
	void add_reset(int buf, uint64_t ts, uint32_t generation);
	void add_user_stack(int buf, uint64_t ts, UserStackRec rec);
	void add_file_map(int buf, uint64_t ts, uint64_t file_id,
			  const std::string &path, const std::string &build_id);
	/* an id record (stack_id, stack_id_user): its generation bits */
	void add_id(int buf, uint32_t stack_id);
	/*
	 * Can a snapshot of this full generation be matched to buffer buf?
	 * Call after finish(), before add_snapshot(). With stack_def or
	 * stack_reset records in the buffer, the generation must be one of
	 * theirs; without, every id of the buffer must carry its low 12 bits
	 * (and a second snapshot of another generation is refused), and the
	 * ids of the buffer then resolve in that generation. name: how the
	 * buffer is called in messages. Return: "" or why not.
	 */
	std::string snapshot_generation(int buf, uint64_t generation,
					const std::string &name);
	/*
	 * A stack_map_bin snapshot of buffer buf. Call after finish(): it is
	 * checked against what the trace defines. Return: "" or why it is
	 * refused (nothing is added then).
	 */
	std::string add_snapshot(int buf, const Fsmb &snap);
	void finish();

	/* ---- pass 2 ---- */
	uint64_t full_generation(int buf, uint64_t ts, uint32_t gen_bits) const;
	KernelResult kernel(int buf, uint64_t ts, uint32_t stack_id) const;
	UserResult user(int buf, uint64_t cookie) const;
	const FileInfo *file(uint64_t file_id) const;
	/*
	 * The frames of a user stack that name a file the trace (file_map
	 * records, snapshots) does not describe: file-backed frames only
	 * (not anonymous, vdso, special or unmapped ones), each file once.
	 */
	size_t missing_files(const std::vector<UFrame> &frames) const;

	/* generations (full) that the ids of buffer buf name */
	bool buffer_has_generation(int buf, uint64_t generation) const;
	size_t definitions() const { return kdefs_.size(); }

private:
	struct RawDef {
		int buf;
		uint64_t ts;
		uint32_t stack_id;
		uint32_t flags;
		std::vector<uint64_t> ips;
	};
	struct KDef {
		std::vector<uint64_t> ips;
		bool truncated;
	};
	using KKey = std::tuple<int, uint64_t, uint32_t>;	/* buf, gen, index */
	using UKey = std::tuple<int, uint32_t, uint32_t>;	/* buf, ugen, id */

	std::vector<RawDef> raw_defs_;
	std::map<int, std::map<uint64_t, uint32_t>> resets_;	/* ts -> gen */
	std::map<KKey, KDef> kdefs_;
	std::map<UKey, std::pair<std::vector<UFrame>, uint16_t>> udefs_;
	struct CookieHash {	/* cookies are per-CPU sequences: mix them */
		size_t operator()(const std::pair<int, uint64_t> &k) const
		{
			return std::hash<uint64_t>()(k.second * 0x9e3779b97f4a7c15ull ^
						     uint64_t(k.first));
		}
	};
	std::unordered_map<std::pair<int, uint64_t>, UserStackRec, CookieHash> by_cookie_;
	std::unordered_map<uint64_t, FileInfo> files_;
	std::map<int, std::map<uint64_t, bool>> gens_seen_;
	std::map<int, std::map<uint32_t, uint64_t>> id_gen_bits_;	/* -> ids */
	std::map<int, uint64_t> anchor_;	/* buf -> generation from a snapshot */
	std::set<int> told_;	/* buffers with stack_def or stack_reset records */
	bool finished_ = false;
};

} /* namespace smr */

#endif
