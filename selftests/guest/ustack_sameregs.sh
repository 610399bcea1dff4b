#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack_sameregs.sh MODULE.ko - the "same registers" loop bound of the
# user-stack unwinder (issue 21; fsm_ust_close() in src/kernel/ustack_work.c).
#
# selftests/guest/ustack/sameregs.c makes N getppid calls from one syscall
# instruction with every user register the same at each return to user
# space (the loop counter in memory), then one from another instruction.
# Source: raw_syscalls:sys_exit, whose registers are the ones the entry
# ends with (at sys_enter the return value is not in them yet, so no
# sys_enter request matches an end's registers on x86-64). Each event asks
# for a user stack; each walk ends its entry on the way out. After
# FSM_UST_SAME_REGS_MAX (16, src/kernel/ustack_internal.h) ends in a row
# with the same registers, requests with them are refused: events 1..17
# (the first end starts the row at 0) get their user stack, equal to the
# kernel's options/userstacktrace where it records one, events 18..N a plain
# stackmap:stack_id record (no cookie: "none"), counted in
# user_same_regs_refused, never a wrong stack; sr_tail's call (other
# registers) gets a stack again. A control run of the same loop with one
# register counting up gets no refusal and a stack on every event.
# PROG runs without rseq (GLIBC_TUNABLES=glibc.pthread.rseq=0): a task with
# an rseq area that is preempted in the kernel gets TIF_NOTIFY_RESUME set
# again (rseq_preempt()), and an end whose walk work was preempted so counts
# as one inside the kernel (towards the looser FSM_UST_ENDS_MAX only): with
# rseq on, the debug guest gave 19 stacks in a row instead of 17.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

U=$T/instances/usameregs
PROG=$TMPD/ustack-sameregs
N=${FSM_SAMEREGS_N:-100}
# the bound under test: FSM_UST_SAME_REGS_MAX (Documentation/ustack.rst)
MAX=16

case $ARCH in
aarch64) NR_GETPPID=173 ;;
*) NR_GETPPID=110 ;;
esac

check "gcc sameregs.c" gcc -O1 -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -o "$PROG" "$HERE/ustack/sameregs.c"
check "load" load

mkdir "$U"
echo raw_syscalls:sys_exit >"$U/stack_map_events"
echo 4096 >"$U/buffer_size_kb"
echo 1 >"$U/options/userstacktrace"
echo 1 >"$U/options/stackmap"
echo 1 >"$U/options/stackmap_user"

# kernel_ustacks: does options/userstacktrace record frames here (x86-64;
# arm64 from 6.10 on, not Debian's arm64 6.1: see ustack_entry.sh)? A
# short-lived task's events only (set_event_pid).
kernel_ustacks() {
	local n
	echo 1 >"$U/events/raw_syscalls/sys_exit/enable"
	# shellcheck disable=SC2016 # expanded by the inner shell
	bash -c 'echo $$ >"$1/set_event_pid" && echo >"$1/trace" && exec /bin/true' probe "$U"
	echo 0 >"$U/events/raw_syscalls/sys_exit/enable"
	n=$(grep -A1 -F '<user stack trace>' "$U/trace" | grep -c '^ => ')
	echo >"$U/set_event_pid"
	echo >"$U/trace"
	[ "$n" -gt 0 ]
}

