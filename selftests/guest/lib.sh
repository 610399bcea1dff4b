# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# lib.sh - TAP helpers shared by the in-guest tests. Source it after setting
# KO (the module to test). Runs as root in the guest (or on a test machine).
#
# In the TCG guest every exec costs about a second (binaries come over 9p)
# and python3 about twenty: the helpers use bash builtins, and the python
# checks (fsm_check.py) run once per script, at the end, on saved files.
# Never "while read ... <tracefs-file": bash's read lseeks back after each
# line, and on a seq_file each lseek replays the file from its start
# (quadratic). Read whole files with $(<file) instead.
#
#   ok/nok/check/check_fail/check_eq/diag   TAP lines (plan printed at the end)
#   later LABEL CHECK ARGS     queue a fsm_check.py check for run_later
#   finish                     run the queued checks, clean up, print the plan
#   load ARGS / unload         insmod "$KO" ARGS / rmmod
#   tracing_clean              every event off, buffers empty, instances gone
#   kmsg_mark / kmsg_since     kernel log lines after a marker (dmesg)
#   stat_get FILE KEY          a value of a stack_map_stat file
#   lines FILE                 number of lines of a file
#   has FILE TEXT              FILE contains TEXT
#   workload [N]               scheduling, sleeps, forks, file system calls
#   wait_for FILE [S]          wait up to S seconds (5) for FILE to appear

T=${T:-/sys/kernel/tracing}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3
TMPD=$(mktemp -d /tmp/fsm-guest.XXXXXX)
# ARCH: the guest's machine (x86_64, aarch64). UFAULT_EV: a static trace
# event in the kernel entry of a user page fault, as SYSTEM:EVENT, and
# UFAULT_DIR its events/ directory. x86 has exceptions:page_fault_user;
# arm64 6.1 has no fault event, and kmem:mm_page_alloc fires in the fault
# that gives a fresh anonymous page (from the faulting task, user registers
# saved), which is what the test programs' ustack_touch does.
ARCH=$(uname -m)
case $ARCH in
aarch64) UFAULT_EV=kmem:mm_page_alloc ;;
*) UFAULT_EV=exceptions:page_fault_user ;;
esac
UFAULT_DIR=${UFAULT_EV/://}
_n=0
_fails=0
_later=$TMPD/later

ok() { _n=$((_n + 1)); echo "ok $_n - $*"; }
nok() { _n=$((_n + 1)); _fails=$((_fails + 1)); echo "not ok $_n - $*"; }
diag() { echo "# $*"; }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
check_fail() {
	local d=$1
	shift
	if "$@" 2>/dev/null; then nok "$d (did not fail)"; else ok "$d"; fi
}
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else nok "$1 (got '$2', want '$3')"; fi
}

is_loaded() {
	local m
	m=$(</proc/modules)
	[[ $'\n'$m == *$'\n'"ftrace_stackmap "* ]]
}
load() { insmod "$KO" "$@"; }
unload() { rmmod ftrace_stackmap; }

