#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack_frameless.sh MODULE.ko - a frame "record" that is data (issue 21,
# 3.6; x86-64).
#
# selftests/guest/ustack/frameless.c calls a frameless fstat() wrapper with
# rbp pointing at the struct stat in its caller's frame, as code built
# without frame pointers (Debian's glibc under libpython) may. At the event
# [rbp + 8] holds a stale return address into the caller; fstat() writes
# the inode number there before the walk on the way out reads it. The
# kernel's options/userstacktrace (read at the event) reports the stale
# word as the caller; the module must not report the inode number (a value
# in no mapping) as a frame: the stack is the ip alone, stop not_code (10).
# Before the fix the module printed "[novma] 0x<inode>" as frame 1.
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "$ARCH" != x86_64 ]; then
	diag "SKIP: the program is x86-64 (rbp and fstat in inline asm); the check that return addresses are code after a call is the x86 walker's"
	finish
fi

U=$T/instances/uframeless
PROG=$TMPD/ustack-frameless
N=20

check "gcc frameless.c" gcc -O1 -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -o "$PROG" "$HERE/ustack/frameless.c"
check "load" load

mkdir "$U"
echo raw_syscalls:sys_enter >"$U/stack_map_events"
echo 1 >"$U/options/userstacktrace"
echo 1 >"$U/options/stackmap"
echo 1 >"$U/options/stackmap_user"
coproc FL { exec "$PROG" "$N" 2>"$TMPD/err"; }
flpid=$FL_PID
read -r -t 60 -u "${FL[0]}" line
pid=${line#pid }
: >"$TMPD/maps"
while read -r -t 60 -u "${FL[0]}" line && [ "$line" != ready ]; do
	echo "$line" >>"$TMPD/maps"
done
echo "$pid" >"$U/set_event_pid"
echo 1 >"$U/events/raw_syscalls/sys_enter/enable"
echo go >&"${FL[1]}"
read -r -t 60 -u "${FL[0]}" line
wait "$flpid"
rc=$?
echo 0 >"$U/events/raw_syscalls/sys_enter/enable"
check_eq "program ran (pid ${pid:-?})" "$rc" 0
ino=${line#ino }
diag "fstat's st_ino, where the walk reads a return address on the way out: $ino ($(printf '%#x' "$ino"))"
nap 0.2
cat "$U/trace" >"$TMPD/trace"
echo 0 >"$U/options/stackmap_user"
echo 0 >"$U/options/stackmap"
echo 0 >"$U/options/userstacktrace"
echo >"$U/set_event_pid"
rmdir "$U"

$PY "$HERE/ustack_frameless.py" "$TMPD/trace" "$TMPD/maps" "$PROG" "$pid" "$ino" \
	>"$TMPD/res" 2>"$TMPD/perr"
sed 's/^/# /' "$TMPD/perr"
res() {
	local l
	while IFS= read -r l; do
		[ "${l%%=*}" = "$1" ] && { echo "${l#*=}"; return 0; }
	done <"$TMPD/res"
	return 1
}
while IFS= read -r l; do diag "$l"; done <"$TMPD/res"
check_eq "$N fstat events" "$(res events)" "$N"
check_eq "the kernel's walker, at the event, takes the stale word for the caller" \
	"$(res kernel_stale)" "$N"
check_eq "each event has our user stack" "$(res ours)" "$N"
check_eq "ours never reports the inode number (or anything in no mapping) as a frame" \
	"$(res ours_ino)" 0
check_eq "ours: the ip alone, in fl_fstat" "$(res ours_ip_only)" "$N"
check_eq "ours: stop not_code (10)" "$(res ours_not_code)" "$N"
check_eq "ours: nothing doubtful reported, so not flagged" "$(res ours_flagged)" 0
finish
