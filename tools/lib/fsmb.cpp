// SPDX-License-Identifier: GPL-2.0
/*
 * fsmb.cpp - FSMB v4 decoder (see fsmb.h). Offsets and sizes come from
 * the structures of include/ftrace_stackmap/abi.h; fields are read with
 * memcpy from little-endian bytes (x86-64 and arm64 hosts are
 * little-endian; a big-endian host is refused at build time).
 */
#include "fsmb.h"
#include "abi.h"

#include <cstring>
#include <fstream>
#include <iterator>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	      "the FSMB decoder reads little-endian fields in place");

namespace smr {

namespace {

class Reader {
public:
	Reader(const uint8_t *d, size_t n) : d_(d), n_(n) {}
	bool has(size_t off, size_t len) const
	{
		return off <= n_ && len <= n_ - off;
	}
	template <typename T> T get(size_t off) const
	{
		T v;
		std::memcpy(&v, d_ + off, sizeof(v));
		return v;
	}
	const uint8_t *at(size_t off) const { return d_ + off; }
	size_t size() const { return n_; }

private:
	const uint8_t *d_;
	size_t n_;
};

std::string hex(const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	std::string s;
	for (size_t i = 0; i < n; i++) {
		s += digits[p[i] >> 4];
		s += digits[p[i] & 15];
	}
	return s;
}

bool fail(std::string *err, const std::string &msg)
{
	*err = msg;
	return false;
}

} /* namespace */

bool Fsmb::hidden() const
{
	return flags & FSMB_F_HIDDEN;
}

uint32_t Fsmb::record_id(uint32_t index) const
{
	return FSM_SID_MAKE(generation, index);
}

bool fsmb_decode(const uint8_t *data, size_t len, Fsmb *out, std::string *err)
{
	Reader r(data, len);
	Fsmb f;
	const size_t hdr = sizeof(struct fsmb_header);

	if (!r.has(0, 16))
		return fail(err, "not an FSMB file: " + std::to_string(len) +
			    " bytes, shorter than the header");
	struct fsmb_header h;
	std::memset(&h, 0, sizeof(h));
	std::memcpy(&h, data, len < hdr ? len : hdr);
	if (h.magic != FSMB_MAGIC)
		return fail(err, "not an FSMB file (bad magic)");
	if (h.version < 4)
		return fail(err, "FSMB version " + std::to_string(h.version) +
			    " is not supported (version 4 or later)");
	if (h.header_size < hdr || !r.has(0, h.header_size))
		return fail(err, "FSMB header_size " +
			    std::to_string(h.header_size) + " invalid or truncated");
	if (h.max_depth == 0 || h.max_depth > 4096 || h.umax_frames > 4096)
		return fail(err, "FSMB header: max_depth " +
			    std::to_string(h.max_depth) + " / umax_frames " +
			    std::to_string(h.umax_frames) + " out of range");
	if (h.ustack_entry_size < sizeof(struct fsmb_uentry) ||
	    h.ustack_entry_size > 4096)
		return fail(err, "FSMB header: ustack_entry_size " +
			    std::to_string(h.ustack_entry_size) + " invalid");
	if (h.bits > FSM_SID_INDEX_BITS || h.ubits > 32)
		return fail(err, "FSMB header: bits " + std::to_string(h.bits) +
			    " out of range");
	f.version = h.version;
	f.generation = h.generation;
	f.bits = h.bits;
	f.flags = h.flags;
	f.max_depth = h.max_depth;
	f.ref_symbol_addr = h.ref_symbol_addr;
	f.instance.assign(h.instance, strnlen(h.instance, sizeof(h.instance)));
	f.ugeneration = h.ugeneration;
	f.ubits = h.ubits;
	f.umax_frames = h.umax_frames;

	size_t off = h.header_size;
	/* every entry has at least its header: bound counts by the size */
	if (h.nr_stacks > len / sizeof(struct fsmb_entry))
		return fail(err, "FSMB: nr_stacks " + std::to_string(h.nr_stacks) +
			    " larger than the file");
	for (uint32_t i = 0; i < h.nr_stacks; i++) {
		if (!r.has(off, sizeof(struct fsmb_entry)))
			return fail(err, "FSMB truncated in kernel entry " +
				    std::to_string(i));
		auto e = r.get<struct fsmb_entry>(off);
		off += sizeof(e);
		if (e.nr == 0 || e.nr > h.max_depth)
			return fail(err, "FSMB kernel entry " + std::to_string(i) +
				    ": nr " + std::to_string(e.nr) + " out of range");
		if (e.stack_id > FSM_SID_INDEX_MASK)
			return fail(err, "FSMB kernel entry " + std::to_string(i) +
				    ": stack_id " + std::to_string(e.stack_id) +
				    " out of range");
		if (!r.has(off, 8ull * e.nr))
			return fail(err, "FSMB truncated in the ips of kernel entry " +
				    std::to_string(i));
		FsmbKStack k{e.stack_id, e.hits, {}};
		k.ips.resize(e.nr);
		std::memcpy(k.ips.data(), r.at(off), 8ull * e.nr);
		off += 8ull * e.nr;
		f.kstacks.push_back(std::move(k));
	}
	if (h.nr_ustacks > len / h.ustack_entry_size)
		return fail(err, "FSMB: nr_ustacks " +
			    std::to_string(h.nr_ustacks) + " larger than the file");
	for (uint32_t i = 0; i < h.nr_ustacks; i++) {
		if (!r.has(off, h.ustack_entry_size))
			return fail(err, "FSMB truncated in user entry " +
				    std::to_string(i));
		auto e = r.get<struct fsmb_uentry>(off);
		off += h.ustack_entry_size;
		if (e.nr == 0 || e.nr > h.umax_frames)
			return fail(err, "FSMB user entry " + std::to_string(i) +
				    ": nr " + std::to_string(e.nr) + " out of range");
		if (!r.has(off, 16ull * e.nr))
			return fail(err, "FSMB truncated in the frames of user entry " +
				    std::to_string(i));
		FsmbUStack u{e.ustack_id, e.hits, e.flags, e.stop, e.mm, {}};
		u.frames.resize(e.nr);
		for (uint32_t j = 0; j < e.nr; j++) {
			u.frames[j].first = r.get<uint64_t>(off);
			u.frames[j].second = r.get<uint64_t>(off + 8);
			off += 16;
		}
		f.ustacks.push_back(std::move(u));
	}
	for (;;) {
		if (!r.has(off, sizeof(struct fsmb_file)))
			return fail(err, "FSMB truncated: file table not terminated");
		auto e = r.get<struct fsmb_file>(off);
		if (e.file_id == 0) {
			if (e.size != sizeof(e))
				return fail(err, "FSMB: bad end record");
			off += sizeof(e);
			break;
		}
		size_t need = sizeof(e) + size_t(e.path_len) + e.bid_len;
		if (e.size % 8 || e.size < need || !r.has(off, e.size) ||
		    e.path_len < 1 || e.bid_len > 64)
			return fail(err, "FSMB: bad file record at offset " +
				    std::to_string(off));
		const char *p = reinterpret_cast<const char *>(r.at(off + sizeof(e)));
		if (p[e.path_len - 1] != '\0')
			return fail(err, "FSMB: file path not NUL-terminated at offset " +
				    std::to_string(off));
		FsmbFile ff{std::string(p, strnlen(p, e.path_len)),
			    hex(r.at(off + sizeof(e) + e.path_len), e.bid_len)};
		f.files[e.file_id] = std::move(ff);
		off += e.size;
	}
	if (off != len)
		return fail(err, "FSMB: " + std::to_string(len - off) +
			    " bytes after the file table");
	*out = std::move(f);
	return true;
}

bool fsmb_read_file(const std::string &path, Fsmb *out, std::string *err)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		return fail(err, path + ": cannot open");
	std::vector<uint8_t> buf((std::istreambuf_iterator<char>(in)),
				 std::istreambuf_iterator<char>());
	if (in.bad())
		return fail(err, path + ": read error");
	if (!fsmb_decode(buf.data(), buf.size(), out, err)) {
		*err = path + ": " + *err;
		return false;
	}
	return true;
}

