# SPDX-License-Identifier: GPL-2.0
#
# ftrace_stackmap top-level Makefile.
#
#   make                 build ./ftrace_stackmap.ko against KDIR
#   make KERNEL=debug    build against our debug kernel (scripts/kdir debug)
#   make ARCH=arm64      cross-build against Debian's arm64 kernel (scripts/kdir arm64)
#   make check           every test (README "Tests"); ends "N passed, N failed"
#   make demo            the module working in a QEMU guest (README "Demo")
#   make bench           benchmarks, name=value lines
#   make tools           user-space tools (tools/stackmap-report) into build/tools/
#   make clean
#
# KDIR defaults to the running kernel's build dir when it exists, otherwise
# to the Debian headers that scripts/ installs for the guest kernel.

CURDIR_ABS := $(abspath $(CURDIR))

# ARCH=arm64: cross-build (Documentation/build.rst "arm64"). The kernel is
# Debian's arm64 kernel of the amd64 kernel's ABI unless KERNEL= or KDIR=
# says otherwise; the compiler is Debian's cross gcc of the same version.
ifeq ($(ARCH),arm64)
  KERNEL ?= arm64
  CROSS_COMPILE ?= aarch64-linux-gnu-
  export CROSS_COMPILE
  # Debian's cross gcc has only the versioned name (as Debian's kernel
  # headers expect: CC = $(CROSS_COMPILE)gcc-12); our arm64-debug tree needs
  # it spelled out.
  FSM_CC ?= $(CROSS_COMPILE)gcc-12
endif

ifeq ($(origin KDIR),undefined)
  ifneq ($(KERNEL),)
    KDIR := $(shell $(CURDIR_ABS)/scripts/kdir $(KERNEL))
  else ifneq ($(wildcard /lib/modules/$(shell uname -r)/build/Makefile),)
    KDIR := /lib/modules/$(shell uname -r)/build
  else
    KDIR := $(shell $(CURDIR_ABS)/scripts/kdir stock)
  endif
endif

# Every object, C and C++, goes through the strict objtool wrapper.
FSM_KBUILD_ARGS = -C $(KDIR) M=$(CURDIR_ABS) \
	objtool=$(CURDIR_ABS)/scripts/objtool-strict \
	FSM_REAL_OBJTOOL=$(KDIR)/tools/objtool/objtool \
	$(if $(FSM_CC),CC=$(FSM_CC))

.PHONY: all modules clean check demo bench help tools

all: modules

modules:
	@test -n "$(KDIR)" -a -f "$(KDIR)/Makefile" || \
		{ echo "error: no kernel build dir (KDIR=$(KDIR)); run scripts/deps or pass KDIR=" >&2; exit 1; }
	@$(CURDIR_ABS)/scripts/kernel-layouts $(KDIR) $(CURDIR_ABS)/src/kernel/generated/fsm_kernel_layouts.h
	FSM_REAL_OBJTOOL=$(KDIR)/tools/objtool/objtool $(MAKE) $(FSM_KBUILD_ARGS) modules
	@$(CURDIR_ABS)/scripts/check-ko ftrace_stackmap.ko

clean:
	@if [ -n "$(KDIR)" ] && [ -f "$(KDIR)/Makefile" ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR_ABS) clean; fi
	rm -rf build src/kernel/generated

# User-space tools: CMake projects under tools/, outputs in build/tools/.
# Another tool is one more -S/-B pair here.
tools:
	cmake -S $(CURDIR_ABS)/tools/stackmap-report -B $(CURDIR_ABS)/build/tools \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(CURDIR_ABS)/build/tools -j $(shell nproc)

check:
	@$(CURDIR_ABS)/scripts/check

demo:
	@$(CURDIR_ABS)/scripts/demo

bench:
	@$(CURDIR_ABS)/scripts/bench

help:
	@sed -n '3,15p' Makefile
