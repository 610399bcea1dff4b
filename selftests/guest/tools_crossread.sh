#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools_crossread.sh MODULE.ko - a recording made here, read on another
# machine. The tools (build/tools) are built for the host, so in an arm64
# guest they do not run; this suite records there and leaves the recording
# in $FSM_VM_OUT/crossread (scripts/vm-run --out), and the host reads it
# after the guest stage: tools/report/tests/crossread_check.py (ctest label
# recordings, scripts/check stage fuzz). Recorded here:
#  - rec.dat: trace-cmd record -T (options/stacktrace: the kernel's own
#    stack after each event, the oracle) of raw_syscalls:sys_enter and
#    sched:sched_switch with kernel and user stack ids, while chain.c
#    runs (a known user chain, built here with -g);
#  - sysroot/: the user files the trace's file_map records name (chain64
#    at its path here, the C library and the loader), for --sysroot on
#    the host;
#  - rec.txt: `trace-cmd report` of rec.dat as this machine prints it.
# Checked here: the recording has id records and kernel stacks, and every
# file is in place. Checked on the host: see crossread_check.py.
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

CFLAGS=(-g -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread)
if ! command -v trace-cmd >/dev/null; then
	echo "ok 1 - # SKIP trace-cmd not installed"
	echo "1..1"
	exit 0
fi
if [ -z "${FSM_VM_OUT:-}" ] || [ ! -d "$FSM_VM_OUT" ]; then
	echo "ok 1 - # SKIP FSM_VM_OUT not set (scripts/vm-run --out DIR): nowhere to leave the recording"
	echo "1..1"
	exit 0
fi
O=$FSM_VM_OUT/crossread
rm -rf "$O"
check "mkdir \$FSM_VM_OUT/crossread" mkdir -p "$O/sysroot"
cd "$TMPD" || exit 1
check "gcc chain64 (-g)" gcc "${CFLAGS[@]}" -o chain64 "$HERE/ustack/chain.c"
check "insmod" load bits=12 events=raw_syscalls:sys_enter,sched:sched_switch
echo 1 >"$T/options/stackmap_user"
trace-cmd record -q -T -b 4096 -o rec.dat -e stackmap -e raw_syscalls:sys_enter \
	-e sched:sched_switch \
	"$TMPD/chain64" 20 >rec.out 2>&1
check "trace-cmd record -T" test -s rec.dat
echo 0 >"$T/options/stackmap_user"
echo >"$T/stack_map_events"
trace-cmd report -i rec.dat >rec.txt 2>rec.err
check "trace-cmd report" test -s rec.txt
check "report: stack_id records" has rec.txt "stack_id: "
check "report: stack_id_user records" has rec.txt "stack_id_user: "
check "report: the kernel's own stacks (-T)" has rec.txt "<stack trace"
# (by comm: the kernel's comm cache may still name chain64's pid after
# the trace-cmd that forked it; the host finds the chain by its frames)
check "report: sys_enter records" has rec.txt "sys_enter: "

# the user files the trace's file_map records name, at those paths (the
# guest has no ldd; the trace says which files the stacks need)
n=0
while IFS= read -r f; do
	[ -f "$f" ] || continue
	mkdir -p "$O/sysroot$(dirname "$f")"
	check "sysroot: $f" cp "$(readlink -f "$f")" "$O/sysroot$f"
	n=$((n + 1))
done < <(grep -o 'file_map: .* path=[^ ]*' rec.txt | sed 's/.* path=//' | sort -u)
check "sysroot: chain64 and its libraries ($n files)" [ "$n" -ge 2 ]
check "sysroot: chain64 among them" test -f "$O/sysroot$TMPD/chain64"
check "leave rec.dat, rec.txt" cp rec.dat rec.txt "$O/"
uname -m >"$O/arch"
uname -r >"$O/release"
diag "left $(du -sk "$O" | cut -f1) KiB in \$FSM_VM_OUT/crossread ($(uname -m), $(uname -r))"
cd / || exit 1
check "rmmod" unload
finish
