#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ustack_dedup.sh MODULE.ko - deduplicated user stacks: the same call chain
# run repeatedly by one process has one ustack id, whose frames travel in
# the first user_stack record of a recording only (again after the option
# is turned off and on); another process (another address space) gets
# another id; stack_map shows the stack as path+0xoffset frames that
# addr2line resolves to the chain; stack_map_bin v4 (fsmb.py) agrees with
# stack_map and stack_map_stat; "reset" starts a new user map generation.
# shellcheck disable=SC2016 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

CFLAGS=(-O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread)
U=$T/instances/udd
P=$TMPD/chain64
N=30
FSMB=("$PY" -S "$HERE/fsmb.py")

# run_py ARGS: fsmb.py's TAP lines into ours
run_py() {
	local l
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "${l#ok - }" ;;
		"not ok - "*) nok "${l#not ok - }" ;;
		*) echo "$l" ;;
		esac
	done < <("${FSMB[@]}" "$@" 2>&1)
}

# save NAME: with user stacks off, so that the copies (cp walks too) do not
# change the maps between them; on again for the next recording (which
# also starts a new user recording: ids inline again)
# The source events are disabled meanwhile: sources attached as tracepoint
# probes (Debian's arm64 kernel, Documentation/build.rst "arm64") insert
# kernel stacks even with tracing_on 0, and kmem:mm_page_alloc (the fault
# source there) fires all the time: stack_map and stack_map_bin, read one
# after the other, would count different kernel stacks.
save() {
	echo 0 >"$U/options/stackmap_user"
	echo 0 >"$U/events/raw_syscalls/sys_enter/enable"
	echo 0 >"$U/events/$UFAULT_DIR/enable"
	nap 0.2
	cp "$U/trace" "$TMPD/$1.trace"
	cp "$U/stack_map" "$TMPD/$1.map"
	cp "$U/stack_map_bin" "$TMPD/$1.bin"
	cp "$U/stack_map_stat" "$TMPD/$1.stat"
	echo 1 >"$U/events/raw_syscalls/sys_enter/enable"
	echo 1 >"$U/events/$UFAULT_DIR/enable"
	echo 1 >"$U/options/stackmap_user"
}

tracing_clean
check "gcc 64-bit chain" gcc "${CFLAGS[@]}" -o "$P" "$HERE/ustack/chain.c"
check "load" load
mkdir "$U"
echo "raw_syscalls:sys_enter $UFAULT_EV" >"$U/stack_map_events"
echo 8192 >"$U/buffer_size_kb"
echo 1 >"$U/events/raw_syscalls/sys_enter/enable"
echo 1 >"$U/events/$UFAULT_DIR/enable"
check "options/stackmap on" eval "echo 1 > $U/options/stackmap"
s0=$(<"$U/stack_map_stat")
check_eq "no user map before options/stackmap_user" "$(stat_get <(echo "$s0") user_map_allocated)" 0
check "options/stackmap_user on" eval "echo 1 > $U/options/stackmap_user"
check_eq "user map allocated with the option" "$(stat_get "$U/stack_map_stat" user_map_allocated)" 1

# recording 1: a long-lived process (driven through stdin) and a second one.
# Clearing the trace erases the inline records written since the option was
# turned on (the shell's own system calls): a new recording starts with the
# option turned off and on again (Documentation/ustack.rst). (Before sources
# honoured tracing_on, the warm-up's refused records started one by chance.)
echo 0 >"$U/tracing_on"
echo >"$U/trace"
echo 0 >"$U/options/stackmap_user"
echo 1 >"$U/options/stackmap_user"
coproc CH { exec "$P" "$N" stdin; }
pid1=$CH_PID
read -r -t 120 -u "${CH[0]}" _	# first batch ran before tracing: warm-up
echo 1 >"$U/tracing_on"
echo >&"${CH[1]}"
read -r -t 120 -u "${CH[0]}" l
check_eq "pid1 batch 1 done" "$l" "done"
"$P" "$N" &
pid2=$!
wait $pid2
echo 0 >"$U/tracing_on"
save r1

# recording 2: option off and on again (save), a new recording, same process
check "options/stackmap_user on again" eval "[ \$(<$U/options/stackmap_user) = 1 ]"
echo >"$U/trace"
echo 1 >"$U/tracing_on"
echo >&"${CH[1]}"
read -r -t 120 -u "${CH[0]}" l
check_eq "pid1 batch 2 done" "$l" "done"
echo 0 >"$U/tracing_on"
save r2

# recording 3: reset, then the same process once more
g0=$(stat_get "$U/stack_map_stat" user_generation)
echo >"$U/trace"
echo 1 >"$U/tracing_on"
check "echo reset > stack_map" eval "echo reset > $U/stack_map"
echo >&"${CH[1]}"
read -r -t 120 -u "${CH[0]}" l
check_eq "pid1 batch 3 done" "$l" "done"
echo 0 >"$U/tracing_on"
eval "exec ${CH[1]}>&-"
wait "$pid1"
save r3
g1=$(stat_get "$TMPD/r3.stat" user_generation)
check_eq "reset: user_generation $g0 -> $((g0 + 1))" "$g1" $((g0 + 1))
check "reset marker in the trace (user_stack flags RESET, gen $g1)" eval \
	'grep -Eq "user_stack: cookie=0x0 ustack_id=4294967295 gen=$g1 .*flags=0x40 " $TMPD/r3.trace'

echo 0 >"$U/options/stackmap_user"
echo 0 >"$U/options/stackmap"

for r in r1 r2 r3; do
	diag "$r: $(grep -c ' user_stack: ' "$TMPD/$r.trace") user_stack records"
done
while IFS= read -r l; do case $l in user*) diag "r2 stat: $l" ;; esac; done <"$TMPD/r2.stat"

# the stack_map header words of both kernels (aarch32 on arm64, unreliable)
run_py headers hdr
run_py dedup r1 "$TMPD/r1.trace" "$P" "$pid1" "$pid2"
run_py dedup r2 "$TMPD/r2.trace" "$P" "$pid1" reinline
run_py dedup r3 "$TMPD/r3.trace" "$P" "$pid1"
id1=$("${FSMB[@]}" idof r1 "$TMPD/r1.trace" "$P" "$pid1")
id2=$("${FSMB[@]}" idof r2 "$TMPD/r2.trace" "$P" "$pid1")
id3=$("${FSMB[@]}" idof r3 "$TMPD/r3.trace" "$P" "$pid1")
check_eq "same process, same chain: same (gen id) after re-enabling" "$id2" "$id1"
check "after reset: the chain has an id of generation $g1" eval '[ "${id3%% *}" = "$g1" ]'
run_py mapchain r2 "$TMPD/r2.map" "$P" "${id2#* }"
run_py mapchain r3 "$TMPD/r3.map" "$P" "${id3#* }"
run_py binmap r2 "$TMPD/r2.bin" "$TMPD/r2.map" "$TMPD/r2.stat"
run_py binmap r3 "$TMPD/r3.bin" "$TMPD/r3.map" "$TMPD/r3.stat"

rmdir "$U"
finish
