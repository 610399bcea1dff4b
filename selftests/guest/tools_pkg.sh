#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools_pkg.sh MODULE.ko - what the packaging made on the host
# (selftests/pkg/run.sh, scripts/check stage pkg, which runs before the
# guests), used in a guest of the kernel it is for (the stock one):
#  - `modprobe ftrace_stackmap bits=12` from the lib/modules tree that
#    `make install DESTDIR=` and its `depmod -b` wrote (build/pkg/root): a
#    tmpfs over /lib/modules holds a copy of that tree alone, so modprobe
#    finds the module only where make install put it, through the index
#    depmod wrote. The loaded module is that file (build-id), bits=12 is
#    applied, a stack_id record appears; modprobe -r removes it
#  - the same tree without updates/ftrace_stackmap.ko: modprobe fails and
#    nothing is loaded (the first check depends on the tree)
#  - insmod of the .ko `dkms build` made (build/pkg/ftrace_stackmap-dkms.ko)
#    loads and records a stack_id
# In a guest of another kernel (the debug one) the packaged module cannot
# load: skipped. Without build/pkg (the pkg stage did not run): fails.
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

PK=$(cd "$HERE/../.." && pwd)/build/pkg
DKO=$PK/ftrace_stackmap-dkms.ko
KVER=$(uname -r)
M=/lib/modules

if [ ! -f "$DKO" ] || [ ! -d "$PK/root$M" ]; then
	nok "build/pkg/root and build/pkg/ftrace_stackmap-dkms.ko exist (made by selftests/pkg/run.sh: scripts/check --only pkg)"
	finish
fi
vm=$(modinfo -F vermagic "$DKO")
if [ "${vm%% *}" != "$KVER" ]; then
	ok "# SKIP the packaged module is for ${vm%% *}, this kernel is $KVER"
	finish
fi
check "make install wrote lib/modules/$KVER (build/pkg/root)" test -d "$PK/root$M/$KVER"
is_loaded && unload

# build ids: of the loaded module (its note in sysfs) and of a file
loaded_id() {
	od -An -tx1 -j16 /sys/module/ftrace_stackmap/notes/.note.gnu.build-id | tr -d ' \n'
}
file_id() { readelf -n "$1" | sed -n 's/^ *Build ID: //p'; }

# id_records: enable stack ids for sched_switch in the top level, run a
# workload, print the number of stack_id records in the trace
id_records() {
	local tr n
	echo sched:sched_switch >"$T/stack_map_events" || return 1
	echo 1 >"$T/events/sched/sched_switch/enable"
	echo 1 >"$T/options/stackmap"
	workload 5
	echo 0 >"$T/events/sched/sched_switch/enable"
	echo 0 >"$T/options/stackmap"
	tr=$(<"$T/trace")
	n=${tr//stack_id: stack_id=/@}
	n=${n//[!@]/}
	echo ${#n}
	echo >"$T/trace"
}

diag "setup: ${SECONDS} s"
check "tmpfs over $M" mount -t tmpfs fsm-pkg "$M"
check "  ... holds only the installed tree" cp -a "$PK/root$M/$KVER" "$M/"
ins=$M/$KVER/updates/ftrace_stackmap.ko
check "modprobe ftrace_stackmap bits=12" modprobe ftrace_stackmap bits=12
check "  ... loaded" is_loaded
check_eq "  ... the installed file (build-id)" "$(loaded_id)" "$(file_id "$ins")"
check_eq "  ... bits=12 applied" "$(</sys/module/ftrace_stackmap/parameters/bits)" 12
n=$(id_records)
check "  ... records stack ids ($n stack_id records)" [ "${n:-0}" -gt 0 ]
diag "modprobe, records: ${SECONDS} s"
check "modprobe -r ftrace_stackmap" modprobe -r ftrace_stackmap
check "  ... unloaded" eval '! is_loaded'

# the same tree without the module: modprobe looks nowhere else
mv "$ins" "$TMPD/moved.ko"
check_fail "modprobe without updates/ftrace_stackmap.ko fails" modprobe ftrace_stackmap bits=12
check "  ... nothing loaded" eval '! is_loaded'
umount "$M"
check "tmpfs unmounted" eval '! mountpoint -q "$M"'

diag "modprobe without the module: ${SECONDS} s"
# the dkms build
check "insmod ftrace_stackmap-dkms.ko bits=12" insmod "$DKO" bits=12
check_eq "  ... the dkms file (build-id)" "$(loaded_id)" "$(file_id "$DKO")"
n=$(id_records)
check "  ... records stack ids ($n stack_id records)" [ "${n:-0}" -gt 0 ]
check "rmmod" unload
diag "dkms module: ${SECONDS} s"
finish
