#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_records.sh MODULE.ko - record format 2 (issue 9, items 6 and 4).
#   sizes:  the bytes each record takes in the ring buffer, parsed from
#           per_cpu/cpu*/trace_pipe_raw (rbraw.py): stack_id 16, stack_id_user
#           24, beside options/stacktrace's kernel_stack records for the
#           same source event; one id record per source record
#   order:  resets while both CPUs record: no record of a generation before
#           the stack_reset record that opens it (fsm_check.py resetorder)
#   output: cat trace shows " => " stack lines under each stack_id record,
#           equal to the map's stack, with the default options, sym-offset,
#           sym-addr and raw; after a reset, old records get a marker; and
#           " => path+0xoffset" lines under each user_stack record
# shellcheck disable=SC2016,SC2317 # eval '...' expands later, on purpose
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

# rb_get FILE TYPE FIELD: FIELD (count, bytes, min, max) of event TYPE in
# an rbraw.py output, 0 if absent
rb_get() {
	local l all
	all=$(<"$1")
	while IFS= read -r l; do
		if [[ $l == "type=$2 "* && $l =~ (^| )$3=([0-9]+) ]]; then
			echo "${BASH_REMATCH[2]}"
			return
		fi
	done <<<"$all"
	echo 0
}

check "insmod bits=12" load bits=12
cp /proc/kallsyms "$TMPD/kallsyms"

# ---- sizes ----
for i in sz su st; do
	mkdir "$T/instances/$i"
	wait_for "$T/instances/$i/stack_map"
	echo 4096 >"$T/instances/$i/buffer_size_kb"
	echo 0 >"$T/instances/$i/tracing_on"
done
echo sched:sched_switch >"$T/instances/sz/stack_map_events"
echo sched:sched_switch >"$T/instances/su/stack_map_events"
echo 1 >"$T/instances/sz/options/stackmap"
echo 1 >"$T/instances/su/options/stackmap"
echo 1 >"$T/instances/su/options/stackmap_user"
echo 1 >"$T/instances/st/options/stacktrace"
# the source last: each of its records finds the stack option on
for i in sz su st; do
	echo 1 >"$T/instances/$i/events/sched/sched_switch/enable"
done
# records only once every probe is in place
for i in sz su st; do echo 1 >"$T/instances/$i/tracing_on"; done
workload 20
for i in sz su st; do echo 0 >"$T/instances/$i/tracing_on"; done
echo 0 >"$T/instances/su/options/stackmap_user"
for i in sz su; do echo 0 >"$T/instances/$i/options/stackmap"; done
# the text first (reading trace does not consume), then the raw pages
cp "$T/instances/sz/trace" "$TMPD/sz.trace"
cp "$T/instances/su/trace" "$TMPD/su.trace"
"$PY" "$HERE/rbraw.py" "$T/instances/sz" "$TMPD/sz.rb" \
	"$T/instances/su" "$TMPD/su.rb" "$T/instances/st" "$TMPD/st.rb"
for i in sz su st; do
	while IFS= read -r l; do diag "$i: $l"; done <"$TMPD/$i.rb"
