#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# smoke.sh [KERNEL...] - TAP smoke test of the Debian 13 (6.12) kernel set-up
# (Documentation/build.rst "Debian 13 kernels (6.12)"), for each KERNEL
# (default: trixie trixie-arm64 trixie-debug):
#   - a hello-world out-of-tree module builds against scripts/kdir KERNEL
#     inside the trixie root (scripts/trixie-root --run), in a temporary
#     directory;
#   - the guest (scripts/vm-run --kernel KERNEL) boots, runs uname, loads and
#     unloads the module (its dmesg line names the running release), makes
#     and removes a tracefs instance and lists its events/sched (eventfs);
#     vm-run fails on any kernel splat.
# Not part of make check yet (the module itself does not build for 6.12).
# The first run builds the root, fetches the kernels and builds
# trixie-debug (tens of minutes on 2 cores); later runs take about a minute
# per kernel.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(trixie trixie-arm64 trixie-debug)

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsm-trixie-smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

for k in "${kernels[@]}"; do
	d=$tmp/$k
	mkdir -p "$d"
	cat >"$d/fsm_hello.c" <<'C'
// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#include <linux/init.h>
#include <linux/utsname.h>

static int __init fsm_hello_init(void)
{
	pr_info("fsm_hello: loaded on %s\n", init_utsname()->release);
	return 0;
}

static void __exit fsm_hello_exit(void)
{
	pr_info("fsm_hello: unloaded\n");
}

module_init(fsm_hello_init);
module_exit(fsm_hello_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("trixie set-up smoke test");
C
	echo 'obj-m := fsm_hello.o' >"$d/Kbuild"
	arch=()
	[ "$k" != trixie-arm64 ] || arch=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	if ! kdir=$("$repo/scripts/kdir" "$k" 2>"$d/kdir.log"); then
		sed 's/^/# /' "$d/kdir.log"
		bad "$k: scripts/kdir"
		continue
	fi
	if "$repo/scripts/trixie-root" --run --bind "$d" -- \
		make -C "$kdir" M="$d" "${arch[@]}" modules >"$d/build.log" 2>&1 &&
		[ -e "$d/fsm_hello.ko" ]; then
		ok "$k: hello module builds in the trixie root"
	else
		tail -n 20 "$d/build.log" | sed 's/^/# /'
		bad "$k: hello module builds in the trixie root"
		continue
	fi
	cat >"$d/guest.sh" <<'G'
#!/bin/sh
set -e
T=/sys/kernel/tracing
r=$(uname -r)
echo "release $r"
insmod "$1/fsm_hello.ko"
dmesg >/tmp/dmesg.1
grep "fsm_hello: loaded on $r" /tmp/dmesg.1 >/dev/null && echo "loaded ok"
rmmod fsm_hello
dmesg >/tmp/dmesg.2
grep "fsm_hello: unloaded" /tmp/dmesg.2 >/dev/null && echo "unloaded ok"
mkdir $T/instances/fsm_smoke
[ -e $T/instances/fsm_smoke/events/sched/sched_switch/trigger ] && echo "eventfs ok"
rmdir $T/instances/fsm_smoke
[ ! -e $T/instances/fsm_smoke ] && echo "rmdir ok"
G
	chmod 755 "$d/guest.sh"
	out=$("$repo/scripts/vm-run" --kernel "$k" -- "$d/guest.sh" "$d" 2>"$d/vm.log")
	rc=$?
	out=$(printf '%s\n' "$out" | tr -d '\r')
	printf '%s\n' "$out" | sed 's/^/# /'
	if [ "$rc" = 0 ] && [[ $out == *"release 6.12."* ]]; then
		ok "$k: boots a 6.12 kernel (vm-run status 0, no splat)"
	else
		tail -n 30 "$d/vm.log" | sed 's/^/# /'
		bad "$k: boots a 6.12 kernel (vm-run status $rc)"
		continue
	fi
	for w in "loaded ok" "unloaded ok" "eventfs ok" "rmdir ok"; do
		if [[ $out == *"$w"* ]]; then ok "$k: $w"; else bad "$k: $w"; fi
	done
done
echo "1..$n"
[ "$fail" -eq 0 ]
