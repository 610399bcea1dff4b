#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/pkg/run.sh - TAP tests of the packaging (scripts/check stage
# pkg), against the stock Debian headers (scripts/kdir stock):
#  - make install DESTDIR=D lays out the module in lib/modules/KVER/updates
#    with depmod's output naming it, the tools (cmake --install of the
#    tools project), the docs; PREFIX= moves the tools and docs; KVER is
#    the release the module was built for (its vermagic); make uninstall
#    removes them
#  - dkms.conf: make dkms-source, then dkms add and dkms build -k KVER in
#    a private tree (--dkmstree/--sourcetree; signing off, so nothing is
#    written to /var/lib/dkms) build a .ko whose vermagic is the stock
#    kernel's own (a module of the Debian image)
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}
vermagic() { modinfo -F vermagic "$1" 2>/dev/null; }

kdir=$("$repo/scripts/kdir" stock) || { bad "scripts/kdir stock"; echo "1..$n"; exit 1; }
moddir=$("$repo/scripts/kernel-stock" --print-moddir)
kver=$(basename "$moddir")
ref=$(find "$moddir" -name '9p.ko*' | head -n 1)
want=$(vermagic "$ref")
check "the stock kernel's vermagic ($want)" test -n "$want"

D=$tmp/root
make -C "$repo" -s install DESTDIR="$D" KDIR="$kdir" >"$tmp/install.log" 2>&1
check "make install DESTDIR= KDIR=stock" test $? -eq 0 || sed 's/^/# /' "$tmp/install.log" | tail -20
ko=$D/lib/modules/$kver/updates/ftrace_stackmap.ko
check "module in lib/modules/$kver/updates" test -f "$ko"
check "  ... with the stock kernel's vermagic" test "$(vermagic "$ko")" = "$want"
check "depmod -b: modules.dep names updates/ftrace_stackmap.ko" \
	grep -q '^updates/ftrace_stackmap.ko:' "$D/lib/modules/$kver/modules.dep"
check "depmod -b: modules.dep.bin (modprobe's index)" test -s "$D/lib/modules/$kver/modules.dep.bin"
for t in stackmap-report stackmap-ctl; do
	check "$t in PREFIX/bin (default /usr/local)" test -x "$D/usr/local/bin/$t"
done
check "$D/usr/local/bin/stackmap-ctl runs" "$D/usr/local/bin/stackmap-ctl" --help
for d in README.md tracing.rst stackmap-ctl.rst stackmap-report.rst; do
	check "doc $d" test -f "$D/usr/local/share/doc/ftrace_stackmap/$d"
done
make -C "$repo" -s install-tools install-docs DESTDIR="$tmp/p" PREFIX=/opt/fsm >/dev/null 2>&1
check "PREFIX=/opt/fsm: tools" test -x "$tmp/p/opt/fsm/bin/stackmap-ctl"
check "PREFIX=/opt/fsm: docs" test -f "$tmp/p/opt/fsm/share/doc/ftrace_stackmap/tracing.rst"
make -C "$repo" -s uninstall DESTDIR="$D" KDIR="$kdir" >/dev/null 2>&1
check "make uninstall: module gone" test ! -e "$ko"
check "make uninstall: depmod forgot it" eval "! grep -q ftrace_stackmap '$D/lib/modules/$kver/modules.dep'"
check "make uninstall: tools gone" test ! -e "$D/usr/local/bin/stackmap-ctl"
check "make uninstall: docs gone" test ! -e "$D/usr/local/share/doc/ftrace_stackmap"

# dkms, in a private tree
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")
if command -v dkms >/dev/null; then
	make -C "$repo" -s dkms-source DESTDIR="$tmp/src" >/dev/null 2>&1
	S=$tmp/src/usr/src
	check "make dkms-source" test -f "$S/ftrace_stackmap-$ver/dkms.conf"
	mkdir -p "$tmp/dkms"
	dk=(dkms --dkmstree "$tmp/dkms" --sourcetree "$S")
	check "dkms add" eval '"${dk[@]}" add -m ftrace_stackmap -v "$ver" >"$tmp/dkms.log" 2>&1'
	# sign_file: the signing tool; a missing one turns signing off, so
	# dkms does not make a key in /var/lib/dkms
	sign_file=/nonexistent "${dk[@]}" build -m ftrace_stackmap -v "$ver" -k "$kver" \
		>>"$tmp/dkms.log" 2>&1
	rc=$?
	check "dkms build -k $kver" test $rc -eq 0 || {
		sed 's/^/# /' "$tmp/dkms.log" | tail -20
		cat "$tmp/dkms/ftrace_stackmap/$ver/build/make.log" 2>/dev/null | tail -20 | sed 's/^/# /'
	}
	dko=$tmp/dkms/ftrace_stackmap/$ver/$kver/x86_64/module/ftrace_stackmap.ko
	check "  ... the .ko has the stock kernel's vermagic" test "$(vermagic "$dko")" = "$want"
	mkdir -p "$repo/build/pkg"
	[ -f "$dko" ] && cp "$dko" "$repo/build/pkg/ftrace_stackmap-dkms.ko"
else
	bad "dkms not installed (scripts/deps)"
fi
echo "1..$n"
[ $fail -eq 0 ]
