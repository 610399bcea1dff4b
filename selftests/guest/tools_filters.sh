#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools_filters.sh MODULE.ko - stackmap-report's filters, its file lookup
# options and its pprof output, on one trace-cmd recording made here (the
# top level and a -B instance, with user stacks of two runs of the chain
# program and of a copy of it under another name, a pause between them).
# Checks, each against expectations computed without the tool:
#  - --pid, --comm, --since/--until, --event, --instance, alone and
#    combined: totals of `folded` = id records of `trace-cmd report` that
#    pass the same filter (filters_check.py)
#  - pprof: `protoc --decode` (profile.proto of golang-github-google-pprof-dev)
#    of the gunzipped output; sample values add up to the id records, the
#    stacks are those of `folded`
#  - --sysroot: the program moved under a sysroot resolves only with it;
#    stripped there, its separate debug file in a .build-id tree resolves
#    it again only with --debug-dir (function names and source lines)
# On the debug kernel: two combined filter runs and no sysroot part (the
# tool is host code; stock runs everything). With vm-run --out, the
# recording is left in $FSM_VM_OUT for the host's corrupted-input test
# (tools/report/tests/fuzz_trace.py, scripts/check stage fuzz).
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SR=$HERE/../../build/tools/stackmap-report
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
CFLAGS=(-g -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread)
CHAIN='main;ustack_f1;ustack_f2;ustack_f3;ustack_f4;ustack_f5;ustack_f6;ustack_sys;'
N=20
# the debug kernel: one combined run per filter and no sysroot part (the
# tool runs on the host's libraries either way; stock runs everything)
DEBUG=0
case ${FSM_VM_KERNEL:-} in debug | *-debug) DEBUG=1 ;; esac

for c in trace-cmd protoc gunzip; do
	if ! command -v $c >/dev/null; then
		echo "ok 1 - # SKIP $c not installed (scripts/deps)"
		echo "1..1"
		exit 0
	fi
done
check "stackmap-report built (make tools)" test -x "$SR"
check "pprof --help" eval '"$SR" pprof --help | grep -q "usage: stackmap-report pprof"'
check_eq "-o outside pprof: usage error (exit 2)" \
	"$("$SR" folded -o x 2>/dev/null; echo $?)" 2
cd "$TMPD" || exit 1
check "gcc chain" gcc "${CFLAGS[@]}" -o chain64 "$HERE/ustack/chain.c"
cp chain64 chainb
check "insmod" load bits=12 events=sched:sched_switch

T0=$SECONDS
echo 'raw_syscalls:sys_enter sched:sched_switch' >"$T/stack_map_events"
echo 1 >"$T/options/stackmap_user"
mkdir "$T/instances/tcf"
echo 'raw_syscalls:sys_enter' >"$T/instances/tcf/stack_map_events"
echo 1 >"$T/instances/tcf/options/stackmap_user"
trace-cmd record -q -b 2048 -o rec.dat -e stackmap -e sched:sched_switch \
	-e raw_syscalls:sys_enter -B tcf -e stackmap -e raw_syscalls:sys_enter \
	bash -c "$TMPD/chain64 $N; sleep 0.3; $TMPD/chainb $N; sleep 0.3; $TMPD/chain64 $N" \
	>rec.log 2>&1
check "trace-cmd record" test -s rec.dat
echo 0 >"$T/options/stackmap_user"
echo >"$T/stack_map_events"
[ -d "$T/instances/tcf" ] && rmdir "$T/instances/tcf"
trace-cmd report -i rec.dat >rec.txt 2>/dev/null
check "trace-cmd report" test -s rec.txt
"$SR" folded -i rec.dat >rec.folded 2>rec.ferr
check_eq "folded exit status" $? 0
check "chain64's user stack resolves (path as recorded)" grep -q "^chain64;.*$CHAIN" rec.folded
diag "record: $((SECONDS - T0)) s"

