// SPDX-License-Identifier: GPL-2.0
//
// call_through.cpp - a C++ call chain for the kernel's load-time check that
// its unwinder walks through C++ frames.
//
// fsm_core_call_through(probe, arg) descends through kDepth distinct,
// non-inlined template instances and calls probe(arg) from the innermost
// one. The glue takes a kernel stack trace inside probe and checks that it
// names these frames (mangled: fsm::Descend<N>::run) and continues past them
// into the C caller: that only works when objtool generated ORC data for
// this object. Each frame does work after its call so none is a tail call.

#include "fsm_core.h"

namespace fsm {
namespace {

using Probe = void (*)(void *);

template <int N>
struct Descend {
	[[gnu::noinline]] static int run(Probe probe, void *arg)
	{
		int depth = Descend<N - 1>::run(probe, arg);
		asm volatile("" : "+r"(depth) : : "memory");
		return depth + 1;
	}
};

template <>
struct Descend<0> {
	[[gnu::noinline]] static int run(Probe probe, void *arg)
	{
		probe(arg);
		int depth = 0;
		asm volatile("" : "+r"(depth) : : "memory");
		return depth;
	}
};

constexpr int kDepth = 3;

} // namespace
} // namespace fsm

extern "C" int fsm_core_call_through(void (*probe)(void *), void *arg)
{
	return fsm::Descend<fsm::kDepth>::run(probe, arg) == fsm::kDepth ? 0 : -1;
}
