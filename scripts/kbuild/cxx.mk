# SPDX-License-Identifier: GPL-2.0
#
# C++ objects inside a kbuild module.
#
# Included from a Kbuild file. Adds a rule that builds $(obj)/%.o from
# $(src)/%.cpp through kbuild's own machinery: if_changed_rule + fixdep (.cmd
# files, incremental builds, modpost) and the kernel's own objtool command
# ($(cmd_objtool), the same one C objects get).
#
# Flags are the kernel's C flags for this object ($(_c_flags), which carries
# the config's -m/-f options, KASAN/UBSAN/KCOV instrumentation, ftrace
# options...) minus the options that only mean something for C, plus the C++
# subset: no exceptions, no RTTI, no thread-safe statics, no atexit, no unwind
# tables, no C++ standard library. No kernel include path and no forced
# compiler_types.h: C++ never includes kernel headers; it talks to the C glue
# through extern "C" headers of our own.
#
# Gates (each fails the build, see scripts/cxx-gate):
#  - the object has .init_array .ctors .fini_array .dtors .eh_frame
#    .gcc_except_table (the module loader ignores constructors; no unwinder);
#  - the object needs C++ runtime or libgcc symbols (__cxa_*, __gxx_*,
#    _Unwind_*, operator new/delete, __udivti3, __atomic_* calls ...);
#  - objtool printed anything (a warning means missing ORC data or unpatched
#    return thunks). The objtool gate for C objects is the wrapper
#    scripts/objtool-strict that the top Makefile passes as objtool=.

# The g++ of the GCC that built the kernel: CC is gcc or gcc-NN.
FSM_CXX ?= $(subst gcc,g++,$(CC))

# Options accepted by gcc for C only (g++ warns about or rejects them).
fsm-c-only-flags := -std=gnu11 -std=gnu89 -std=gnu99 \
	-Werror=strict-prototypes -Wstrict-prototypes \
	-Werror=implicit-function-declaration -Werror=implicit-int \
	-Werror=incompatible-pointer-types -Werror=designated-init \
	-Wno-pointer-sign -Wdeclaration-after-statement \
	-Wmissing-prototypes -Wold-style-definition -Wnested-externs \
	-Wno-old-style-declaration -Werror=return-type \
	-Wmissing-include-dirs -Wno-main \
	-Werror=date-time -Wimplicit-fallthrough=5 \
	-Wno-stringop-overflow -Wno-array-bounds -Wno-override-init

fsm-cxx-subset := -std=gnu++20 -ffreestanding -fno-exceptions -fno-rtti \
	-fno-threadsafe-statics -fno-use-cxa-atexit -fno-unwind-tables \
	-fno-asynchronous-unwind-tables -nostdinc -nostdinc++ \
	-fno-common -Wall -Wextra -Wno-unused-parameter -Werror \
	-Wno-missing-field-initializers -Wno-invalid-offsetof

# Module BTF. Where kbuild encodes BTF for modules (CONFIG_DEBUG_INFO_BTF_MODULES
# and a vmlinux in the kernel's build dir: Debian 13's headers ship one, 12's
# do not), Makefile.modfinal runs pahole on the linked .ko, and pahole (1.30)
# cannot encode C++ DWARF ("Unsupported DW_TAG_reference_type"): the command
# fails and make deletes the .ko. So there the C++ object is compiled without
# DWARF (-g0, last on the line): the module's BTF describes the C glue (our
# trace events, the types BPF programs see), the core has no debug info; ORC
# data (objtool) and kallsyms do not depend on DWARF. pahole's
# --lang_exclude would keep the DWARF, but how kbuild passes pahole flags
# differs between kernel lines (MODULE_PAHOLE_FLAGS in 6.12,
# scripts/gen-btf.sh in 7.x) and the language name follows -std=.
ifdef CONFIG_DEBUG_INFO_BTF_MODULES
ifneq ($(wildcard $(objtree)/vmlinux),)
fsm-cxx-btf := -g0
# said once: Makefile.modpost reads this file too
ifneq ($(.DEFAULT_GOAL),__modpost)
$(info module BTF: C glue only; the C++ core is built without DWARF (-g0): pahole cannot encode C++ types and kbuild would delete the .ko)
endif
endif
endif

cxx_flags = -Wp,-MMD,$(depfile) \
	$(filter-out $(fsm-c-only-flags) -I% -include %.h, $(_c_flags)) \
	$(modkern_cflags) $(basename_flags) $(modname_flags) \
	$(fsm-cxx-subset) $(FSM_CXX_INCLUDES) -DFSM_KERNEL $(fsm-cxx-btf)

quiet_cmd_cxx_o_cpp = CXX $(quiet_modtag) $@
      cmd_cxx_o_cpp = $(FSM_CXX) $(cxx_flags) -c -o $@ $< \
		$(cmd_objtool) \
		; $(CONFIG_SHELL) $(FSM_GATE) $@ "$(OBJDUMP)" "$(NM)"

define rule_cxx_o_cpp
	$(call cmd_and_fixdep,cxx_o_cpp)
	$(call cmd,gen_objtooldep)
	$(call cmd,record_mcount)
endef

$(obj)/%.o: $(src)/%.cpp FORCE
	$(call if_changed_rule,cxx_o_cpp)