namespace {

template <typename T> void put(std::vector<uint8_t> &b, const T &v)
{
	const uint8_t *p = reinterpret_cast<const uint8_t *>(&v);
	b.insert(b.end(), p, p + sizeof(v));
}

} /* namespace */

std::vector<uint8_t> fsmb_encode(const Fsmb &f)
{
	std::vector<uint8_t> b;
	struct fsmb_header h;
	std::memset(&h, 0, sizeof(h));
	h.magic = FSMB_MAGIC;
	h.version = f.version ? f.version : FSMB_VERSION;
	h.nr_stacks = f.kstacks.size();
	h.header_size = sizeof(h);
	h.generation = f.generation;
	h.bits = f.bits;
	h.flags = f.flags;
	h.max_depth = f.max_depth ? f.max_depth : FSM_MAX_DEPTH;
	h.ref_symbol_addr = f.ref_symbol_addr;
	std::strncpy(h.instance, f.instance.c_str(), sizeof(h.instance) - 1);
	h.nr_ustacks = f.ustacks.size();
	h.ugeneration = f.ugeneration;
	h.ubits = f.ubits;
	h.umax_frames = f.umax_frames ? f.umax_frames : FSM_USTACK_MAX_RECORD_FRAMES;
	h.ustack_entry_size = sizeof(struct fsmb_uentry);
	put(b, h);
	for (const auto &k : f.kstacks) {
		struct fsmb_entry e = {k.stack_id, uint32_t(k.ips.size()), k.hits, 0};
		put(b, e);
		for (uint64_t ip : k.ips)
			put(b, ip);
	}
	for (const auto &u : f.ustacks) {
		struct fsmb_uentry e;
		std::memset(&e, 0, sizeof(e));
		e.ustack_id = u.ustack_id;
		e.nr = u.frames.size();
		e.hits = u.hits;
		e.flags = u.flags;
		e.stop = u.stop;
		e.mm = u.mm;
		put(b, e);
		for (const auto &fr : u.frames) {
			put(b, fr.first);
			put(b, fr.second);
		}
	}
	for (const auto &[id, ff] : f.files) {
		std::vector<uint8_t> bid;
		for (size_t i = 0; i + 1 < ff.build_id.size(); i += 2)
			bid.push_back(std::stoi(ff.build_id.substr(i, 2), nullptr, 16));
		size_t need = sizeof(struct fsmb_file) + ff.path.size() + 1 + bid.size();
		size_t size = (need + 7) & ~size_t(7);
		struct fsmb_file e = {id, uint32_t(size), uint16_t(ff.path.size() + 1),
				      uint8_t(bid.size()), 0};
		size_t start = b.size();
		put(b, e);
		b.insert(b.end(), ff.path.begin(), ff.path.end());
		b.push_back(0);
		b.insert(b.end(), bid.begin(), bid.end());
		b.resize(start + size, 0);
	}
	struct fsmb_file end = {0, sizeof(struct fsmb_file), 0, 0, 0};
	put(b, end);
	return b;
}

} /* namespace smr */
