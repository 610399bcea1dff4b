/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test_platform.h - controls of the user-space fsm_plat_* implementation
 * (platform_user.cpp), for tests that need a given CPU count, a given CPU
 * number or an allocation failure.
 */
#ifndef FSM_TEST_PLATFORM_H
#define FSM_TEST_PLATFORM_H

/* fsm_plat_nr_cpus() returns @n from now on (0 = the real count). */
void test_platform_set_nr_cpus(unsigned int n);
/* fsm_plat_cpu() in the calling thread returns @cpu (-1 = the real CPU). */
void test_platform_set_thread_cpu(int cpu);
/* The next fsm_plat_alloc() call fails. */
void test_platform_fail_next_alloc();
/* Number of fsm_plat_yield() calls so far (all threads). */
unsigned long long test_platform_yields();
/*
 * fsm_plat_yield() calls @fn(@arg) from now on, in the yielding thread
 * (NULL = none). Lets a test act at the points where a reset lets others
 * run, e.g. insert while a reset is in progress.
 */
void test_platform_set_yield_hook(void (*fn)(void *), void *arg);

#endif /* FSM_TEST_PLATFORM_H */
