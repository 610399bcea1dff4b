// Unwind data the kernel cannot use: -fno-asynchronous-unwind-tables wins
// over any pragma, so this case emits the section the way inline assembly or
// a foreign header could. The gate looks at the object, not at the cause.
asm(".pushsection .eh_frame,\"a\"\n"
    ".long 0\n"
    ".popsection\n");

/* declared first: 6.12 builds with -Wmissing-declarations */
extern "C" int fsm_gate_entry(int x);
extern "C" int fsm_gate_entry(int x)
{
	return x * 3;
}
