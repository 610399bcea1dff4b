#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools_ctl.sh MODULE.ko - stackmap-ctl (build/tools, `make tools`): each
# command against the module, checked by reading the tracefs files
# directly (not through the tool):
#  - usage errors exit 2; without the module, and for a missing instance,
#    exit 1 with a message saying so
#  - enable -B creates the instance (and says so), sets and enables the
#    source events, options/stackmap and options/stackmap_user; disable
#    turns them off, --remove removes the instance
#  - a bad event list: exit 1, the module's dmesg reason shown, the set
#    unchanged
#  - status, reset (generation + 1), save (the file is stack_map_bin)
#  - the snapshot workflows of Documentation/stackmap-ctl.rst: trace-cmd
#    record -B removes the instance at its end (also one made before it),
#    so the recorded command ends with `save`; `stackmap-report --map` of
#    that snapshot is accepted for the trace and holds the workload's
#    stack; with trace-cmd record -k the instance stays and `save` comes
#    after; a recording of -e stackmap:stack_id alone (no generation in
#    the trace) is resolved by --map of a snapshot whose generation has the
#    ids' 12 bits (0 unresolved; without --map all unresolved, counted), and
#    a snapshot of the next generation is refused
#  - top: --batch shows a workload's stack (do_nanosleep) with a nonzero
#    delta; the curses view in a detached tmux session shows it too
#    (capture-pane) and quits on 'q' with exit 0
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

SC=$HERE/../../build/tools/stackmap-ctl
SR=$HERE/../../build/tools/stackmap-report

check "stackmap-ctl built (make tools)" test -x "$SC"
check "--help" eval '"$SC" --help | grep -q "save FILE"'
check_eq "no command: exit 2" "$("$SC" 2>/dev/null; echo $?)" 2
check_eq "unknown command: exit 2" "$("$SC" nosuch 2>/dev/null; echo $?)" 2
check_eq "an option of another command: exit 2" "$("$SC" status --user 2>/dev/null; echo $?)" 2
check_eq "save without FILE: exit 2" "$("$SC" save 2>/dev/null; echo $?)" 2
cd "$TMPD" || exit 1

# without the module
is_loaded && unload
check_eq "module not loaded: exit 1" "$("$SC" status 2>nl.err; echo $?)" 1
check "  ... saying so" grep -q "ftrace_stackmap is not loaded" nl.err
check "insmod" load bits=12

check_eq "-B nosuch status: exit 1" "$("$SC" -B nosuch status 2>ni.err; echo $?)" 1
check "  ... no such instance" grep -q "no such instance 'nosuch'" ni.err
check "  ... and nothing was created" test ! -d "$T/instances/nosuch"

# enable creates the instance
I=$T/instances/cx
check "-B cx enable sched:sched_switch" eval '"$SC" -B cx enable sched:sched_switch >en.out 2>en.err'
check "  ... says it created the instance" grep -q "created instance 'cx'" en.err
check "  ... the instance exists" test -d "$I"
check_eq "  ... stack_map_events" "$(<"$I/stack_map_events")" "sched:sched_switch"
check_eq "  ... the event is enabled" "$(<"$I/events/sched/sched_switch/enable")" 1
check_eq "  ... options/stackmap" "$(<"$I/options/stackmap")" 1
check_eq "  ... options/stackmap_user off" "$(<"$I/options/stackmap_user")" 0
check "enable again: no 'created'" eval '"$SC" -B cx enable 2>en2.err >/dev/null && ! grep -q created en2.err'

# events
check_eq "events nosuch:event: exit 1" "$("$SC" -B cx events nosuch:event 2>ev.err; echo $?)" 1
check "  ... the module's dmesg reason shown" grep -q "dmesg: ftrace_stackmap.*nosuch" ev.err
check_eq "  ... the set unchanged" "$(<"$I/stack_map_events")" "sched:sched_switch"
check "events: two events" "$SC" -B cx events sched:sched_switch raw_syscalls:sys_enter
check_eq "  ... stack_map_events" "$(tr '\n' ' ' <"$I/stack_map_events")" \
	"sched:sched_switch raw_syscalls:sys_enter "
check_eq "events (show)" "$("$SC" -B cx events | tr '\n' ' ')" \
	"sched:sched_switch raw_syscalls:sys_enter "
check "events sched:sched_switch" "$SC" -B cx events sched:sched_switch

