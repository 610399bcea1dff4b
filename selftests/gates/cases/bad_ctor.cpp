// A global object with a non-trivial constructor: the compiler emits
// .init_array, which the module loader (CONFIG_CONSTRUCTORS=n) ignores.
extern "C" int fsm_gate_value(void);

struct Init {
	int v;
	Init() : v(fsm_gate_value()) {}
};

Init fsm_gate_global;

/* declared first: 6.12 builds with -Wmissing-declarations */
extern "C" int fsm_gate_entry(int x);
extern "C" int fsm_gate_entry(int x)
{
	return fsm_gate_global.v + x;
}
