#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/lint/compat_layouts.sh [KDIR] - TAP tests of what compat/layouts.h
# and compat/compat.h decide from a kernel's config and layouts, compiled
# with kbuild against KDIR (default: the stock headers, scripts/kdir stock)
# and the layouts scripts/kernel-layouts reads from it, edited per case:
# - kernel CFI (CONFIG_CFI_CLANG, or CONFIG_CFI as 7.x calls it): the
#   trigger path is built out, with "kernel CFI" as its reason, and
#   compat.h refuses to build (its kfree() task work would trap).
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
kdir=${1:-$("$repo/scripts/kdir" stock)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }

gen=$tmp/gen/generated/fsm_kernel_layouts.h
if ! "$repo/scripts/kernel-layouts" "$kdir" "$gen" >"$tmp/kl.log" 2>&1 ||
	! grep -q 'FSM_KL_HAVE_event_trigger_data_ops\|FSM_KL_HAVE_event_trigger_data_cmd' "$gen" ||
	grep -q FSM_KL_LAYOUT_MISMATCH "$gen"; then
	echo "1..0 # SKIP no trigger layouts from $kdir"
	sed 's/^/# /' "$tmp/kl.log"
	exit 0
fi
: >"$tmp/gen/generated/fsm_probes.h"
base=$(cp "$gen" "$tmp/base.h" && echo "$tmp/base.h")

# cc LAYOUTS-EXTRA CFLAGS C-SOURCE: compile C-SOURCE (kbuild, KDIR) with the
# layouts plus LAYOUTS-EXTRA; output in $tmp/cc.log, the object $tmp/m/t.o
cc() {
	{ cat "$base"; printf '%s\n' "$1"; } >"$gen"
	rm -rf "$tmp/m"
	mkdir -p "$tmp/m"
	printf '%s\n' "$3" >"$tmp/m/t.c"
	printf 'obj-m := t.o\nccflags-y := -I%s -I%s -I%s %s\n' "$tmp/gen" \
		"$repo/src/kernel" "$repo/src/kernel/compat" "$2" >"$tmp/m/Kbuild"
	make -s -C "$kdir" M="$tmp/m" t.o >"$tmp/cc.log" 2>&1
}

# the reference: these layouts give a trigger
if cc "" "" '#include "layouts.h"
static_assert(FSM_HAVE_KL_TRIGGER, "no trigger");'; then
	ok "the kernel's own layouts: trigger built in"
else
	bad "the kernel's own layouts: trigger built in"
	sed -n '1,10s/^/# /p' "$tmp/cc.log"
fi

for opt in CONFIG_CFI_CLANG CONFIG_CFI; do
	if cc "" "-D$opt" '#include "layouts.h"
static_assert(!FSM_HAVE_KL_TRIGGER, "trigger built in with kernel CFI");
const char fsm_t_why[] = FSM_KL_TRIGGER_WHY;' &&
		strings "$tmp/m/t.o" | grep -q 'kernel CFI'; then
		ok "$opt: trigger built out, reason 'kernel CFI'"
	else
		bad "$opt: trigger built out, reason 'kernel CFI'"
		sed -n '1,10s/^/# /p' "$tmp/cc.log"
	fi
	if ! cc "" "-D$opt" '#include "compat.h"' &&
		grep -q 'kernel CFI' "$tmp/cc.log"; then
		ok "$opt: compat.h refuses to build (kfree() task work)"
	else
		bad "$opt: compat.h refuses to build (kfree() task work)"
		sed -n '1,10s/^/# /p' "$tmp/cc.log"
	fi
done

echo "1..$n"
[ "$fail" -eq 0 ]
