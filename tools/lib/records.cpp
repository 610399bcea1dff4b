// SPDX-License-Identifier: GPL-2.0
/*
 * records.cpp - see records.h. Every __data_loc field is taken from
 * tep_get_field_raw() and its length checked against the record before
 * use: a corrupted record is reported, not read past its end.
 */
#include "records.h"
#include "abi.h"

#include <cstring>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

namespace smr {

namespace {

const char *const kNames[] = {
	nullptr, "stack_id", "stack_id_user", "stack_fallback", "stack_def",
	"stack_reset", "user_stack", "file_map",
};

tep_format_field *find(FieldCache *fc, tep_event *ev, const char *name)
{
	if (!fc)
		return tep_find_field(ev, name);
	auto key = std::make_pair(static_cast<const void *>(ev), name);
	auto it = fc->fields.find(key);
	if (it != fc->fields.end())
		return static_cast<tep_format_field *>(it->second);
	tep_format_field *f = tep_find_field(ev, name);
	fc->fields.emplace(key, f);
	return f;
}

bool num(FieldCache *fc, tep_event *ev, tep_record *r, const char *name, uint64_t *v)
{
	tep_format_field *f = find(fc, ev, name);
	unsigned long long x;
	/* the field must lie inside the record before it is read */
	if (!f || f->offset < 0 || f->size <= 0 || f->offset + f->size > r->size ||
	    tep_read_number_field(f, r->data, &x))
		return false;
	*v = x;
	return true;
}

/* a dynamic array: pointer and length in bytes, inside the record */
bool dyn(FieldCache *fc, tep_event *ev, tep_record *r, const char *name,
	 const uint8_t **p, size_t *len)
{
	tep_format_field *f = find(fc, ev, name);
	if (!f || !(f->flags & TEP_FIELD_IS_DYNAMIC) || f->offset < 0 ||
	    f->size <= 0 || f->offset + f->size > r->size)
		return false;
	/* for error messages only: one per thread, not one per field */
	struct Seq {
		trace_seq s;
		Seq() { trace_seq_init(&s); }
		~Seq() { trace_seq_destroy(&s); }
	};
	static thread_local Seq seq;
	trace_seq_reset(&seq.s);
	int l = 0;
	void *d = tep_get_field_raw(&seq.s, ev, name, r, &l, 0);
	if (!d || l < 0)
		return false;
	const uint8_t *b = static_cast<const uint8_t *>(r->data);
	const uint8_t *q = static_cast<const uint8_t *>(d);
	if (q < b || q > b + r->size || size_t(l) > size_t(b + r->size - q))
		return false;
	*p = q;
	*len = size_t(l);
	return true;
}

bool u64s(FieldCache *fc, tep_event *ev, tep_record *r, const char *name,
	  std::vector<uint64_t> *out)
{
	const uint8_t *p;
	size_t len;
	if (!dyn(fc, ev, r, name, &p, &len) || len % 8)
		return false;
	out->resize(len / 8);
	if (len)
		std::memcpy(out->data(), p, len);
	return true;
}

void decode(Rec &x, tep_record *r)
{
	tep_event *ev = x.event;
	uint64_t v = 0;
	auto need = [&](const char *name, uint64_t *dst) {
		if (!num(x.fields, ev, r, name, dst)) {
			x.bad = true;
			x.bad_why = std::string("field ") + name;
		}
	};
	need("stack_id", &v);
	x.stack_id = uint32_t(v);
	switch (x.kind) {
	case Kind::STACK_ID:
		break;
	case Kind::STACK_ID_USER: {
		uint64_t lo = 0, hi = 0;
		need("cookie_lo", &lo);
		need("cookie_hi", &hi);
		x.cookie = (hi << 32) | (lo & 0xffffffffu);
		break;
	}
	case Kind::FALLBACK: {
		need("flags", &v);
		x.flags = uint32_t(v);
		need("reason", &v);
		x.reason = uint32_t(v);
		std::vector<uint64_t> c;
		if (!u64s(x.fields, ev, r, "cookie", &c) || c.size() > 1 ||
		    !u64s(x.fields, ev, r, "ips", &x.ips)) {
			x.bad = true;
			x.bad_why = "stack_fallback arrays";
		}
		x.cookie = c.empty() ? 0 : c[0];
		break;
	}
	case Kind::DEF:
		need("flags", &v);
		x.flags = uint32_t(v);
		if (!u64s(x.fields, ev, r, "ips", &x.ips) || x.ips.empty()) {
			x.bad = true;
			x.bad_why = "stack_def ips";
		}
		break;
	case Kind::RESET:
		need("generation", &v);
		x.generation = uint32_t(v);
		break;
	default:
		break;
	}
}

void decode_user(Rec &x, tep_record *r)
{
	tep_event *ev = x.event;
	uint64_t v = 0;
	auto need = [&](const char *name) {
		if (!num(x.fields, ev, r, name, &v)) {
			x.bad = true;
			x.bad_why = std::string("field ") + name;
			return uint64_t(0);
		}
		return v;
	};
	if (x.kind == Kind::USER_STACK) {
		UserStackRec &u = x.user;
		u.cookie = need("cookie");
		u.ustack_id = uint32_t(need("ustack_id"));
		u.gen = uint32_t(need("gen"));
		u.flags = uint16_t(need("flags"));
		u.reason = uint8_t(need("reason"));
		u.id_reason = uint8_t(need("id_reason"));
		uint64_t nr = need("nr");
		std::vector<uint64_t> w;
		if (!u64s(x.fields, ev, r, "frames", &w) || w.size() != 2 * nr) {
			x.bad = true;
			x.bad_why = "user_stack frames";
			return;
		}
		for (size_t i = 0; i + 1 < w.size(); i += 2)
			u.frames.emplace_back(w[i], w[i + 1]);
		return;
	}
	/* file_map */
	x.file_id = need("file_id");
	const uint8_t *p;
	size_t len;
	if (!dyn(x.fields, ev, r, "path", &p, &len) || len == 0) {
		x.bad = true;
		x.bad_why = "file_map path";
		return;
	}
	x.path.assign(reinterpret_cast<const char *>(p), strnlen(reinterpret_cast<const char *>(p), len));
	if (!dyn(x.fields, ev, r, "build_id", &p, &len) || len > 64) {
		x.bad = true;
		x.bad_why = "file_map build_id";
		return;
	}
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		x.build_id += digits[p[i] >> 4];
		x.build_id += digits[p[i] & 15];
	}
}

} /* namespace */

const char *kind_name(Kind k)
{
	int i = int(k);
	return i > 0 && i < 8 ? kNames[i] : nullptr;
}

Kind kind_of(const tep_event *ev)
{
	if (!ev || !ev->system || !ev->name || strcmp(ev->system, "stackmap"))
		return Kind::OTHER;
	for (int k = 1; k < 8; k++)
		if (!strcmp(ev->name, kNames[k]))
			return Kind(k);
	return Kind::OTHER;
}

void decode_stackmap(Rec &x, tep_record *r)
{
	if (x.kind == Kind::USER_STACK || x.kind == Kind::FILE_MAP)
		decode_user(x, r);
	else if (x.kind != Kind::OTHER)
		decode(x, r);
}

} /* namespace smr */
