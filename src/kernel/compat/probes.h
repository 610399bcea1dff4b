/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat/probes.h - the compile probes' answers (FSM_HAVE_<PROBE> 1 or 0),
 * written by scripts/kernel-probes before the build; included by the
 * compat headers that test them.
 */
#ifndef FSM_COMPAT_PROBES_H
#define FSM_COMPAT_PROBES_H

#if __has_include("generated/fsm_probes.h")
#include "generated/fsm_probes.h"
#else
#error "generated/fsm_probes.h is missing: build through the top Makefile (scripts/kernel-probes)"
#endif

#endif /* FSM_COMPAT_PROBES_H */
