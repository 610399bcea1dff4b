#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# module_basic.sh MODULE.ko - load/unload, parameters, the C++ self-check and
# the stack trace through C++ frames. TAP output; run as root in a guest.
set -uo pipefail

ko=${1:?usage: module_basic.sh MODULE.ko}
n=0 failed=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # description command...
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
loaded() { grep -q '^ftrace_stackmap ' /proc/modules; }
unload() { loaded && rmmod ftrace_stackmap; ! loaded; }
mark() { echo "fsm-test-mark $1" > /dev/kmsg; }
since() { dmesg | sed -n "/fsm-test-mark $1/,\$p" | sed 1d; }

unload

# modinfo lists every parameter with a description.
info=$(modinfo "$ko")
check "modinfo: license GPL" grep -q '^license:[[:space:]]*GPL' <<< "$info"
check "modinfo: bits documented with range and default" \
	grep -Eq '^parm:[[:space:]]*bits:.*6\.\.20.*default 14' <<< "$info"
check "modinfo: show_selfcheck_trace documented" \
	grep -q '^parm:[[:space:]]*show_selfcheck_trace:' <<< "$info"

# Bad values are refused with -EINVAL and one clear line, never clamped.
for bad in 5 21 -1 abc 12x 99999999999; do
	mark "bad-$bad"
	out=$(insmod "$ko" bits="$bad" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && ! loaded && grep -q 'Invalid parameters' <<< "$out"; then
		ok "insmod bits=$bad refused with -EINVAL"
	else
		nok "insmod bits=$bad: rc=$rc, out=$out"
		unload
	fi
	check "insmod bits=$bad: one clear dmesg line" \
		test "$(since "bad-$bad" | grep -c "ftrace_stackmap: bits=$bad .*accepted: 6\.\.20")" -eq 1
done

# Good values, bounds included.
for good in 6 12 20; do
	if insmod "$ko" bits=$good && loaded; then
		check "insmod bits=$good: parameter reads back" \
			test "$(cat /sys/module/ftrace_stackmap/parameters/bits)" = "$good"
	else
		nok "insmod bits=$good failed"
	fi
	check "rmmod after bits=$good" unload
done
insmod "$ko" && check "default bits is 14" \
	test "$(cat /sys/module/ftrace_stackmap/parameters/bits)" = 14
check "parameter bits is read-only at runtime" \
	test "$(stat -c %a /sys/module/ftrace_stackmap/parameters/bits)" = 444
unload

# The C++ self-check ran, and a kernel stack trace taken inside C++ frames
# unwinds through them (ORC data from objtool) back into the C caller.
mark selftrace
if insmod "$ko" show_selfcheck_trace=1; then
	log=$(since selftrace)
	check "self-check trace names the C++ frames (fsm::Descend<N>::run)" \
		test "$(grep -c 'selfcheck trace.*_ZN3fsm.*Descend.*3run' <<< "$log")" -ge 4
	check "self-check trace continues into the C init (fsm_init)" \
		grep -q 'selfcheck trace.*fsm_init+' <<< "$log"
	check "self-check trace reaches the module loader (do_init_module)" \
		grep -q 'selfcheck trace.*do_init_module' <<< "$log"
	check "self-check reports success" \
		grep -q 'unwound through [0-9]* C++ frames into the C caller' <<< "$log"
	unload
else
	nok "insmod show_selfcheck_trace=1 failed"
fi

# Repeated load/unload stays clean: no line from us that one load and
# unload does not print (each load reports what it runs with, e.g. where the
# nodes are, and on a kernel without some symbols what is built out: Debian's
# arm64 kernel has no KALLSYMS_ALL), in particular no warning of its own.
ours() { sed 's/^\[[^]]*\] //' | grep -v 'taint' | grep -i 'ftrace_stackmap' | sort -u; }
mark once
insmod "$ko" bits=10 && rmmod ftrace_stackmap
once=$(since once | ours)
mark cycles
cycles_ok=1
for _ in $(seq 1 10); do
	insmod "$ko" bits=10 || cycles_ok=0
	rmmod ftrace_stackmap || cycles_ok=0
done
check "10 load/unload cycles" test $cycles_ok -eq 1
if [ -n "$once" ]; then
	extra=$(since cycles | ours | grep -vxF -e "$once")
else
	extra=$(since cycles | ours)
fi
check "dmesg quiet during load/unload cycles (nothing one load does not print)" \
	test -z "$extra"
[ -z "$extra" ] || printf '# %s\n' "$extra"

echo "1..$n"
exit $((failed > 0))
