// SPDX-License-Identifier: GPL-2.0
/*
 * core_unity.cpp - the whole C++ core as one translation unit.
 *
 * The kernel module links exactly one C++ object: two C++ objects sharing
 * inline or template code would carry COMDAT groups that the module's
 * partial link discards (see platform-facts §2). Every core .cpp is
 * included here; the user-space builds compile this same file.
 */
#include "stackmap.cpp"
#include "fsm_api.cpp"
#include "selfcheck.cpp"
#include "call_through.cpp"
#include "unwind_user.cpp"
#include "unwind_cache.cpp"
#include "buildid.cpp"
