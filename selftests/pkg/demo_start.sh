#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/pkg/demo_start.sh - TAP: the first lines a newcomer sees from
# `make demo` (issue 22 item 7: it once began with "kernel-stock: error:
# headers ... missing", printed while make read the Makefile, before the
# packages that provide them were installed).
#
# A copy of the tree's files (git ls-files: what a clean clone has) in
# which scripts/deps, scripts/kdir, scripts/build-module and scripts/vm-run
# are stubs that print "STUB NAME" (deps then fails, so the demo stops
# there) stands for a fresh machine. `make demo` in it must:
#  - print first a line that says what is about to happen (the dependencies
#    are installed), no error;
#  - run scripts/deps before anything looks for kernel headers (kdir,
#    build-module, vm-run) or prints an error;
#  - stop when scripts/deps fails (non-zero exit).
# The check itself: the same copy with a Makefile that reads KDIR while
# make parses it (the old behaviour) must fail those checks.
# Nothing is installed or downloaded; no root needed. About 1 s.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

tmp=$(mktemp -d /tmp/fsm-demo-start.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# copy DIR: the tracked files of the tree as they are now, with stubs
copy() {
	local d=$1 s
	mkdir -p "$d"
	(cd "$repo" && git ls-files -z | xargs -0 tar -cf - --no-recursion) | tar -C "$d" -xf - || return 1
	for s in deps kdir build-module vm-run; do
		printf '#!/bin/sh\necho "STUB %s $*" >&2\nexit 3\n' "$s" >"$d/scripts/$s"
		chmod +x "$d/scripts/$s"
	done
}

# demo DIR: `make demo` there as a newcomer runs it; output in DIR.out
demo() {
	local d=$1
	(cd "$d" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u KDIR -u KERNEL -u KVER \
		make demo) >"$d.out" 2>&1
	echo $? >"$d.rc"
}

# judge DIR WANT: the checks on DIR's output; WANT ok|bad (the control)
judge() {
	local d=$1 first before
	first=$(sed -n 1p "$d.out")
	# every line before the deps stub
	before=$(sed -n '/^STUB deps/q;p' "$d.out")
	if [[ "$first" == "demo: installing dependencies"* ]] && ! grep -q '^STUB deps' <<<"$first"; then
		echo "first=ok"
	fi
	if grep -q '^STUB deps' "$d.out" && ! grep -qiE 'error|STUB (kdir|build-module|vm-run)' <<<"$before"; then
		echo "order=ok"
	fi
	if [ "$(cat "$d.rc")" -ne 0 ] && ! grep -qE '^STUB (build-module|vm-run)' "$d.out"; then
		echo "stops=ok"
	fi
}

if ! copy "$tmp/tree"; then
	bad "a copy of the tree (git ls-files)"
	echo "1..$n"
	exit 1
fi
demo "$tmp/tree"
res=$(judge "$tmp/tree")
echo "# make demo printed:"
sed -n 1,6p "$tmp/tree.out" | diag
if grep -q first=ok <<<"$res"; then
	ok "make demo: the first line says what happens ($(sed -n 1p "$tmp/tree.out"))"
else
	bad "make demo: the first line says what happens"
fi
if grep -q order=ok <<<"$res"; then
	ok "  ... scripts/deps runs before anything looks for kernel headers, no error before it"
else
	bad "  ... scripts/deps runs before anything looks for kernel headers, no error before it"
fi
if grep -q stops=ok <<<"$res"; then
	ok "  ... a failed scripts/deps stops the demo (exit $(cat "$tmp/tree.rc"))"
else
	bad "  ... a failed scripts/deps stops the demo"
fi

# the control: KDIR read while make parses the Makefile
if copy "$tmp/ctl"; then
	printf '\n# demo_start.sh control\n$(info KDIR=$(KDIR))\n' >>"$tmp/ctl/Makefile"
	demo "$tmp/ctl"
	res=$(judge "$tmp/ctl")
	if ! grep -q first=ok <<<"$res" && ! grep -q order=ok <<<"$res"; then
		ok "the control (KDIR read at parse time) fails both checks"
	else
		bad "the control (KDIR read at parse time) fails both checks ($res)"
		sed -n 1,4p "$tmp/ctl.out" | diag
	fi
else
	bad "a copy of the tree for the control"
fi
echo "1..$n"
[ $fail -eq 0 ]
