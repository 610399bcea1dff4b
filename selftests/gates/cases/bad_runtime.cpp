// 128-bit division calls __udivti3 from libgcc, which no module has; a pure
// virtual function references __cxa_pure_virtual from the C++ runtime.
struct Base {
	virtual int f() = 0;
};

/* declared first: 6.12 builds with -Wmissing-declarations */
extern "C" unsigned long long fsm_gate_entry(unsigned __int128 a,
					     unsigned long long b);
extern "C" unsigned long long fsm_gate_entry(unsigned __int128 a,
					     unsigned long long b)
{
	return (unsigned long long)(a / b);
}

struct Derived : Base {
	int f() override { return 1; }
};

extern "C" int fsm_gate_virt(Base *p);
extern "C" int fsm_gate_virt(Base *p)
{
	return p->f();
}

inline void *operator new(unsigned long, void *p) noexcept
{
	return p;
}

extern "C" Base *fsm_gate_make(void *mem);
extern "C" Base *fsm_gate_make(void *mem)
{
	return new (mem) Derived;
}
