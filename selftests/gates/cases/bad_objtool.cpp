// A C function declared [[noreturn]] from C++: GCC emits nothing after the
// call, objtool sees the function fall through into the next one and warns
// (missing ORC coverage). The warning must fail the build.
extern "C" [[noreturn]] void fsm_gate_die(void);

/* declared first: 6.12 builds with -Wmissing-declarations */
extern "C" int fsm_gate_entry(int x);
extern "C" int fsm_gate_entry(int x)
{
	if (x)
		fsm_gate_die();
	return 0;
}

extern "C" void fsm_gate_next(void);
extern "C" void fsm_gate_next(void)
{
	fsm_gate_die();
}
