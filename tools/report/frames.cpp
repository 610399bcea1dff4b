// SPDX-License-Identifier: GPL-2.0
/*
 * frames.cpp - the names of a sample's frames (see frames.h).
 */
#include "frames.h"

#include <cinttypes>
#include <cstdio>

#include "abi.h"

namespace smr::report {

std::string hex64(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return b;
}

const std::vector<uint64_t> *Frames::kernel_ips(const Sample &s)
{
	if (s.fallback)
		return s.id->reason == FSM_SID_REASON_NESTED ? nullptr : &s.id->ips;
	return s.k.status == Status::OK ? s.k.ips : nullptr;
}

std::vector<std::string> Frames::kernel_frames(const Sample &s, bool folded)
{
	std::vector<std::string> out;
	const std::vector<uint64_t> *ips = nullptr;
	if (s.fallback) {
		if (s.id->reason == FSM_SID_REASON_NESTED) {
			out.push_back("[no stack: nested]");
			return out;
		}
		ips = &s.id->ips;
	} else if (s.k.status == Status::OK) {
		ips = s.k.ips;
	} else {
		out.push_back("[unresolved stack_id " + std::to_string(s.id->stack_id) +
			      " gen " + std::to_string(s.k.generation) + " index " +
			      std::to_string(FSM_SID_INDEX(s.id->stack_id)) + "]");
		return out;
	}
	for (uint64_t ip : *ips) {
		if (folded)
			out.push_back(ks_.name(ip));
		else if (o_.addr)
			out.push_back(ks_.name_off(ip) + " <" + hex64(ip) + ">");
		else
			out.push_back(ks_.name_off(ip));
	}
	return out;
}

std::vector<UserFrame> Frames::user_frames(const std::vector<UFrame> &frames)
{
	std::vector<UserFrame> out;
	for (size_t i = 0; i < frames.size(); i++) {
		const FileInfo *f = res_.file(frames[i].first);
		out.push_back(us_.frame(frames[i].first, frames[i].second,
					f ? f->path : "", f ? f->build_id : "", i > 0));
	}
	return out;
}

std::string Frames::user_problem(const Sample &s)
{
	switch (s.u.status) {
	case Status::MISSING:
		return "[user stack not in the trace: cookie " + hex64(s.id->cookie) + "]";
	case Status::UNRESOLVED:
		return "[unresolved ustack_id " + std::to_string(s.u.rec->ustack_id) +
		       " gen " + std::to_string(s.u.rec->gen) + "]";
	case Status::NONE:
		return "[no user stack: reason " + std::to_string(s.u.rec->reason) + "]";
	default:
		return "";
	}
}

std::string Frames::folded_key(const Sample &s)
{
	std::string k = o_.by_host ? clean(s.host) + ";" : "";
	k += clean(s.comm.empty() ? "[unknown]" : s.comm);
	if (s.has_user) {
		if (s.u.status != Status::OK) {
			k += ";" + clean(user_problem(s));
		} else {
			auto ufs = user_frames(*s.u.frames);
			for (auto it = ufs.rbegin(); it != ufs.rend(); ++it) {
				if (it->funcs.empty()) {
					k += ";" + clean(it->where);
					continue;
				}
				for (auto f = it->funcs.rbegin(); f != it->funcs.rend(); ++f)
					k += ";" + clean(f->func.empty() ? it->where : f->func);
			}
		}
	}
	auto kf = kernel_frames(s, true);
	for (auto it = kf.rbegin(); it != kf.rend(); ++it)
		k += ";" + clean(*it) + "_[k]";
	return k;
}

std::string Frames::clean(std::string s)
{
	for (char &c : s)
		if (c == ';' || c == '\n')
			c = ':';
	return s;
}

} /* namespace smr::report */
