# SPDX-License-Identifier: GPL-2.0
#
# ftrace_stackmap top-level Makefile.
#
#   make                 build ./ftrace_stackmap.ko against KDIR
#   make KERNEL=debug    build against our debug kernel (scripts/kdir debug)
#   make ARCH=arm64      cross-build against Debian's arm64 kernel (scripts/kdir arm64)
#   make KERNEL=trixie   Debian 13's 6.12 (also trixie-arm64, trixie-debug): built
#                        inside the trixie root (scripts/trixie-root)
#   make KERNEL=backports  trixie-backports' newest kernel (7.x today; also
#                        backports-arm64), in scripts/trixie-root --suite backports;
#                        KERNEL=backports-debug: our debug build of it
#   make check           every test (README "Tests"); ends "N passed, N failed"
#   make demo            the module working in a QEMU guest (README "Demo")
#   make bench           benchmarks, name=value lines
#   make tools           user-space tools (tools/) into build/tools/
#   make install         module, tools, docs (DESTDIR=, PREFIX=/usr/local, KVER=)
#   make uninstall       remove what make install put there
#   make deb             Debian packages (dkms + tools) into build/deb/
#   make clean
#
# KDIR defaults to the running kernel's build dir when it exists, otherwise
# to the Debian headers that scripts/ installs for the guest kernel.

CURDIR_ABS := $(abspath $(CURDIR))

# KERNEL=trixie|trixie-arm64|trixie-debug: Debian 13's 6.12 kernels, whose
# kbuild tools need trixie's glibc and whose compiler is gcc-14: the
# recipes below run inside the trixie root (scripts/trixie-root --run: the
# checkout and the cache at their own paths). trixie-arm64 cross-builds
# with Debian 13's cross gcc-14. KERNEL=backports-debug (our debug build
# of the backports kernel's source) is built in that root too, as its
# kernel was (scripts/kernel-debug --suite backports).
ifneq ($(filter trixie trixie-arm64 trixie-debug backports-debug,$(KERNEL)),)
  ifeq ($(FSM_IN_TRIXIE_ROOT),)
    FSM_INROOT = $(CURDIR_ABS)/scripts/trixie-root --run -- env
  endif
  ifeq ($(KERNEL),trixie-arm64)
    ARCH ?= arm64
    export ARCH
    FSM_CC ?= aarch64-linux-gnu-gcc-14
  endif
endif
# KERNEL=backports|backports-arm64: the newest kernel of trixie-backports,
# built in its root (the trixie root while Debian builds it with trixie's
# gcc: scripts/trixie-root --help); the arm64 cross gcc is the gcc-N its
# headers name, resolved from the archive.
ifneq ($(filter backports backports-arm64,$(KERNEL)),)
  ifeq ($(FSM_IN_TRIXIE_ROOT),)
    FSM_INROOT = $(CURDIR_ABS)/scripts/trixie-root --suite backports --run -- env
  endif
  ifeq ($(KERNEL),backports-arm64)
    ARCH ?= arm64
    export ARCH
    ifeq ($(origin FSM_CC),undefined)
      FSM_CC := aarch64-linux-gnu-$(shell $(CURDIR_ABS)/scripts/kernel-backports --print-gcc)
    endif
  endif
endif

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
# scripts/kernel-layouts compiles against KDIR with the same compiler
ifneq ($(FSM_CC),)
  export FSM_CC
endif

# scripts/kdir may fetch a kernel, and says so when its headers are
# missing: it runs when a target first uses KDIR (then the result is kept),
# not when make reads this file, so that `make check` and `make demo` on a
# fresh machine install the packages before anything looks for headers.
fsm_kdir = $(eval KDIR := $(shell $(CURDIR_ABS)/scripts/kdir $(1)))$(KDIR)
ifeq ($(origin KDIR),undefined)
  ifneq ($(KVER),)
    KDIR := /lib/modules/$(KVER)/build
  else ifneq ($(KERNEL),)
    KDIR = $(call fsm_kdir,$(KERNEL))
  else ifneq ($(wildcard /lib/modules/$(shell uname -r)/build/Makefile),)
    KDIR := /lib/modules/$(shell uname -r)/build
  else
    KDIR = $(call fsm_kdir,stock)
  endif