# user stacks on and off
check "enable --user" eval '"$SC" -B cx enable --user >/dev/null'
check_eq "  ... options/stackmap_user" "$(<"$I/options/stackmap_user")" 1
check "disable --user" eval '"$SC" -B cx disable --user >/dev/null'
check_eq "  ... options/stackmap_user off" "$(<"$I/options/stackmap_user")" 0
check_eq "  ... options/stackmap still on" "$(<"$I/options/stackmap")" 1

# status, reset
workload 10
echo 0 >"$I/events/sched/sched_switch/enable"	# entries stay put
check "status" eval '"$SC" -B cx status >st.out'
check "  ... options shown" grep -qE "options/stackmap +on" st.out
check "  ... the source line" grep -q "^  sched:sched_switch: hits=" st.out
e=$(stat_get "$I/stack_map_stat" entries)
check "  ... entries as stack_map_stat" grep -qE "^  entries +$e\$" st.out
echo 1 >"$I/events/sched/sched_switch/enable"
check "status --raw is stack_map_stat" eval '"$SC" -B cx status --raw | grep -q "^inst_id: "'
g=$(stat_get "$I/stack_map_stat" generation)
check "reset" eval '"$SC" -B cx reset >/dev/null'
check_eq "  ... generation + 1" "$(stat_get "$I/stack_map_stat" generation)" $((g + 1))

# the snapshot workflows
sleepy() {
	local i
	for ((i = 0; i < ${1:-20}; i++)); do sleep 0.02; done
}
# trace-cmd 3.1.6 removes the -B instance at its end even when it existed
# before: the snapshot is saved by the recorded command itself, last,
# after it turned the instance's id records off (every id of the trace is
# then in the snapshot, and trace-cmd's tracing_on 0 cannot fall between
# a new stack's stack_id and its stack_def)
trace-cmd record -q -o cx.dat -B cx -e stackmap -e sched:sched_switch \
	bash -c "$(declare -f sleepy); sleepy 20; echo 0 >'$I/options/stackmap'
		'$SC' -B cx save cx.fsmb >sv.out" >rec.out 2>&1
check "trace-cmd record -B cx, the command ends with save" test -s cx.dat
check "  ... saved" test -s cx.fsmb
check "  ... says what it saved" grep -q "kernel stacks" sv.out
check "  ... trace-cmd removed the instance (made before it started)" test ! -d "$I"
# -k keeps the instance: save after the recording
check "-B cx enable again" eval '"$SC" -B cx enable sched:sched_switch >/dev/null 2>&1'
trace-cmd record -k -q -o k.dat -B cx -e stackmap -e sched:sched_switch \
	bash -c "$(declare -f sleepy); sleepy 5" >reck.out 2>&1
check "trace-cmd record -k -B cx: the instance is kept" test -d "$I"
echo 0 >"$I/events/enable"	# -k left the events on: hits stay put
check "save after the recording" eval '"$SC" -B cx save k.fsmb >/dev/null'
cat "$I/stack_map_bin" >now.fsmb
cmp -l k.fsmb now.fsmb | head -5 | sed 's/^/# cmp: /'
check "  ... the file decodes as stack_map_bin does" \
	eval '[ "$("$SR" dump k.fsmb 2>&1)" = "$("$SR" dump now.fsmb 2>&1)" ]'
check "  ... with stacks" eval '"$SR" dump k.fsmb | grep -q "^stack_id "' 
check "disable --remove" eval '"$SC" -B cx disable --remove >/dev/null'
check "  ... the instance is gone" test ! -d "$I"
check "report -i k.dat --map k.fsmb" eval '"$SR" stats -i k.dat --map k.fsmb >k.stats 2>k.err'
"$SR" stats -i cx.dat --top 0 >nomap.stats 2>/dev/null
rec=$(stat_get nomap.stats records)
check "report: records found" [ "${rec:-0}" -gt 0 ]
check "report --map cx.fsmb (the removed instance's snapshot) accepted" \
	eval '"$SR" stats -i cx.dat --top 0 --map cx.fsmb >map.stats 2>map.err'
sed 's/^/# map.err: /' map.err | head -5
check_eq "  ... every id resolved" "$(stat_get map.stats unresolved)" 0
check_eq "  ... same records" "$(stat_get map.stats records)" "$rec"
check "  ... the snapshot holds the sleeps' stack" \
	eval '"$SR" dump cx.fsmb 2>/dev/null | grep -q "do_nanosleep+0x"'
check_eq "save of the removed instance: exit 1" "$("$SC" -B cx save late.fsmb 2>/dev/null; echo $?)" 1

