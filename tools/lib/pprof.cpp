// SPDX-License-Identifier: GPL-2.0
/*
 * pprof.cpp - the profile.proto builder (pprof.h). Every index into the
 * string table goes through str(); every id is the 1-based position of
 * its message, as profile.proto requires (0 means "none").
 */
#include "pprof.h"

#include <zlib.h>

#include <climits>

namespace smr {

namespace {
constexpr uint64_t kKernelMapping = 1;
} /* namespace */

PprofBuilder::PprofBuilder()
{
	str("");	/* string_table[0] must be "" */
	auto *st = p_.add_sample_type();
	st->set_type(str("events"));
	st->set_unit(str("count"));
	auto *pt = p_.mutable_period_type();
	pt->set_type(str("events"));
	pt->set_unit(str("count"));
	p_.set_period(1);
	auto *m = p_.add_mapping();
	m->set_id(kKernelMapping);
	m->set_filename(str("[kernel]"));
	m->set_has_functions(true);
}

int64_t PprofBuilder::str(const std::string &s)
{
	auto it = strings_.find(s);
	if (it != strings_.end())
		return it->second;
	int64_t i = p_.string_table_size();
	p_.add_string_table(s);
	strings_.emplace(s, i);
	return i;
}

uint64_t PprofBuilder::function(const std::string &name, const std::string &file)
{
	auto key = std::make_pair(name, file);
	auto it = funcs_.find(key);
	if (it != funcs_.end())
		return it->second;
	auto *f = p_.add_function();
	uint64_t id = uint64_t(p_.function_size());
	f->set_id(id);
	f->set_name(str(name));
	f->set_system_name(str(name));
	if (!file.empty())
		f->set_filename(str(file));
	funcs_.emplace(key, id);
	return id;
}

uint64_t PprofBuilder::kernel_location(uint64_t ip, const std::string &func)
{
	auto it = kloc_.find({input_, ip});
	if (it != kloc_.end())
		return it->second;
	auto *l = p_.add_location();
	uint64_t id = uint64_t(p_.location_size());
	l->set_id(id);
	l->set_mapping_id(kKernelMapping);
	l->set_address(ip);
	l->add_line()->set_function_id(function(func, ""));
	kloc_.emplace(std::make_pair(input_, ip), id);
	return id;
}

uint64_t PprofBuilder::user_location(uint64_t file_id, const std::string &path,
				     const std::string &build_id, uint64_t offset,
				     const std::vector<SymFrame> &funcs,
				     const std::string &where)
{
	auto key = std::make_tuple(input_, file_id, offset);
	auto it = uloc_.find(key);
	if (it != uloc_.end())
		return it->second;
	uint64_t mid;
	auto mi = umap_.find({input_, file_id});
	if (mi == umap_.end()) {
		auto *m = p_.add_mapping();
		mid = uint64_t(p_.mapping_size());
		m->set_id(mid);
		m->set_filename(str(path));
		if (!build_id.empty())
			m->set_build_id(str(build_id));
		umap_.emplace(std::make_pair(input_, file_id), mid);
	} else {
		mid = mi->second;
	}
	auto *m = p_.mutable_mapping(int(mid - 1));
	auto *l = p_.add_location();
	uint64_t id = uint64_t(p_.location_size());
	l->set_id(id);
	l->set_mapping_id(mid);
	l->set_address(offset);
	if (funcs.empty())
		l->add_line()->set_function_id(function(where, ""));
	for (const auto &sf : funcs) {
		auto *ln = l->add_line();
		ln->set_function_id(function(sf.func.empty() ? where : sf.func, sf.file));
		m->set_has_functions(m->has_functions() || !sf.func.empty());
		if (!sf.file.empty()) {
			m->set_has_filenames(true);
			m->set_has_line_numbers(true);
			ln->set_line(sf.line);
		}
	}
	if (funcs.size() > 1)
		m->set_has_inline_frames(true);
	uloc_.emplace(key, id);
	return id;
}

uint64_t PprofBuilder::pseudo_location(const std::string &name)
{
	auto it = ploc_.find(name);
	if (it != ploc_.end())
		return it->second;
	auto *l = p_.add_location();
	uint64_t id = uint64_t(p_.location_size());
	l->set_id(id);
	l->add_line()->set_function_id(function(name, ""));
	ploc_.emplace(name, id);
	return id;
}

void PprofBuilder::add_sample(const std::vector<uint64_t> &locs, const Labels &lb)
{
	auto key = std::make_tuple(locs, lb.comm, lb.pid, lb.event, lb.instance, lb.host);
	auto it = samples_.find(key);
	if (it != samples_.end()) {
		auto *s = p_.mutable_sample(it->second);
		s->set_value(0, s->value(0) + 1);
		return;
	}
	auto *s = p_.add_sample();
	for (uint64_t id : locs)
		s->add_location_id(id);
	s->add_value(1);
	auto *l = s->add_label();
	l->set_key(str("comm"));
	l->set_str(str(lb.comm));
	l = s->add_label();
	l->set_key(str("pid"));
	l->set_num(lb.pid);
	l = s->add_label();
	l->set_key(str("event"));
	l->set_str(str(lb.event));
	if (!lb.instance.empty()) {
		l = s->add_label();
		l->set_key(str("instance"));
		l->set_str(str(lb.instance));
	}
	if (!lb.host.empty()) {
		l = s->add_label();
		l->set_key(str("host"));
		l->set_str(str(lb.host));
	}
	samples_.emplace(std::move(key), p_.sample_size() - 1);
}

void PprofBuilder::set_span(uint64_t first_ns, uint64_t last_ns)
{
	if (last_ns >= first_ns && last_ns - first_ns <= uint64_t(INT64_MAX))
		p_.set_duration_nanos(int64_t(last_ns - first_ns));
}

void PprofBuilder::add_comment(const std::string &text)
{
	p_.add_comment(str(text));
}

std::string PprofBuilder::gzipped(std::string *out) const
{
	std::string raw;
	if (!p_.SerializeToString(&raw))
		return "cannot serialize the profile (larger than 2 GiB?)";
	return gzip_bytes(raw, out);
}

std::string gzip_bytes(const std::string &data, std::string *out)
{
	z_stream z{};
	/* windowBits 15 + 16: a gzip header and trailer, not zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return "zlib: deflateInit2 failed";
	out->clear();
	z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
	size_t left = data.size();
	char buf[65536];
	int rc;
	do {
		uInt chunk = left > UINT_MAX ? UINT_MAX : uInt(left);
		z.avail_in = chunk;
		left -= chunk;
		int flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = reinterpret_cast<Bytef *>(buf);
			z.avail_out = sizeof(buf);
			rc = deflate(&z, flush);
			if (rc == Z_STREAM_ERROR) {
				deflateEnd(&z);
				return "zlib: deflate failed";
			}
			out->append(buf, sizeof(buf) - z.avail_out);
		} while (z.avail_out == 0);
	} while (left);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? "" : "zlib: deflate did not finish";
}

} /* namespace smr */
