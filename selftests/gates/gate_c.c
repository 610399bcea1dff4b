// SPDX-License-Identifier: GPL-2.0
/* C half of the gate test modules: what the C++ cases call. */
#include <linux/module.h>

int fsm_gate_value(void);
void fsm_gate_die(void);

int fsm_gate_value(void)
{
	return 1;
}

/* Deliberately returns: only its C++ declaration claims [[noreturn]]. */
void fsm_gate_die(void)
{
}

MODULE_LICENSE("GPL");
