#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/pkg/deb.sh - TAP tests of the Debian packages (scripts/check
# stage pkg, after run.sh):
#  - make deb builds ftrace-stackmap-dkms (all) and ftrace-stackmap-tools
#    (amd64) into build/deb/, version dkms.conf's PACKAGE_VERSION; their
#    contents and dependencies
#  - lintian (-I --pedantic) on both: no tag at all that is not overridden
#    (the overrides are explained in scripts/debian/*.lintian-overrides)
#  - in a fresh Debian 12 root (mmdebstrap minbase with linux-headers-amd64
#    installed): `apt-get install ./*.deb` pulls the dependencies (dkms,
#    g++-12, the tools' libraries), DKMS builds the module against the
#    root's headers and installs it (dkms status, modinfo: vermagic of that
#    kernel), stackmap-report --help and stackmap-ctl --help run, the
#    plugin is in libtraceevent's directory; `apt-get purge` removes it all
#    (no file of ours, no dkms tree, modules.dep forgets the module) and,
#    after `apt-get autoremove --purge`, no file is left that was not there
#    before the install, except files of packages still installed (what
#    autoremove keeps; apt/dpkg state and logs aside), and none is gone
# The root is cached in $FSM_CACHE/deb-root/ as a tar (headers installed,
# the packages' dependencies downloaded, not installed), keyed by the
# headers' candidate version and scripts/debian/control; making it
# downloads about 150 MB (a few minutes), once.
# Needs root, mmdebstrap, debhelper, dh-dkms, lintian (scripts/deps).
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
# check DESC CMD...: a TAP line; returns CMD's success (for `check ... || diag`)
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else bad "$d"; return 1; fi
}
diag() { sed 's/^/# /'; }
finish() { echo "1..$n"; [ $fail -eq 0 ]; exit; }

ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")
arch=$(dpkg --print-architecture)
out=$repo/build/deb
tmp=$(mktemp -d /tmp/fsm-deb.XXXXXX)
R=$tmp/root

