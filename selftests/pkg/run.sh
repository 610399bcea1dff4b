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
#    kernel's own (a module of the Debian image); dkms install
#    --installtree T/lib/modules --no-depmod puts it in
#    T/lib/modules/KVER/updates/dkms (Debian's dkms moves DEST_MODULE_LOCATION
#    under updates/dkms), depmod -b T indexes it, dkms uninstall removes
#    it, and the host's /lib/modules is not touched (dkms's own depmod
#    would run on it: hence --no-depmod)
#  - man pages: stackmap-report.1 and stackmap-ctl.1 (rst2man at make
#    tools) in PREFIX/share/man/man1, rendered by man -l with their NAME
#  - for the guest suite tools_pkg: the lib/modules tree make install
#    wrote (build/pkg/root) and the dkms-built .ko
#    (build/pkg/ftrace_stackmap-dkms.ko)
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
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1 (got '$2', want '$3')"; fi; }
vermagic() { modinfo -F vermagic "$1" 2>/dev/null; }

kdir=$("$repo/scripts/kdir" stock) || { bad "scripts/kdir stock"; echo "1..$n"; exit 1; }
moddir=$("$repo/scripts/kernel-stock" --print-moddir)
kver=$(basename "$moddir")
ref=$(find "$moddir" -name '9p.ko*' -print -quit)
want=$(vermagic "$ref")
check "the stock kernel's vermagic ($want)" test -n "$want"

D=$tmp/root
make -C "$repo" -s install DESTDIR="$D" KDIR="$kdir" >"$tmp/install.log" 2>&1
check "make install DESTDIR= KDIR=stock" test $? -eq 0 || sed 's/^/# /' "$tmp/install.log" | tail -20
ko=$D/lib/modules/$kver/updates/ftrace_stackmap.ko
check "module in lib/modules/$kver/updates" test -f "$ko"
check "  ... with the stock kernel's vermagic" test "$(vermagic "$ko")" = "$want"
# One version everywhere: dkms.conf's, modinfo's (MODULE_VERSION) and the
# tools' --version (first word after the name).
pv=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")
check_eq "modinfo version = dkms.conf's" "$(modinfo -F version "$ko")" "$pv"
check_eq "stackmap-report --version = dkms.conf's" \
	"$("$repo/build/tools/stackmap-report" --version | awk '{print $2}')" "$pv"
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
for t in stackmap-report stackmap-ctl; do
	man1=$D/usr/local/share/man/man1/$t.1
	check "man page $t.1 in PREFIX/share/man/man1" test -s "$man1"
	check "  ... a man(7) page of section 1" grep -q "^\.TH \"${t^^}\" 1 " "$man1"
	MANWIDTH=80 man -l "$man1" >"$tmp/$t.man" 2>"$tmp/$t.man.err"
	check "  ... man -l renders it" test $? -eq 0 -a -s "$tmp/$t.man"
	sed -n '1,5s/^/# /p' "$tmp/$t.man.err"
	check "  ... with its NAME section" grep -qE "^ +$t +- [a-z]" "$tmp/$t.man"
	check "  ... SYNOPSIS and EXIT STATUS" eval \
		'grep -q "^SYNOPSIS" "$tmp/$t.man" && grep -q "^EXIT STATUS" "$tmp/$t.man"'
done
make -C "$repo" -s install-tools install-docs DESTDIR="$tmp/p" PREFIX=/opt/fsm >/dev/null 2>&1
check "PREFIX=/opt/fsm: tools" test -x "$tmp/p/opt/fsm/bin/stackmap-ctl"
check "PREFIX=/opt/fsm: docs" test -f "$tmp/p/opt/fsm/share/doc/ftrace_stackmap/tracing.rst"
check "PREFIX=/opt/fsm: man pages" test -f "$tmp/p/opt/fsm/share/man/man1/stackmap-ctl.1"
# the module tree for the guest suite tools_pkg (modprobe from it)
rm -rf "$repo/build/pkg/root"
mkdir -p "$repo/build/pkg/root/lib"
cp -a "$D/lib/modules" "$repo/build/pkg/root/lib/"
make -C "$repo" -s uninstall DESTDIR="$D" KDIR="$kdir" >/dev/null 2>&1
check "make uninstall: module gone" test ! -e "$ko"
check "make uninstall: depmod forgot it" eval "! grep -q ftrace_stackmap '$D/lib/modules/$kver/modules.dep'"
check "make uninstall: tools gone" test ! -e "$D/usr/local/bin/stackmap-ctl"
check "make uninstall: docs gone" test ! -e "$D/usr/local/share/doc/ftrace_stackmap"
check "make uninstall: man pages gone" test ! -e "$D/usr/local/share/man/man1/stackmap-ctl.1"

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

	# dkms install into a private tree: --installtree, and --no-depmod
	# (dkms's depmod -a KVER would index the host's /lib/modules/KVER)
	host_before=$(find /lib/modules -name 'ftrace_stackmap*' -o -name modules.dep 2>/dev/null |
		sort | xargs -r ls -l --time-style=+%s.%N 2>/dev/null)
	I=$tmp/inst
	mkdir -p "$I/lib/modules/$kver"	# dkms installs only into an existing release
	sign_file=/nonexistent "${dk[@]}" --installtree "$I/lib/modules" --no-depmod \
		install -m ftrace_stackmap -v "$ver" -k "$kver" >"$tmp/dkms-install.log" 2>&1
	rc=$?
	check "dkms install -k $kver --installtree (private) --no-depmod" test $rc -eq 0 ||
		sed 's/^/# /' "$tmp/dkms-install.log" | tail -20
	iko=$I/lib/modules/$kver/updates/dkms/ftrace_stackmap.ko
	check "  ... the module in lib/modules/$kver/updates/dkms" test -f "$iko"
	check "  ... the .ko dkms built" cmp -s "$iko" "$dko"
	check "  ... dkms status: installed" eval \
		'"${dk[@]}" --installtree "$I/lib/modules" status -m ftrace_stackmap -v "$ver" -k "$kver" |
			grep ": installed" >/dev/null'
	depmod -b "$I" "$kver" >"$tmp/depmod.log" 2>&1
	check "  ... depmod -b: modules.dep names updates/dkms/ftrace_stackmap.ko" \
		grep -q '^updates/dkms/ftrace_stackmap.ko:' "$I/lib/modules/$kver/modules.dep"
	check "  ... modprobe -d finds it there" eval \
		'modprobe -d "$I" -S "$kver" --show-depends ftrace_stackmap 2>&1 |
			grep "^insmod $iko" >/dev/null'
	sign_file=/nonexistent "${dk[@]}" --installtree "$I/lib/modules" --no-depmod \
		uninstall -m ftrace_stackmap -v "$ver" -k "$kver" >>"$tmp/dkms-install.log" 2>&1
	check "dkms uninstall (private tree)" test $? -eq 0
	check "  ... the module is gone" test ! -e "$iko"
	host_after=$(find /lib/modules -name 'ftrace_stackmap*' -o -name modules.dep 2>/dev/null |
		sort | xargs -r ls -l --time-style=+%s.%N 2>/dev/null)
	check_eq "dkms install/uninstall left the host's /lib/modules as it was" \
		"$host_after" "$host_before"
else
	bad "dkms not installed (scripts/deps)"
fi
echo "1..$n"
[ $fail -eq 0 ]
