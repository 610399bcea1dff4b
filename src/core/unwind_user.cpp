// SPDX-License-Identifier: GPL-2.0
/*
 * unwind_user.cpp - C entry points of the user-stack walker.
 *
 * The walk itself is the template fsm::unwind::walk() in unwind_user.h; this
 * file instantiates it once for the C read callback and holds the name
 * tables. Part of the core unity file in the kernel build.
 */
#include "unwind_user.h"

namespace fsm::unwind {

/*
 * Indexed by enum fsm_uw_stop; the static_assert ties the two together.
 * constexpr without inline: internal linkage, no COMDAT group (see
 * unwind_user.h).
 */
constexpr const char *kStopNames[] = {
	"end",			/* FSM_UW_STOP_END */
	"zero_fp",		/* FSM_UW_STOP_ZERO_FP */
	"first_fault",		/* FSM_UW_STOP_FIRST_FAULT */
	"fault",		/* FSM_UW_STOP_FAULT */
	"misaligned",		/* FSM_UW_STOP_MISALIGNED */
	"not_increasing",	/* FSM_UW_STOP_NOT_INCREASING */
	"depth",		/* FSM_UW_STOP_DEPTH */
	"aborted",		/* FSM_UW_STOP_ABORTED */
	"invalid",		/* FSM_UW_STOP_INVALID */
	"no_call",		/* FSM_UW_STOP_NO_CALL */
};
static_assert(sizeof(kStopNames) / sizeof(kStopNames[0]) == FSM_UW_NR_STOPS,
	      "kStopNames must name every enum fsm_uw_stop");

/* Indexed by enum fsm_uw_mode. */
constexpr const char *kModeNames[] = {
	"none",			/* FSM_UW_MODE_NONE */
	"x86_64",		/* FSM_UW_MODE_X86_64 */
	"ia32",			/* FSM_UW_MODE_IA32 */
	"arm64",		/* FSM_UW_MODE_ARM64 */
	"a32_gcc",		/* FSM_UW_MODE_A32_GCC */
	"a32_frame_record",	/* FSM_UW_MODE_A32_FRAME_RECORD */
	"a32",			/* FSM_UW_MODE_A32 */
};
static_assert(sizeof(kModeNames) / sizeof(kModeNames[0]) == FSM_UW_NR_MODES,
	      "kModeNames must name every enum fsm_uw_mode");

} /* namespace fsm::unwind */

extern "C" unsigned int fsm_uw_walk(const struct fsm_uw_regs *regs,
				    fsm_uw_read_fn read, fsm_uw_read_fn read_code,
				    void *ctx, unsigned long long *entries,
				    unsigned int max, struct fsm_uw_result *res)
{
	using namespace fsm::unwind;

	if (!res)
		return 0;
	if (!regs || !read) {
		res->nr = 0;
		res->flags = 0;
		res->mode = regs ? regs->mode : (unsigned int)FSM_UW_MODE_NONE;
		res->stop = FSM_UW_STOP_INVALID;
		return 0;
	}
	return walk(*regs, CReader{ read, ctx }, CReader{ read_code, ctx }, entries, max,
		    *res);
}

extern "C" const char *fsm_uw_stop_name(unsigned int stop)
{
	return stop < FSM_UW_NR_STOPS ? fsm::unwind::kStopNames[stop] : "unknown";
}

extern "C" const char *fsm_uw_mode_name(unsigned int mode)
{
	return mode < FSM_UW_NR_MODES ? fsm::unwind::kModeNames[mode] : "unknown";
}