tracing_clean() {
	local d
	echo 0 >"$T/tracing_on"
	echo 0 >"$T/events/enable"
	for d in "$T"/instances/*/; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	echo >"$T/trace"
	echo 1 >"$T/tracing_on"
}

# The kernel rate limits writes to /dev/kmsg (printk_devkmsg=ratelimit:
# 10 lines in 5 s, the rest dropped): a suite that marks the log before
# each of its checks (stackmap_badinput) lost a mark on a fast guest, and
# the next "one dmesg line" check, finding no mark, counted nothing. Let
# every mark through (a write refused here leaves the default: the kernel
# was booted with printk.devkmsg= and the knob is locked).
echo on 2>/dev/null >/proc/sys/kernel/printk_devkmsg
_mark=0
kmsg_mark() {
	_mark=$((_mark + 1))
	echo "fsm-test-mark-$$-$_mark" >/dev/kmsg
}
# Kernel log messages after the last kmsg_mark (one exec: dmesg).
kmsg_since() {
	local l seen=0
	while IFS= read -r l; do
		if [ $seen = 1 ]; then
			echo "$l"
		elif [ "$l" = "fsm-test-mark-$$-$_mark" ]; then
			seen=1
		fi
	done < <(dmesg --notime)
}
# count_ours: lines of ours in kmsg_since output (not the kernel's own
# "invalid for parameter" line nor the first load's taint lines, nor the
# lines every load prints on a kernel without the trigger path, e.g.
# Debian's arm64, nor the line on the ring buffer reset hooks every load
# prints: they describe the kernel, not the input)
count_ours() {
	local l c=0
	while read -r l; do
		case $l in
		*"invalid for parameter"* | *taint* | *"verification failed"*) ;;
		"ftrace_stackmap: sources are tracepoint probes "* | "ftrace_stackmap: no stackmap trigger: "*) ;;
		"ftrace_stackmap: ring buffer resets "*) ;;
		"ftrace_stackmap: "*) c=$((c + 1)) ;;
		esac
	done
	echo $c
}

# stat_get FILE KEY: the value of the first line "KEY: VALUE" of FILE (one
# read of FILE; a match on the whole string, no loop and no here-string:
# suites call it in loops, and under TCG each temporary file costs)
stat_get() {
	local v all
	all=$(<"$1") || return 1
	all=$'\n'$all$'\n'
	case $all in
	*$'\n'"$2: "*)
		v=${all#*$'\n'"$2: "}
		echo "${v%%$'\n'*}"
		;;
	*) return 1 ;;
	esac
}
# cookie_of LINE: CK = the cookie of a stack_id/user_stack line, "" when
# none or 0 (cookie 0: a definition written again, FSM_USF_REDEF, that
# answers no request), CKCPU = the CPU of its buffer ("001"). No subshell:
# called per line. Forms: cookie=0x.. (user_stack, stack_id_user) and
# cookie={0x..} / cookie={} (stack_fallback).
cookie_of() {
	case $1 in
	*cookie=*) ;;
	*) CK= CKCPU= && return 0 ;;
	esac
	CK=${1#*cookie=}
	CK=${CK%% *}
	CK=${CK#\{}
	CK=${CK%\}}
	[ "$CK" = 0x0 ] && CK=
	CKCPU=${1#*\[}
	CKCPU=${CKCPU%%\]*}
	return 0
}
lines() {
	local a n
	a=$(<"$1")
	n=${a//[!$'\n']/}
	if [ -z "$a" ]; then echo 0; else echo $((${#n} + 1)); fi
}
has() { [[ $(<"$1") == *"$2"* ]]; }
size() { local s; s=$(stat -c %s "$1") && echo "$s"; }

# A sleep without exec: read with a timeout on a FIFO nobody writes.
mkfifo "$TMPD/fifo"
exec 9<>"$TMPD/fifo"
nap() { read -r -t "${1:-0.002}" -u 9 _ || true; }

# names PROG IN OUT: for each line of addresses in IN, the line of their
# function names in OUT; one addr2line for the whole file (a process per
# stack cost a minute of ustack_chain on the debug guest).
names() {
	local prog=$1 in=$2 out=$3 n k=0
	local -a nm_w nm_all=() nm_cnt=() nm_fn=()
	while read -r -a nm_w; do
		nm_cnt+=(${#nm_w[@]})
		nm_all+=("${nm_w[@]}")
	done <"$in"
	[ ${#nm_all[@]} -eq 0 ] ||
		mapfile -t nm_fn < <(printf '%s\n' "${nm_all[@]}" | addr2line -f -e "$prog" | sed -n 'p;n')
	for n in "${nm_cnt[@]}"; do
		echo "${nm_fn[*]:k:n}"
		k=$((k + n))
	done >"$out"
}

# trig_checks FILE: run the trig_check.py commands saved in FILE (one per
# line) and report their ok/not ok lines as ours.
trig_checks() {
	local rc bad=0 l
	"$PY" -S "$HERE/trig_check.py" <"$1" >"$TMPD/tc.out" 2>&1
	rc=$?
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "${l#ok - }" ;;
		"not ok - "*) nok "${l#not ok - }"; bad=1 ;;
		*) echo "# $l" ;;
		esac
	done <"$TMPD/tc.out"
	# a failure's records: finish() keeps the suite's files (vm-run --out)
	[ "$rc" = 0 ] || [ $bad = 1 ] || nok "trig_check.py exited with $rc"
}

# py_checks SCRIPT ARG...: run a python check script of this directory and
# report its "ok - " / "not ok - " lines as ours (other lines as diag); a
# non-zero exit without a "not ok" line fails too.
py_checks() {
	local l rc s=$1 out=$TMPD/pc.out
	shift
	"$PY" -S "$HERE/$s" "$@" >"$out" 2>&1
	rc=$?
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "${l#ok - }" ;;
		"not ok - "*) nok "${l#not ok - }" ;;
		*) diag "$l" ;;
		esac
	done <"$out"
	[ $rc = 0 ] || grep -q '^not ok' "$out" || nok "$s exited $rc"
}

workload() {
	local i
	for ((i = 0; i < ${1:-20}; i++)); do
		nap 0.002
		(:)
		read -r _ </proc/self/stat
		echo "$i" >"$TMPD/wl"
		: /usr/lib/*	# a directory read (the glob), no loop over it
	done
}

# switched_asleep TRACE PID: TRACE (an instance's trace file, sched_switch
# on) holds PID's switch out of sleep(1) in state S, polled up to 10 s
# (each grep is an exec: about 20 tries)
switched_asleep() {
	local i
	for ((i = 0; i < 20; i++)); do
		grep -Eq "prev_comm=sleep prev_pid=$2 .*prev_state=S " "$1" && return 0
		nap 0.5
	done
	return 1
}

# asleep PID [SECONDS]: PID has exec'd sleep(1) and sleeps in it (state
# S), polled up to SECONDS (30). A fixed nap is not enough: an exec over
# 9p under TCG takes a second or more, longer on a loaded host.
asleep() {
	local i s
	for ((i = 0; i < ${2:-30} * 10; i++)); do
		read -r s 2>/dev/null <"/proc/$1/stat" || return 1
		[[ $s == *" (sleep) S "* ]] && return 0
		nap 0.1
	done
	return 1
}

# wait_for FILE [SECONDS]: wait until FILE exists (a FUSE mount, a file
# another process makes). Not for the nodes of a new instance: they exist
# when mkdir returns.
wait_for() {
	local i
	for ((i = 0; i < ${2:-5} * 10; i++)); do
		[ -e "$1" ] && return 0
		nap 0.1
	done
	return 1
}

later() { echo "$*" >>"$_later"; }

run_later() {
	local l rc bad=0
	[ -s "$_later" ] || return 0
	diag "running $(lines "$_later") saved checks (python)"
	$PY -S "$HERE/fsm_check.py" <"$_later" >"$TMPD/later.out" 2>&1
	rc=$?
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "${l#ok - }" ;;
		"not ok - "*) nok "${l#not ok - }"; bad=1 ;;
		"#"*) echo "$l" ;;
		*) echo "# $l" ;;	# a traceback, say
		esac
	done <"$TMPD/later.out"
	# a crash (or any failure without a "not ok" line) fails too
	[ "$rc" = 0 ] || [ $bad = 1 ] || nok "fsm_check.py exited with $rc"
	: >"$_later"
}

finish() {
	is_loaded && unload 2>/dev/null
	tracing_clean 2>/dev/null
	run_later
	exec 9>&-
	# a failure's files, for vm-run --out (a rare one cannot be rerun)
	if [ "$_fails" -ne 0 ] && [ -n "${FSM_VM_OUT:-}" ] && [ -d "$FSM_VM_OUT" ]; then
		cp -r "$TMPD" "$FSM_VM_OUT/fail.${0##*/}.${TMPD##*/}" 2>/dev/null &&
			diag "files kept in \$FSM_VM_OUT/fail.${0##*/}.${TMPD##*/}"
	fi
	rm -rf "$TMPD"
	echo "1..$_n"
	[ "$_fails" -eq 0 ] || exit 1
	exit 0
}

if [ -z "${KO:-}" ] || [ ! -f "$KO" ]; then
	echo "Bail out! module not found: '${KO:-}' (pass the .ko path)"
	exit 1
fi
[ -d "$T/instances" ] || mount -t tracefs nodev "$T" || {
	echo "Bail out! no tracefs"
	exit 1
}
is_loaded && unload
tracing_clean

# save_cpus DIR NAME: the per-CPU trace files of instance DIR in $TMPD/NAME
save_cpus() {
	mkdir "$TMPD/$2"
	for c in "$1"/per_cpu/cpu*; do cp "$c/trace" "$TMPD/$2/${c##*/}"; done
}
# srcstat DIR SYS:EV FIELD: a field of the source's stack_map_stat line
srcstat() {
	local l
	l=$(stat_get "$1/stack_map_stat" "source $2") || return 1
	l=" $l "
	l=${l#* "$3"=}
	echo "${l%% *}"
}
# wait until stack_map_events of DIR no longer lists SYS:EV
wait_gone() {
	local i
	for ((i = 0; i < 50; i++)); do
		has "$1/stack_map_events" "$2" || return 0
		nap 0.1
	done
	return 1
}

# srcstat and wait_gone use stat_get, has and nap above.
