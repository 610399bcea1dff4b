// SPDX-License-Identifier: GPL-2.0
/*
 * has_capability_noaudit() is still declared in 7.x but no longer
 * exported. fsm_compat_show_kaddr()'s stand-in (when kallsyms_show_value()
 * cannot be resolved) asks whether the opener has CAP_SYSLOG, without an
 * audit record.
 * yes: the stand-in asks has_capability_noaudit(current, CAP_SYSLOG)
 * no:  the stand-in asks ns_capable_noaudit(&init_user_ns, CAP_SYSLOG) (the opener's own credentials)
 * exported: has_capability_noaudit
 */
#include <linux/capability.h>
#include <linux/sched.h>

static bool __used fsm_probe(void)
{
	return has_capability_noaudit(current, CAP_SYSLOG);
}
