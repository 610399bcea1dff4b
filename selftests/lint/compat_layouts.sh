#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/lint/compat_layouts.sh [KDIR] - TAP tests of what compat/layouts.h
# and compat/compat.h decide from a kernel's config and layouts, compiled
# with kbuild against KDIR (default: the stock headers, scripts/kdir stock)
# and the layouts scripts/kernel-layouts reads from it, edited per case:
# - kernel CFI (CONFIG_CFI_CLANG, or CONFIG_CFI as 7.x calls it): the
#   trigger path is built out, with "kernel CFI" as its reason, and
#   compat.h refuses to build (its kfree() task work would trap);
# - trigger data with an llist but no private_data_free: the trigger stays
#   and the kernel's deferred free is waited for (FSM_KL_DATA_FREE_DEFERRED);
# - trigger data of another size than ours: scripts/kernel-layouts' check
#   of the declarations says so (the trigger is then built out), the build
#   goes on.
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
		[[ $(strings "$tmp/m/t.o") == *'kernel CFI'* ]]; then
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

# trigger data that ends with an llist and has no private_data_free
size=$(sed -n 's/^#define FSM_KL_event_trigger_data____SIZE \([0-9]*\)$/\1/p;T;q' "$base")
llist="#undef FSM_KL_event_trigger_data____SIZE
#define FSM_KL_event_trigger_data____SIZE $((size + 8))
#define FSM_KL_HAVE_event_trigger_data_llist 1
#define FSM_KL_event_trigger_data__llist $size
#define FSM_KL_MISSING_event_trigger_data_pdfree \"private_data_free\""
if grep -q 'FSM_KL_HAVE_event_trigger_data_llist' "$base"; then
	ok "# SKIP this kernel's trigger data has an llist already"
elif cc "$llist" "" '#include "layouts.h"
static_assert(FSM_HAVE_KL_TRIGGER, "trigger built out");
static_assert(FSM_KL_DATA_FREE_DEFERRED, "the deferred free is not waited for");'; then
	ok "llist without private_data_free: trigger built in, deferred free waited for"
else
	bad "llist without private_data_free: trigger built in, deferred free waited for"
	sed -n '1,10s/^/# /p' "$tmp/cc.log"
fi

# trigger data of another size: the declaration check reports it
{
	cat "$base"
	echo "#undef FSM_KL_event_trigger_data____SIZE"
	echo "#define FSM_KL_event_trigger_data____SIZE $((size + 16))"
} >"$gen"
why=$(python3 - "$repo/scripts/kernel-layouts" "$kdir" "$gen" <<'EOF'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("kl", sys.argv[1])
spec = importlib.util.spec_from_loader("kl", loader)
kl = importlib.util.module_from_spec(spec)
loader.exec_module(kl)
print(kl.check_declarations(sys.argv[2], sys.argv[3]))
EOF
)
if [[ $why == *"event_trigger_data changed size"* ]]; then
	ok "trigger data of another size: built out with a reason ($why)"
else
	bad "trigger data of another size: built out with a reason (got: $why)"
fi

echo "1..$n"
[ "$fail" -eq 0 ]
