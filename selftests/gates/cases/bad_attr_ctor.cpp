// A function marked as a constructor: it lands in .init_array like a
// sanitizer's, but it is ours, and the Debian kernel would never run it.
extern "C" int fsm_gate_value(void);

static int fsm_gate_state;

[[gnu::constructor]] static void fsm_gate_setup()
{
	fsm_gate_state = fsm_gate_value();
}

/* declared first: 6.12 builds with -Wmissing-declarations */
extern "C" int fsm_gate_entry(int x);
extern "C" int fsm_gate_entry(int x)
{
	return fsm_gate_state + x;
}
