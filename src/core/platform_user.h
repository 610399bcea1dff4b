/* SPDX-License-Identifier: GPL-2.0 */
/*
 * platform_user.h - the user-space side of platform.h (FSM_KERNEL undefined).
 *
 * Included only through platform.h. The fsm_plat_* hooks are implemented
 * by selftests/core/platform_user.cpp (libc based, outside src/core so that
 * no user-space code can reach the kernel build).
 *
 * FSM_ASSERT always checks: a broken invariant traps, and the test runner
 * reports the crashed test.
 */
#ifndef FSM_PLATFORM_USER_H
#define FSM_PLATFORM_USER_H

#define FSM_ASSERT(cond)	do { if (__builtin_expect(!(cond), 0)) __builtin_trap(); } while (0)

#endif /* FSM_PLATFORM_USER_H */