umount_root() {
	local m
	for m in dev/pts dev sys proc; do
		if mountpoint -q "$R/$m"; then umount "$R/$m" || umount -l "$R/$m"; fi
	done
}
cleanup() {
	umount_root
	# never remove through a mount that is still there
	for m in proc sys dev; do
		mountpoint -q "$R/$m" && { echo "# $R/$m still mounted: $tmp kept"; return; }
	done
	rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

# ---- build ---------------------------------------------------------------
t0=$(date +%s)
make -C "$repo" -s deb >"$tmp/build.log" 2>&1
rc=$?
check "make deb" test $rc -eq 0 || tail -20 "$tmp/build.log" | diag
echo "# make deb: $(($(date +%s) - t0)) s"
dkms_deb=$out/ftrace-stackmap-dkms_${ver}_all.deb
tools_deb=$out/ftrace-stackmap-tools_${ver}_$arch.deb
check "build/deb/ftrace-stackmap-dkms_${ver}_all.deb" test -s "$dkms_deb"
check "build/deb/ftrace-stackmap-tools_${ver}_$arch.deb" test -s "$tools_deb"
[ -s "$dkms_deb" ] && [ -s "$tools_deb" ] || finish

field() { dpkg-deb -f "$1" "$2"; }
contents() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./|/|'; }
check "  ... version $ver (dkms.conf)" test "$(field "$dkms_deb" Version)" = "$ver" -a \
	"$(field "$tools_deb" Version)" = "$ver"
check "dkms package: Depends dkms" eval '[[ "$(field "$dkms_deb" Depends)" == *dkms* ]]'
check "dkms package: Recommends linux-headers" eval '[[ "$(field "$dkms_deb" Recommends)" == linux-headers-* ]]'
contents "$dkms_deb" >"$tmp/dkms.list"
check "dkms package: /usr/src/ftrace_stackmap-$ver/dkms.conf" \
	grep -qx "/usr/src/ftrace_stackmap-$ver/dkms.conf" "$tmp/dkms.list"
check "  ... the same dkms.conf as the repository's" eval \
	'dpkg-deb --fsys-tarfile "$dkms_deb" | tar -xOf - "./usr/src/ftrace_stackmap-$ver/dkms.conf" |
		cmp -s - "$repo/dkms.conf"'
check "  ... Kbuild, Makefile, src/core, src/kernel" eval \
	'grep -qx "/usr/src/ftrace_stackmap-$ver/Kbuild" "$tmp/dkms.list" &&
	grep -qx "/usr/src/ftrace_stackmap-$ver/Makefile" "$tmp/dkms.list" &&
	grep -q "^/usr/src/ftrace_stackmap-$ver/src/core/." "$tmp/dkms.list" &&
	grep -q "^/usr/src/ftrace_stackmap-$ver/src/kernel/." "$tmp/dkms.list"'
check "  ... a postinst that runs dkms" eval \
	'dpkg-deb -I "$dkms_deb" postinst | grep dkms >/dev/null'
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
contents "$tools_deb" >"$tmp/tools.list"
for f in /usr/bin/stackmap-report /usr/bin/stackmap-ctl /usr/share/man/man1/stackmap-report.1.gz \
	/usr/share/man/man1/stackmap-ctl.1.gz "/usr/lib/$ma/traceevent/plugins/plugin_stackmap.so"; do
	check "tools package: $f" grep -qx "$f" "$tmp/tools.list"
done
check "tools package: Depends from shlibs (libtracecmd1, libdw1)" eval \
	'[[ "$(field "$tools_deb" Depends)" == *libtracecmd1* && "$(field "$tools_deb" Depends)" == *libdw1* ]]'

# ---- lintian -------------------------------------------------------------
if command -v lintian >/dev/null; then
	lintian -I --pedantic "$dkms_deb" "$tools_deb" >"$tmp/lintian.log" 2>&1
	rc=$?
	grep -v 'running with root privileges' "$tmp/lintian.log" >"$tmp/lintian.tags"
	check "lintian -I --pedantic: no tag (exit $rc)" eval '[ $rc -eq 0 ] && ! [ -s "$tmp/lintian.tags" ]' ||
		diag <"$tmp/lintian.tags"
else
	bad "lintian not installed (scripts/deps)"
fi

# ---- a fresh Debian 12 root -----------------------------------------------
if ! command -v mmdebstrap >/dev/null || [ "$(id -u)" -ne 0 ]; then
	bad "fresh root: needs root and mmdebstrap (scripts/deps)"
	finish
fi
candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^  Candidate: //p'; }
hdr=$(candidate linux-headers-amd64)
# Debian 12's 6.12 kernel (bookworm-backports, and bookworm-security's
# linux-6.12: 6.12.N+deb12, built with gcc-12): its meta package
hdr612=$(candidate linux-headers-6.12-amd64)
[ "$hdr612" = "(none)" ] && hdr612=
if [ -n "$hdr612" ]; then
	ok "apt has linux-headers-6.12-amd64 ($hdr612): the root gets 6.1 and 6.12 headers"
else
	bad "apt has no linux-headers-6.12-amd64 (bookworm-backports or bookworm-security): DKMS is tested on 6.1 alone"
fi
key=$( { echo "$hdr $hdr612"; cat "$repo/scripts/debian/control"; } | sha256sum | cut -c1-16)
cache=$FSM_CACHE/deb-root
# (bookworm-612-: a root with both kernels' headers; the older bookworm-KEY
# roots had 6.1's alone)
tarball=$cache/bookworm-612-$key.tar
mirror=(
	"deb http://deb.debian.org/debian bookworm main"
	"deb http://deb.debian.org/debian bookworm-updates main"
	"deb http://deb.debian.org/debian-security bookworm-security main"
)
mount_root() {
	local m
	for m in proc sys dev dev/pts; do
		mkdir -p "$R/$m"
		mount --bind "/$m" "$R/$m" || return 1
	done
	cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
}
inroot() {
	chroot "$R" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"
}
# the packages as apt sees them in the root
in_root=("/tmp/debs/${dkms_deb##*/}" "/tmp/debs/${tools_deb##*/}")
t0=$(date +%s)
(
	fsm_lock deb-root
	[ -f "$tarball" ] && exit 0
	echo "# making the root $tarball (linux-headers-amd64 $hdr, linux-headers-6.12-amd64 ${hdr612:-none})"
	rm -f "$cache"/bookworm-612-*.tar
	mkdir -p "$cache"
	# the package lists and the downloaded packages stay in the root; the
	# 6.12 headers depend on their kernel image, so the root has it too
	mmdebstrap --quiet --variant=minbase \
		--include="linux-headers-amd64${hdr612:+,linux-headers-6.12-amd64}" \
		--skip=cleanup/apt/lists,cleanup/apt/cache bookworm "$R" "${mirror[@]}" &&
		mkdir -p "$R/tmp/debs" && cp "$dkms_deb" "$tools_deb" "$R/tmp/debs/" && mount_root &&
		inroot apt-get install -q -y --no-install-recommends --download-only "${in_root[@]}" &&
		umount_root && rm -f "$R"/tmp/debs/*.deb && rm -f "$R/etc/resolv.conf" &&
		tar -C "$R" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
) >"$tmp/root.log" 2>&1
umount_root
[ -f "$tarball" ] || {
	bad "fresh root: $tarball (mmdebstrap)"
	tail -20 "$tmp/root.log" | diag
	finish
}
rm -rf --one-file-system "$R"
mkdir -p "$R"
tar -C "$R" -xf "$tarball"
t1=$(date +%s)
echo "# fresh root ready in $((t1 - t0)) s"
# the kernels whose headers the root has (DKMS builds for each of them: in
# a chroot, whose `uname -r` is the host's, dkms's postinst takes every
# kernel in /lib/modules on a first install; on a machine, the running and
# the newest kernel)
kvers=()
for d in $(find "$R/lib/modules" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort -V); do
	# build is an absolute link (/usr/src/linux-headers-KVER): resolved in
	# the root, not on the host (which may have 6.1's headers, not 6.12's)
	l=$(readlink "$R/lib/modules/$d/build") || continue
	case $l in /*) l=$R$l ;; *) l=$R/lib/modules/$d/$l ;; esac
	[ -f "$l/Makefile" ] && kvers+=("$d")
done
k61=$(printf '%s\n' "${kvers[@]}" | grep '^6\.1\.' | tail -n 1)
k612=$(printf '%s\n' "${kvers[@]}" | grep '^6\.12\.' | tail -n 1)
echo "# kernels with headers in the root: ${kvers[*]}"
check "fresh root: linux-headers-amd64 installed (${k61:-no 6.1})" test -n "$k61"
if [ -n "$hdr612" ]; then
	check "fresh root: linux-headers-6.12-amd64 installed (${k612:-no 6.12})" test -n "$k612"
fi
# the file list of the root (apt and dpkg state, logs and caches aside)
files() {
	(cd "$R" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp \
		-o -path ./var/cache -o -path ./var/log -o -path ./var/lib/apt -o -path ./var/lib/dpkg \
		-o -path ./run -o -path ./etc/resolv.conf \) -prune -o -print) | sort
}
files >"$tmp/before.list"
inroot dpkg-query -W -f '${Package}\n' | sort >"$tmp/before.pkgs"
mkdir -p "$R/tmp/debs"
cp "$dkms_deb" "$tools_deb" "$R/tmp/debs/"
mount_root || bad "fresh root: bind mounts"

t0=$(date +%s)
inroot apt-get install -q -y --no-install-recommends "${in_root[@]}" >"$tmp/install.log" 2>&1
rc=$?
echo "# apt-get install (with the DKMS build): $(($(date +%s) - t0)) s"
check "apt-get install ./*.deb in the fresh root" test $rc -eq 0 || tail -30 "$tmp/install.log" | diag
check "  ... pulled the dependencies (dkms, g++-12, libtracecmd1)" eval \
	'grep -q "^Setting up dkms " "$tmp/install.log" && grep -q "^Setting up g++-12 " "$tmp/install.log" &&
		grep -q "^Setting up libtracecmd1" "$tmp/install.log"'
# the module DKMS installed for KVER, as the kernel wants it: 6.12's
# config compresses modules (MODULE_COMPRESS_XZ), and dkms does too
kofiles() { compgen -G "$R/lib/modules/$1/updates/dkms/ftrace_stackmap.ko*"; }
for kver in "${kvers[@]}"; do
	check "DKMS built and installed the module for $kver" eval 'kofiles "$kver" >/dev/null' || {
		grep -iE 'dkms|error|building' "$tmp/install.log" | tail -20 | diag
		tail -20 "$R/var/lib/dkms/ftrace_stackmap/$ver/$kver/x86_64/log/make.log" 2>/dev/null | diag
		tail -20 "$R/var/lib/dkms/ftrace_stackmap/$ver/build/make.log" 2>/dev/null | diag
	}
	check "  ... dkms status: installed for $kver" eval \
		'inroot dkms status ftrace_stackmap 2>/dev/null | grep "ftrace_stackmap/$ver, $kver, .*: installed" >/dev/null'
	check "  ... modinfo -k $kver ftrace_stackmap (modules.dep): vermagic $kver" eval \
		'inroot modinfo -k "$kver" -F vermagic ftrace_stackmap | grep "^$kver " >/dev/null'
	check "  ... modinfo -k $kver: version $ver (dkms.conf)" eval \
		'[ "$(inroot modinfo -k "$kver" -F version ftrace_stackmap)" = "$ver" ]'
	inroot modinfo -k "$kver" ftrace_stackmap 2>&1 | grep -E '^(filename|version|vermagic)' | diag
	kofiles "$kver" | sed "s|^$R||; s|^|# installed: |"
done
inroot dkms status 2>/dev/null | diag
# issue 22 item 6: the tools say the module's version
for t in stackmap-report stackmap-ctl; do
	check "$t --version: the version modinfo shows ($ver)" eval \
		'[[ "$(inroot $t --version)" =~ ^"$t $ver"( |$) ]]'
done
check "stackmap-report --help runs" eval 'inroot stackmap-report --help >/dev/null'
check "stackmap-ctl --help runs" eval 'inroot stackmap-ctl --help >/dev/null'
# (minbase has no man-db: the files, where man looks for them)
check "the man pages in /usr/share/man/man1" eval \
	'test -s "$R/usr/share/man/man1/stackmap-report.1.gz" && test -s "$R/usr/share/man/man1/stackmap-ctl.1.gz"'
check "the plugin in libtraceevent's directory" \
	test -f "$R/usr/lib/$ma/traceevent/plugins/plugin_stackmap.so"

t0=$(date +%s)
inroot apt-get purge -q -y ftrace-stackmap-dkms ftrace-stackmap-tools >"$tmp/purge.log" 2>&1
check "apt-get purge ftrace-stackmap-dkms ftrace-stackmap-tools" test $? -eq 0 ||
	tail -20 "$tmp/purge.log" | diag
for kver in "${kvers[@]}"; do
	check "  ... the module is gone ($kver)" eval '! kofiles "$kver" >/dev/null'
	check "  ... modules.dep forgot it ($kver)" eval \
		'! grep -q ftrace_stackmap "$R/lib/modules/$kver/modules.dep"'
done
check "  ... no /usr/src/ftrace_stackmap-$ver, no dkms tree" eval \
	'! [ -e "$R/usr/src/ftrace_stackmap-$ver" ] && ! [ -e "$R/var/lib/dkms/ftrace_stackmap" ]'
left=$(cd "$R" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp \) -prune -o \
	\( -name '*ftrace_stackmap*' -o -name '*stackmap-*' -o -name 'plugin_stackmap*' \) -print)
check "  ... no file named after us in the root" test -z "$left" || echo "$left" | diag
inroot apt-get autoremove --purge -q -y >"$tmp/autoremove.log" 2>&1
check "apt-get autoremove --purge (the dependencies)" test $? -eq 0 ||
	tail -20 "$tmp/autoremove.log" | diag
echo "# purge + autoremove: $(($(date +%s) - t0)) s"
rm -rf "$R/tmp/debs"
files >"$tmp/after.list"
inroot dpkg-query -W -f '${Package}\n' | sort >"$tmp/after.pkgs"
# packages autoremove kept (depended on by what was there before, or
# marked manual by a maintainer script): their files are theirs, not ours
comm -13 "$tmp/before.pkgs" "$tmp/after.pkgs" >"$tmp/kept.pkgs"
[ -s "$tmp/kept.pkgs" ] && echo "packages the install added and autoremove kept: $(tr '\n' ' ' <"$tmp/kept.pkgs")" | diag
# every file that is new since before the install belongs to an installed
# package: in its dpkg file list (merged /usr: the lists say /bin, /lib...),
# or a symbolic link (alternatives) to such a file. depmod's indexes
# (modules.dep...) aside: the DKMS install and removal ran depmod for a
# kernel whose image (which has them) is not in the root; the checks above
# looked at modules.dep.
cat "$R"/var/lib/dpkg/info/*.list |
	sed -E 's#^/(bin|sbin|lib|lib32|lib64|libx32)(/|$)#/usr/\1\2#; s#^#.#' | sort -u >"$tmp/owned.list"
comm -13 "$tmp/before.list" "$tmp/after.list" >"$tmp/new.list"
comm -23 "$tmp/new.list" "$tmp/owned.list" >"$tmp/unlisted.list"
: >"$tmp/stray.list"
while IFS= read -r f; do
	f=${f#.}
	case $f in /usr/lib/modules/*/modules.*) continue ;; esac
	if [ -L "$R$f" ] && grep -qxF ".$(inroot readlink -f "$f")" "$tmp/owned.list"; then
		continue
	fi
	echo "$f" >>"$tmp/stray.list"
done <"$tmp/unlisted.list"
check "after purge + autoremove: no new file that no package owns ($(wc -l <"$tmp/new.list") new, all owned)" \
	test ! -s "$tmp/stray.list" || sed -n 1,20p "$tmp/stray.list" | diag
comm -23 "$tmp/before.list" "$tmp/after.list" >"$tmp/gone.list"
check "  ... and no file of the root from before is gone" test ! -s "$tmp/gone.list" ||
	sed -n 1,20p "$tmp/gone.list" | diag
umount_root
finish
