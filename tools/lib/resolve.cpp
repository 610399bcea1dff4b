// SPDX-License-Identifier: GPL-2.0
/*
 * resolve.cpp - see resolve.h.
 */
#include "resolve.h"
#include "abi.h"

namespace smr {

void Resolver::add_def(int buf, uint64_t ts, uint32_t stack_id, uint32_t flags,
		       std::vector<uint64_t> ips)
{
	raw_defs_.push_back({buf, ts, stack_id, flags, std::move(ips)});
}

void Resolver::add_reset(int buf, uint64_t ts, uint32_t generation)
{
	resets_[buf][ts] = generation;
}

void Resolver::add_user_stack(int buf, uint64_t ts, UserStackRec rec)
{
	(void)ts;
	if (rec.flags & FSM_USF_RESET)
		return;		/* a marker: no stack, cookie 0 */
	if ((rec.flags & FSM_USF_INLINE) && rec.ustack_id != FSM_USTACK_ID_NONE &&
	    !rec.frames.empty())
		udefs_[{buf, rec.gen, rec.ustack_id}] = {rec.frames, rec.flags};
	if (rec.cookie)
		by_cookie_.emplace(std::make_pair(buf, rec.cookie), std::move(rec));
}

void Resolver::add_file_map(int buf, uint64_t ts, uint64_t file_id,
			    const std::string &path, const std::string &build_id)
{
	/*
	 * A file id names one file whatever the instance (ustack.rst, "Tools
	 * may assume"); the latest record is the best, but a record without
	 * a build-id does not mean the file has none.
	 */
	(void)buf;
	(void)ts;
	FileInfo &f = files_[file_id];
	f.path = path;
	if (!build_id.empty())
		f.build_id = build_id;
}

void Resolver::add_id(int buf, uint32_t stack_id)
{
	id_gen_bits_[buf][FSM_SID_GEN(stack_id)]++;
}

uint64_t Resolver::full_generation(int buf, uint64_t ts, uint32_t gen_bits) const
{
	auto it = resets_.find(buf);
	if (it == resets_.end() || it->second.empty()) {
		/*
		 * No reset recorded: the bits are all the trace tells, unless
		 * snapshot_generation() took a snapshot's generation for them.
		 */
		auto a = anchor_.find(buf);
		if (a != anchor_.end() && (a->second & FSM_SID_GEN_MASK) == gen_bits)
			return a->second;
		return gen_bits;
	}
	const auto &r = it->second;
	auto up = r.upper_bound(ts);
	uint64_t cur;
	if (up == r.begin())
		cur = r.begin()->second ? r.begin()->second - 1 : 0;
	else
		cur = std::prev(up)->second;
	/* the newest generation <= cur with these low bits (G - 1 in flight) */
	uint64_t back = (cur - gen_bits) & FSM_SID_GEN_MASK;
	return cur >= back ? cur - back : gen_bits;
}

void Resolver::finish()
{
	for (auto &d : raw_defs_) {
		uint64_t g = full_generation(d.buf, d.ts, FSM_SID_GEN(d.stack_id));
		kdefs_[{d.buf, g, FSM_SID_INDEX(d.stack_id)}] =
			{std::move(d.ips), bool(d.flags & FSM_SID_F_TRUNCATED)};
		gens_seen_[d.buf][g] = true;
		told_.insert(d.buf);
	}
	for (const auto &[buf, r] : resets_)
		if (!r.empty())
			told_.insert(buf);
	raw_defs_.clear();
	finished_ = true;
}

bool Resolver::buffer_has_generation(int buf, uint64_t generation) const
{
	auto it = gens_seen_.find(buf);
	if (it != gens_seen_.end() && it->second.count(generation))
		return true;
	auto r = resets_.find(buf);
	if (r != resets_.end())
		for (const auto &[ts, g] : r->second)
			if (g == generation)
				return true;
	return false;
}

std::string Resolver::snapshot_generation(int buf, uint64_t generation,
					  const std::string &name)
{
	if (told_.count(buf)) {
		if (buffer_has_generation(buf, generation))
			return "";
		return "its generation " + std::to_string(generation) +
		       " is not one that " + name + " recorded";
	}
	/* stack_id records alone: only their low 12 generation bits */
	uint32_t bits = uint32_t(generation & FSM_SID_GEN_MASK);
	auto a = anchor_.find(buf);
	if (a != anchor_.end() && a->second != generation)
		return "its generation " + std::to_string(generation) +
		       " is not the generation " + std::to_string(a->second) +
		       " of the snapshot of " + name + " already added (the trace " +
		       "has no stack_def or stack_reset records to tell them apart)";
	auto ids = id_gen_bits_.find(buf);
	if (ids != id_gen_bits_.end())
		for (const auto &[b, n] : ids->second)
			if (b != bits)
				return std::to_string(n) + " of the ids of " + name +
				       " carry generation bits " + std::to_string(b) +
				       ", not " + std::to_string(bits) + " (generation " +
				       std::to_string(generation) + " & 0xfff); the trace " +
				       "has no stack_def or stack_reset records to tell " +
				       "more (record them with -e stackmap)";
	anchor_[buf] = generation;
	return "";
}

std::string Resolver::add_snapshot(int buf, const Fsmb &snap)
{
	/* every id the trace defines must be the snapshot's, if it has it */
	for (const auto &k : snap.kstacks) {
		auto it = kdefs_.find({buf, snap.generation, k.stack_id});
		if (it != kdefs_.end() && it->second.ips != k.ips)
			return "stack " + std::to_string(k.stack_id) + " of generation " +
			       std::to_string(snap.generation) +
			       " differs from the trace's stack_def: the snapshot is "
			       "from another boot, module load or instance";
	}
	for (const auto &u : snap.ustacks) {
		auto it = udefs_.find({buf, snap.ugeneration, u.ustack_id});
		if (it != udefs_.end() && it->second.first != u.frames)
			return "user stack " + std::to_string(u.ustack_id) +
			       " differs from the trace's: the snapshot is from "
			       "another module load or instance";
	}
	for (const auto &[id, f] : snap.files) {
		auto it = files_.find(id);
		if (it != files_.end() && !f.build_id.empty() &&
		    !it->second.build_id.empty() && f.build_id != it->second.build_id)
			return "file id " + std::to_string(id) +
			       " has another build-id in the trace";
	}
	for (const auto &k : snap.kstacks)
		kdefs_.emplace(KKey{buf, snap.generation, k.stack_id},
			       KDef{k.ips, false});
	gens_seen_[buf][snap.generation] = true;
	if (snap.flags & FSMB_F_USER)
		for (const auto &u : snap.ustacks)
			udefs_.emplace(UKey{buf, snap.ugeneration, u.ustack_id},
				       std::make_pair(u.frames, u.flags));
	for (const auto &[id, f] : snap.files)
		if (!files_.count(id))
			files_[id] = {f.path, f.build_id};
	return "";
}

KernelResult Resolver::kernel(int buf, uint64_t ts, uint32_t stack_id) const
{
	KernelResult r;
	r.generation = full_generation(buf, ts, FSM_SID_GEN(stack_id));
	auto it = kdefs_.find({buf, r.generation, FSM_SID_INDEX(stack_id)});
	if (it == kdefs_.end())
		return r;
	r.status = Status::OK;
	r.ips = &it->second.ips;
	r.truncated = it->second.truncated;
	return r;
}

UserResult Resolver::user(int buf, uint64_t cookie) const
{
	UserResult r;
	auto it = by_cookie_.find({buf, cookie});
	if (it == by_cookie_.end())
		return r;	/* MISSING */
	const UserStackRec &u = it->second;
	r.rec = &u;
	r.ia32 = u.flags & FSM_USF_IA32;
	r.truncated = u.flags & FSM_USF_TRUNCATED;
	r.unreliable = u.flags & FSM_USF_UNRELIABLE;
	if (!u.frames.empty()) {	/* inline or fallback: the record has it */
		r.status = Status::OK;
		r.frames = &u.frames;
		return r;
	}
	if (u.ustack_id == FSM_USTACK_ID_NONE) {
		r.status = Status::NONE;	/* empty stack (reason != 0) */
		return r;
	}
	auto d = udefs_.find({buf, u.gen, u.ustack_id});
	if (d == udefs_.end()) {
		r.status = Status::UNRESOLVED;
		return r;
	}
	r.status = Status::OK;
	r.frames = &d->second.first;
	r.ia32 = d->second.second & FSM_USF_IA32;
	r.truncated = d->second.second & FSM_USF_TRUNCATED;
	r.unreliable = d->second.second & FSM_USF_UNRELIABLE;
	return r;
}

const FileInfo *Resolver::file(uint64_t file_id) const
{
	auto it = files_.find(file_id);
	return it == files_.end() ? nullptr : &it->second;
}

size_t Resolver::missing_files(const std::vector<UFrame> &frames) const
{
	constexpr uint64_t kNotFile = FSM_UFR_ANON | FSM_UFR_VDSO | FSM_UFR_NOVMA |
				      FSM_UFR_SPECIAL;
	std::set<uint64_t> missing;

	for (const auto &[id, w] : frames)
		if (id && !(w & kNotFile) && !files_.count(id))
			missing.insert(id);
	return missing.size();
}

const char *compat_name(uint16_t e_machine)
{
	switch (e_machine) {
	case 3:		/* EM_386 */
		return "ia32";
	case 40:	/* EM_ARM */
		return "aarch32";
	default:
		return "compat";
	}
}

std::string ustack_flag_text(uint16_t flags, uint16_t e_machine)
{
	std::string s;

	if (flags & FSM_USF_IA32)
		s += std::string(", ") + compat_name(e_machine);
	if (flags & FSM_USF_TRUNCATED)
		s += ", truncated";
	if (flags & FSM_USF_UNRELIABLE)
		s += ", unreliable";
	return s;
}

} /* namespace smr */
