// A function template instance kept out of line with external linkage is
// a COMDAT group, which a module cannot have (scripts/cxx-gate says why).
template <typename T> __attribute__((noinline)) T twice(T v)
{
	return v + v;
}

/* declared first: 6.12 builds with -Wmissing-declarations */
extern "C" int fsm_gate_entry(int x);
extern "C" int fsm_gate_entry(int x)
{
	return twice(x) + twice(x + 1);
}