# run LABEL MODE: PROG N MODE in the instance; its trace and the checker's
# results in $TMPD; the instance's user_same_regs_refused grew by $refused.
run() {
	local L=$1 pid='' line r0 r1
	echo >"$U/trace"
	r0=$(stat_get "$U/stack_map_stat" user_same_regs_refused)
	coproc SR { GLIBC_TUNABLES=glibc.pthread.rseq=0 exec "$PROG" "$N" "$2" 2>"$TMPD/$L.perr"; }
	local srpid=$SR_PID
	read -r -t 60 -u "${SR[0]}" line
	[[ $line == "pid "* ]] && pid=${line#pid } && pid=${pid%% *}
	check_eq "$L: PROG has no rseq area" "${line##* rseq }" 0
	: >"$TMPD/$L.maps"
	while read -r -t 60 -u "${SR[0]}" line && [ "$line" != ready ]; do
		echo "$line" >>"$TMPD/$L.maps"
	done
	check "$L: PROG started (pid ${pid:-?})" [ -n "$pid" ]
	echo "$pid" >"$U/set_event_pid"
	echo 1 >"$U/events/raw_syscalls/sys_exit/enable"
	echo go >&"${SR[1]}"
	read -r -t 60 -u "${SR[0]}" line
	wait "$srpid"
	check_eq "$L: PROG ran" "$?" 0
	echo 0 >"$U/events/raw_syscalls/sys_exit/enable"
	echo >"$U/set_event_pid"
	nap 0.2
	cat "$U/trace" >"$TMPD/$L.trace"
	r1=$(stat_get "$U/stack_map_stat" user_same_regs_refused)
	refused=$((r1 - r0))
	$PY "$HERE/ustack_sameregs.py" --nr "$NR_GETPPID" "$TMPD/$L.trace" \
		"$TMPD/$L.maps" "$PROG" "$pid" >"$TMPD/$L.res" 2>"$TMPD/$L.err"
	sed 's/^/# /' "$TMPD/$L.err"
	while IFS= read -r line; do diag "$L: $line"; done <"$TMPD/$L.res"
	diag "$L: user_same_regs_refused $r0 -> $r1"
}

# res LABEL KEY: a key=value result of ustack_sameregs.py
res() {
	local l
	while IFS= read -r l; do
		[ "${l%%=*}" = "$2" ] && { echo "${l#*=}"; return 0; }
	done <"$TMPD/$1.res"
	return 1
}

kst=no
kernel_ustacks && kst=yes
diag "the kernel's options/userstacktrace records user stacks: $kst"
[ $kst = yes ] || diag "so no comparison with the kernel's stacks here (Debian's arm64 6.1); each stack's frames are checked by function (sr_loop or sr_tail, then main)"

ev=$((N + 1))
run same same
check_eq "same: $ev getppid events traced" "$(res same events)" "$ev"
check_eq "same: the first $((MAX + 1)) events (up to the bound) and sr_tail's have a user stack" \
	"$(res same stacked)/$(res same prefix)/$(res same tail)" "$((MAX + 2))/$((MAX + 1))/1"
check_eq "same: the later $((N - MAX - 1)) have an explicit none (a stack_id record, no cookie)" \
	"$(res same none)" $((N - MAX - 1))
check_eq "same: user_same_regs_refused grew by that many" "$refused" $((N - MAX - 1))
check_eq "same: no cookie without its user_stack record" "$(res same orphan)" 0
check_eq "same: every stack walked, in sr_loop (sr_tail) called from main" \
	"$(res same walked)/$(res same func_wrong)" "$((MAX + 2))/0"
if [ $kst = yes ]; then
	check_eq "same: each stack compared with the kernel's, none differs" \
		"$(res same compared)/$(res same mismatch)" "$((MAX + 2))/0"
	check "same: frames compared ($(res same frames))" [ "$(res same frames)" -ge $((2 * (MAX + 2))) ]
fi

run vary vary
check_eq "vary: $ev getppid events traced" "$(res vary events)" "$ev"
check_eq "vary: one register changes each time: every event has its user stack" \
	"$(res vary stacked)/$(res vary none)/$(res vary orphan)" "$ev/0/0"
check_eq "vary: nothing refused" "$refused" 0
check_eq "vary: every stack walked, in sr_loop (sr_tail) called from main" \
	"$(res vary walked)/$(res vary func_wrong)" "$ev/0"
if [ $kst = yes ]; then
	check_eq "vary: each stack compared with the kernel's, none differs" \
		"$(res vary compared)/$(res vary mismatch)" "$ev/0"
fi

echo 0 >"$U/options/stackmap_user"
echo 0 >"$U/options/stackmap"
echo 0 >"$U/options/userstacktrace"
rmdir "$U"
check "unload" unload
finish
