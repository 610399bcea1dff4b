// Positive control: a template, a class, a local static with a trivial
// constructor. Must build and pass every gate.
namespace {
template <typename T> struct Box {
	T v;
	constexpr T get() const { return v; }
};
} // namespace

/* declared first: 6.12 builds with -Wmissing-declarations */
extern "C" int fsm_gate_entry(int x);
extern "C" int fsm_gate_entry(int x)
{
	static int calls;
	Box<int> b{x};
	return b.get() + ++calls;
}