endif

# Every object, C and C++, goes through the strict objtool wrapper.
FSM_KBUILD_ARGS = -C $(KDIR) M=$(CURDIR_ABS) \
	objtool=$(CURDIR_ABS)/scripts/objtool-strict \
	FSM_REAL_OBJTOOL=$(KDIR)/tools/objtool/objtool \
	$(if $(FSM_CC),CC=$(FSM_CC))

.PHONY: all modules clean check demo bench help tools install uninstall \
	install-module install-tools install-docs dkms-source deb

all: modules

# The kbuild arguments of a cross build, for the compile probes too.
FSM_PROBE_ARGS = $(if $(ARCH),ARCH=$(ARCH)) \
	$(if $(CROSS_COMPILE),CROSS_COMPILE=$(CROSS_COMPILE)) \
	$(if $(FSM_CC),CC=$(FSM_CC))

modules:
	@test -n "$(KDIR)" -a -f "$(KDIR)/Makefile" || \
		{ echo "error: no kernel build dir (KDIR=$(KDIR)); run scripts/deps or pass KDIR=" >&2; exit 1; }
	@$(FSM_INROOT) $(CURDIR_ABS)/scripts/kernel-layouts $(KDIR) $(CURDIR_ABS)/src/kernel/generated/fsm_kernel_layouts.h
	@$(FSM_INROOT) $(CURDIR_ABS)/scripts/kernel-probes $(KDIR) $(CURDIR_ABS)/src/kernel/generated $(FSM_PROBE_ARGS)
	$(FSM_INROOT) FSM_REAL_OBJTOOL=$(KDIR)/tools/objtool/objtool $(MAKE) $(FSM_KBUILD_ARGS) modules
	@$(FSM_INROOT) $(CURDIR_ABS)/scripts/check-ko ftrace_stackmap.ko

clean:
	@if [ -n "$(KDIR)" ] && [ -f "$(KDIR)/Makefile" ]; then \
		$(FSM_INROOT) $(MAKE) -C $(KDIR) M=$(CURDIR_ABS) clean; fi
	rm -rf build src/kernel/generated

# User-space tools: the CMake project tools/ (lib/, report/, ctl/, plugin/,
# man/), outputs in build/tools/. Another tool is one more subdirectory
# there. A build/tools configured from another source directory (the
# project was tools/stackmap-report before) is started afresh: cmake
# refuses a cache made for another source.
tools:
	@if [ -f $(CURDIR_ABS)/build/tools/CMakeCache.txt ] && \
	    ! grep -qx 'CMAKE_HOME_DIRECTORY:INTERNAL=$(CURDIR_ABS)/tools' \
		$(CURDIR_ABS)/build/tools/CMakeCache.txt; then \
		echo "build/tools: configured from another source directory, starting afresh"; \
		rm -rf $(CURDIR_ABS)/build/tools; fi
	cmake -S $(CURDIR_ABS)/tools -B $(CURDIR_ABS)/build/tools \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(CURDIR_ABS)/build/tools -j $(shell nproc)