# pprof, decoded by protoc
"$SR" pprof -i rec.dat -o rec.pb.gz 2>rec.perr
check_eq "pprof exit status" $? 0
check "pprof output is gzip" eval 'gunzip -t rec.pb.gz'
gunzip -c rec.pb.gz | protoc --decode=perftools.profiles.Profile \
	--proto_path="$(dirname "$PROTO")" "$PROTO" >rec.prof 2>rec.proterr
check_eq "protoc --decode of the profile" $? 0
check "pprof to a pipe = -o FILE" eval '"$SR" pprof -i rec.dat 2>/dev/null | cmp -s - rec.pb.gz'
"$SR" pprof -i rec.dat --comm chainb -o chainb.pb.gz 2>/dev/null
check "pprof --comm chainb: only chainb's samples" eval \
	'gunzip -c chainb.pb.gz | protoc --decode=perftools.profiles.Profile \
	--proto_path="$(dirname "$PROTO")" "$PROTO" | grep -q "\"chainb\"" &&
	! gunzip -c chainb.pb.gz | protoc --decode=perftools.profiles.Profile \
	--proto_path="$(dirname "$PROTO")" "$PROTO" | grep -q "\"chain64\""'
diag "pprof: $((SECONDS - T0)) s"

# the python checks, once
py_checks filters_check.py pprof rec.txt rec.folded rec.prof
Q=()
[ $DEBUG = 1 ] && Q=(quick)
py_checks filters_check.py filters "$SR" rec.dat rec.txt chain64,chainb "${Q[@]}"
diag "filters: $((SECONDS - T0)) s"

# --sysroot: the program now lives only under a sysroot, at its path
if [ $DEBUG = 0 ]; then
	SYS=$TMPD/sysroot
	mkdir -p "$SYS$TMPD"
	mv chain64 "$SYS$TMPD/chain64"
	# (each run with --comm chain64: only its frames are looked up)
	"$SR" folded -i rec.dat --comm chain64 >moved.folded 2>/dev/null
	check "moved away: chain64's frames do not resolve" \
		eval '! grep -q "^chain64;.*$CHAIN" moved.folded'
	check "  ... they print as path+0xoffset" grep -q "^chain64;.*;$TMPD/chain64+0x" moved.folded
	check "--sysroot: chain64's frames resolve" \
		eval '"$SR" folded -i rec.dat --comm chain64 --sysroot "$SYS" 2>/dev/null |
			grep -q "^chain64;.*$CHAIN"'
	# stripped there; the debug information in a .build-id tree
	bid=$(readelf -n "$SYS$TMPD/chain64" | grep -o 'Build ID: [0-9a-f]*')
	bid=${bid#Build ID: }
	check "chain64 has a build-id" [ -n "$bid" ]
	mkdir -p "dbg/.build-id/${bid:0:2}"
	objcopy --only-keep-debug "$SYS$TMPD/chain64" "dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	strip "$SYS$TMPD/chain64"
	check "stripped under the sysroot: no function names" \
		eval '! "$SR" folded -i rec.dat --comm chain64 --sysroot "$SYS" 2>/dev/null |
			grep -q "^chain64;.*$CHAIN"'
	"$SR" report -i rec.dat --comm chain64 --sysroot "$SYS" --debug-dir "$TMPD/dbg" \
		>dbg.report 2>/dev/null
	check "--sysroot + --debug-dir (.build-id/xx/rest.debug): names and source lines" \
		grep -q "=> ustack_sys (.*chain.c:[0-9]*) \[$TMPD/chain64+0x" dbg.report
	check "  ... the whole chain" eval 'grep -q "=> ustack_f6 (.*chain.c" dbg.report &&
		grep -q "=> main (.*chain.c" dbg.report'
	diag "sysroot: $((SECONDS - T0)) s"
fi

if [ -n "${FSM_VM_OUT:-}" ] && [ -d "$FSM_VM_OUT" ]; then
	cp rec.dat "$FSM_VM_OUT/tools_filters.dat"
	diag "recording left in $FSM_VM_OUT for the host"
fi
cd / || exit 1
check "rmmod" unload
finish