# a recording of stackmap:stack_id alone (no stack_def, no stack_reset: the
# ids carry only their generation's low 12 bits): the snapshot resolves it
# when its generation has those bits; one after a reset is refused
check "-B so enable sched:sched_switch" eval '"$SC" -B so enable sched:sched_switch >/dev/null 2>&1'
trace-cmd record -k -q -o so.dat -B so -e stackmap:stack_id -e sched:sched_switch \
	bash -c "$(declare -f sleepy); sleepy 10" >recso.out 2>&1
echo 0 >"$T/instances/so/events/enable"
check "trace-cmd record -k -B so -e stackmap:stack_id" test -s so.dat
check "save so.fsmb" eval '"$SC" -B so save so.fsmb >/dev/null'
check "reset, save so2.fsmb (the next generation)" \
	eval '"$SC" -B so reset >/dev/null && "$SC" -B so save so2.fsmb >/dev/null'
check "disable --remove so" eval '"$SC" -B so disable --remove >/dev/null'
trace-cmd report -i so.dat 2>/dev/null >so.txt
check_eq "  ... the trace has no stack_def nor stack_reset records" \
	"$(grep -cE ' (stack_def|stack_reset): ' so.txt)" 0
"$SR" stats -i so.dat --top 0 >so-nomap.stats 2>so-nomap.err
rec=$(stat_get so-nomap.stats records)
check "stack_id alone, without --map: records found" [ "${rec:-0}" -gt 0 ]
check_eq "  ... every one unresolved (counted)" "$(stat_get so-nomap.stats unresolved)" "$rec"
check_eq "  ... as many as trace-cmd report's stack_id records" \
	"$(grep -c ' stack_id: ' so.txt)" "$rec"
check "stack_id alone, --map so.fsmb accepted" \
	eval '"$SR" stats -i so.dat --top 0 --map so.fsmb >so-map.stats 2>so-map.err'
sed 's/^/# so-map.err: /' so-map.err | head -5
check_eq "  ... 0 unresolved" "$(stat_get so-map.stats unresolved)" 0
check_eq "  ... same records" "$(stat_get so-map.stats records)" "$rec"
check_fail "stack_id alone, --map of the next generation refused" \
	eval '"$SR" stats -i so.dat --top 0 --map so2.fsmb >/dev/null 2>so2.err'
check "  ... saying the ids carry other generation bits" grep -q "carry generation bits" so2.err

# top, plain text
check "enable sched:sched_switch (top level)" eval '"$SC" enable sched:sched_switch >/dev/null'
sleepy 400 &
wl=$!
check "top --batch" eval '"$SC" top --batch -d 1 --iterations 2 -n 15 >tb.out 2>tb.err'
check "  ... header" grep -q "DELTA" tb.out
check "  ... the workload's stack with a nonzero delta" \
	eval 'grep -E "^ *[1-9][0-9]* .*do_nanosleep" tb.out >/dev/null'

# top in a terminal: tmux
if command -v tmux >/dev/null; then
	export TERM=xterm-256color
	TM=(tmux -S "$TMPD/tmux.sock")
	"${TM[@]}" new-session -d -s top -x 180 -y 40 \
		"'$SC' top -d 1 -n 20; echo \$? >'$TMPD/top.rc'; sleep 30"
	seen=0
	for _ in $(seq 20); do
		nap 1
		"${TM[@]}" capture-pane -p -t top >pane.txt 2>/dev/null
		grep -qE '^ *[1-9][0-9]* +[0-9]+ +[0-9]+ .*do_nanosleep' pane.txt && { seen=1; break; }
	done
	check_eq "tmux: top shows the workload's stack with a nonzero delta" $seen 1
	[ $seen = 1 ] || sed 's/^/# pane: /' pane.txt | head -20
	check "tmux: the header" grep -q "stackmap-ctl top: the top level" pane.txt
	"${TM[@]}" send-keys -t top q
	wait_for "$TMPD/top.rc" 10
	check_eq "tmux: q quits, exit 0" "$(cat "$TMPD/top.rc" 2>/dev/null)" 0
	"${TM[@]}" kill-server 2>/dev/null
else
	ok "# SKIP tmux not installed"
fi
kill $wl 2>/dev/null
wait $wl 2>/dev/null
check "disable (top level)" eval '"$SC" disable >/dev/null'
check_eq "  ... options/stackmap off" "$(<"$T/options/stackmap")" 0
echo >"$T/stack_map_events"
echo 0 >"$T/events/sched/sched_switch/enable"
cd / || exit 1
check "rmmod" unload
finish