done
sw=$(<"$T/events/sched/sched_switch/id")
sid=$(<"$T/events/stackmap/stack_id/id")
sidu=$(<"$T/events/stackmap/stack_id_user/id")
fb=$(<"$T/events/stackmap/stack_fallback/id")
# the core's kernel_stack entry has a format file but no id file
ks=$(<"$T/events/ftrace/kernel_stack/format")
ks=${ks#*ID: }
ks=${ks%%$'\n'*}
n=$(rb_get "$TMPD/sz.rb" "$sid" count)
check "sizes: stack_id records ($n)" test "$n" -gt 0
check_eq "sizes: every stack_id record takes 16 bytes (min)" "$(rb_get "$TMPD/sz.rb" "$sid" min)" 16
check_eq "sizes: every stack_id record takes 16 bytes (max)" "$(rb_get "$TMPD/sz.rb" "$sid" max)" 16
# Counts: equal but for the ends of the window (a source record just
# before tracing_on went 0, its id record just after, on each CPU); the
# pairing itself is checked record by record in the text (order).
ncpu=$(nproc)
near() { # LABEL IDS SOURCES
	local d=$(($2 - $3))
	diag "$1: $2 id records, $3 source records"
	check "$1: one id record per source record (+-$ncpu at the ends)" \
		test "${d#-}" -le "$ncpu" -a "$3" -gt 0
}
near "sizes" $(($(rb_get "$TMPD/sz.rb" "$sid" count) + $(rb_get "$TMPD/sz.rb" "$fb" count))) \
	"$(rb_get "$TMPD/sz.rb" "$sw" count)"
later sizes.sz order "$TMPD/sz.trace" sched_switch
later sizes.su order "$TMPD/su.trace" sched_switch
n=$(rb_get "$TMPD/su.rb" "$sidu" count)
check "sizes: stack_id_user records with user stacks on ($n)" test "$n" -gt 0
check_eq "sizes: every stack_id_user record takes 24 bytes (min)" "$(rb_get "$TMPD/su.rb" "$sidu" min)" 24
check_eq "sizes: every stack_id_user record takes 24 bytes (max)" "$(rb_get "$TMPD/su.rb" "$sidu" max)" 24
near "sizes (user stacks on)" \
	$(($(rb_get "$TMPD/su.rb" "$sid" count) + $(rb_get "$TMPD/su.rb" "$sidu" count) + \
		$(rb_get "$TMPD/su.rb" "$fb" count))) \
	"$(rb_get "$TMPD/su.rb" "$sw" count)"
kn=$(rb_get "$TMPD/st.rb" "$ks" count)
kb=$(rb_get "$TMPD/st.rb" "$ks" bytes)
check "sizes: options/stacktrace wrote kernel_stack records ($kn)" test "$kn" -gt 0
[ "$kn" -gt 0 ] && diag "sizes: kernel_stack mean $((kb / kn)) bytes (min $(rb_get "$TMPD/st.rb" "$ks" min)), stack_id 16"
check "sizes: a kernel_stack record is larger than a stack_id record" \
	test "$(rb_get "$TMPD/st.rb" "$ks" min)" -gt 16
for i in sz su st; do rmdir "$T/instances/$i"; done

# ---- reset order ----
D=$T/instances/ro
mkdir "$D"
wait_for "$D/stack_map"
echo 8192 >"$D/buffer_size_kb"
echo 'sched:sched_switch sched:sched_wakeup kmem:kmalloc' >"$D/stack_map_events"
for e in sched/sched_switch sched/sched_wakeup kmem/kmalloc; do
	echo 1 >"$D/events/$e/enable"
done
echo 1 >"$D/options/stackmap"
workload 60 &
w1=$!
workload 60 &
w2=$!
for _ in 1 2 3 4 5; do
	nap 0.3
	echo reset >"$D/stack_map"
done
wait $w1 $w2
echo 0 >"$D/options/stackmap"
echo 0 >"$D/events/enable"
cp "$D/trace" "$TMPD/ro.trace"
check_eq "order: 5 resets" "$(stat_get "$D/stack_map_stat" resets)" 5
later order resetorder "$TMPD/ro.trace"
later order selfcontained "$TMPD/ro.trace"
rmdir "$D"

# ---- output ----
D=$T/instances/out
mkdir "$D"
wait_for "$D/stack_map"
echo sched:sched_switch >"$D/stack_map_events"
echo 1 >"$D/events/sched/sched_switch/enable"
echo 1 >"$D/options/stackmap"
workload 10
echo 0 >"$D/options/stackmap"
echo 0 >"$D/events/enable"
cp "$D/stack_map" "$TMPD/out.map"
cp "$D/stack_map_bin" "$TMPD/out.bin"
check_eq "output: sym-offset off by default" "$(<"$D/options/sym-offset")" 0
cp "$D/trace" "$TMPD/out.sym"
echo 1 >"$D/options/sym-offset"
cp "$D/trace" "$TMPD/out.offset"
echo 0 >"$D/options/sym-offset"
echo 1 >"$D/options/sym-addr"
cp "$D/trace" "$TMPD/out.addr"
echo 0 >"$D/options/sym-addr"
echo 1 >"$D/options/raw"
cp "$D/trace" "$TMPD/out.raw"
echo 0 >"$D/options/raw"
check "output: ' => ' lines under stack_id records" has "$TMPD/out.sym" $'\n => '
for m in sym offset addr raw; do
	later "out.$m" tracestack "$TMPD/out.$m" "$TMPD/out.map" "$TMPD/out.bin" "$m"
done
# the format file is unchanged by the output callback
check "output: format file has the one u32 field" \
	has "$D/events/stackmap/stack_id/format" "field:u32 stack_id;	offset:8;	size:4;	signed:0;"
# reset (not recording), record again: old records get the marker
echo reset >"$D/stack_map"
echo 1 >"$D/events/sched/sched_switch/enable"
echo 1 >"$D/options/stackmap"
workload 5
echo 0 >"$D/options/stackmap"
echo 0 >"$D/events/enable"
cp "$D/stack_map" "$TMPD/out2.map"
cp "$D/stack_map_bin" "$TMPD/out2.bin"
cp "$D/trace" "$TMPD/out2.sym"
check "output: marker for stacks of the old generation" has "$TMPD/out2.sym" "reset since"
later out.reset tracestack "$TMPD/out2.sym" "$TMPD/out2.map" "$TMPD/out2.bin" sym stale
rmdir "$D"

# ---- user stacks in the trace file ----
D=$T/instances/uo
mkdir "$D"
wait_for "$D/stack_map"
echo sched:sched_switch >"$D/stack_map_events"
echo 1 >"$D/options/stackmap"
echo 1 >"$D/options/stackmap_user"
echo 1 >"$D/events/sched/sched_switch/enable"
workload 10
echo 0 >"$D/events/enable"
echo 0 >"$D/options/stackmap_user"
echo 0 >"$D/options/stackmap"
cp "$D/trace" "$TMPD/uo.trace"
cp "$D/stack_map" "$TMPD/uo.map"
cp "$D/stack_map_stat" "$TMPD/uo.stat"
check "user output: user_stack records in the trace" has "$TMPD/uo.trace" " user_stack: "
later uo ustacklines "$TMPD/uo.trace" "$TMPD/uo.map" "$TMPD/uo.stat"
rmdir "$D"

# ---- a file name cannot forge trace lines ----
# A program whose path holds a newline: its user frames print the path
# escaped (%pE: "\n"), not as a line of its own that a reader would take
# for a frame or a record.
D=$T/instances/esc
# (in a directory name: the kernel prints a task's comm, the file name, as is)
mkdir -p "$TMPD/x"$'\n'"y-forged"
P=$TMPD/x$'\n'"y-forged/esc-prog"
check "gcc entry.c to a path with a newline" gcc -O1 -fno-omit-frame-pointer \
	-fno-inline -fno-optimize-sibling-calls -o "$P" "$HERE/ustack/entry.c"
mkdir "$D"
wait_for "$D/options/stackmap_user"
echo raw_syscalls:sys_enter >"$D/stack_map_events"
echo 1 >"$D/events/raw_syscalls/sys_enter/enable"
echo 1 >"$D/options/stackmap"
echo 1 >"$D/options/stackmap_user"
echo go | "$P" 3 >/dev/null	# entry.c waits for a line on stdin
echo 0 >"$D/options/stackmap_user"
echo 0 >"$D/options/stackmap"
echo 0 >"$D/events/enable"
cp "$D/trace" "$TMPD/esc.trace"
check "escaped path: the program's frames are in the trace" \
	grep -qF 'x\ny-forged/esc-prog+0x' "$TMPD/esc.trace"
check_eq "escaped path: no line starts with the name's second half" \
	"$(grep -c '^y-forged' "$TMPD/esc.trace")" 0
rmdir "$D"
check "rmmod" unload
finish