# make install [DESTDIR=D] [PREFIX=/usr/local] [KVER=release | KDIR=dir]:
# the module into D/lib/modules/KVER/updates (KVER: the release of KDIR,
# i.e. `uname -r` on a machine with its own headers), then depmod (-b D
# with DESTDIR), so `modprobe ftrace_stackmap bits=N` works; whatever the
# tools project installs (cmake --install: stackmap-report, stackmap-ctl,
# the plugin, the man pages into PREFIX/share/man/man1); the docs into
# PREFIX/share/doc/ftrace_stackmap.
PREFIX ?= /usr/local
# the release the module is built for: UTS_RELEASE of KDIR, as vermagic
# (Debian's headers have 6.1.192 in include/config/kernel.release)
KVER_BUILT = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
MODDIR = $(DESTDIR)/lib/modules/$(or $(KVER),$(KVER_BUILT))/updates
DOCDIR = $(DESTDIR)$(PREFIX)/share/doc/ftrace_stackmap
# dkms.conf's PACKAGE_VERSION
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR_ABS)/dkms.conf)

install: install-module install-tools install-docs

install-module: modules
	@test -n "$(or $(KVER),$(KVER_BUILT))" || \
		{ echo "error: no UTS_RELEASE in $(KDIR)/include/generated/utsrelease.h (pass KVER=)" >&2; exit 1; }
	install -D -m 644 ftrace_stackmap.ko $(MODDIR)/ftrace_stackmap.ko
	depmod $(if $(DESTDIR),-b $(DESTDIR)) $(or $(KVER),$(KVER_BUILT))

install-tools: tools
	DESTDIR=$(DESTDIR) cmake --install $(CURDIR_ABS)/build/tools --prefix $(PREFIX)

install-docs:
	install -d $(DOCDIR)
	install -m 644 $(CURDIR_ABS)/README.md $(CURDIR_ABS)/Documentation/*.rst $(DOCDIR)/

uninstall:
	rm -f $(MODDIR)/ftrace_stackmap.ko
	-depmod $(if $(DESTDIR),-b $(DESTDIR)) $(or $(KVER),$(KVER_BUILT))
	rm -f $(DESTDIR)$(PREFIX)/bin/stackmap-report $(DESTDIR)$(PREFIX)/bin/stackmap-ctl
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/stackmap-report.1 \
		$(DESTDIR)$(PREFIX)/share/man/man1/stackmap-ctl.1
	@# what the last cmake --install put there (its paths include DESTDIR)
	@if [ -f $(CURDIR_ABS)/build/tools/install_manifest.txt ]; then \
		grep '^$(DESTDIR)$(PREFIX)/' $(CURDIR_ABS)/build/tools/install_manifest.txt | \
		xargs -r rm -f; fi
	rm -rf $(DOCDIR)

# The sources dkms builds from (dkms add -m ftrace_stackmap -v VERSION
# looks in /usr/src/ftrace_stackmap-VERSION): make dkms-source [DESTDIR=D]
DKMS_SRC = $(DESTDIR)/usr/src/ftrace_stackmap-$(DKMS_VERSION)
# what `make KDIR=... modules` runs: the Kbuild gates and the C++ rule, the
# layouts reader and its list, the objtool wrapper, the .ko check (not the
# QEMU and test scripts)
DKMS_SCRIPTS = scripts/kbuild scripts/cxx-gate scripts/objtool-strict scripts/check-ko \
	scripts/kernel-layouts scripts/kernel-layouts.list scripts/kernel-probes
dkms-source:
	install -d $(DKMS_SRC)
	tar -C $(CURDIR_ABS) --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='modules.order' \
		--exclude='Module.symvers' --exclude='src/kernel/generated' \
		-cf - dkms.conf Makefile Kbuild LICENSE src include $(DKMS_SCRIPTS) | \
		tar -C $(DKMS_SRC) -xf -

# Debian packages ftrace-stackmap-dkms and ftrace-stackmap-tools (dh,
# packaging in scripts/debian/, version from dkms.conf) into build/deb/:
# scripts/build-deb; Documentation/build.rst "Debian packages".
deb:
	@$(CURDIR_ABS)/scripts/build-deb

check:
	@$(CURDIR_ABS)/scripts/check

demo:
	@$(CURDIR_ABS)/scripts/demo

bench:
	@$(CURDIR_ABS)/scripts/bench

help:
	@sed -n '3,18p' Makefile
