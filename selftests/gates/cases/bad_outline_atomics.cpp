// arm64 only. GCC for aarch64-linux defaults to -moutline-atomics: an
// __atomic builtin becomes a call to a libgcc helper (here
// __aarch64_ldadd8_acq_rel), which no kernel exports. The core avoids it
// with a pragma in platform_kernel.h; this file does not include it.
/* declared first: 6.12 builds with -Wmissing-declarations */
extern "C" unsigned long fsm_gate_entry(unsigned long *p);
extern "C" unsigned long fsm_gate_entry(unsigned long *p)
{
	return __atomic_fetch_add(p, 1, __ATOMIC_ACQ_REL);
}
