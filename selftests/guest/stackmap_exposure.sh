#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stackmap_exposure.sh MODULE.ko - kernel addresses follow the policy of
# /proc/kallsyms: stack_map_bin and stack_map give them to a reader whose
# credentials may see them (root), zeros to others (a non-root user, root
# without CAP_SYSLOG, anyone with kptr_restrict=2). The nodes are made
# readable to others for the test, as a tracefs gid= mount would.
export KO=${1:-}
# shellcheck source=selftests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
NOSYSLOG=(setpriv --inh-caps=-syslog --bounding-set=-syslog --)
KR=/proc/sys/kernel/kptr_restrict

check "insmod" load bits=10
echo sched:sched_switch >"$T/stack_map_events"
echo 1 >"$T/events/sched/sched_switch/enable"
echo 1 >"$T/options/stackmap"
workload 10
echo 0 >"$T/options/stackmap"
echo 0 >"$T/events/sched/sched_switch/enable"

kr=$(<"$KR")
diag "kptr_restrict $kr, perf_event_paranoid $(</proc/sys/kernel/perf_event_paranoid)"
mode_t=$(stat -c %a "$T")
chmod o+x "$T"
chmod o+r "$T/stack_map" "$T/stack_map_bin"

k=$("${NOBODY[@]}" head -c 16 /proc/kallsyms)
check_eq "kallsyms hides addresses from uid 65534 (premise)" "$k" 0000000000000000
k=$("${NOSYSLOG[@]}" head -c 16 /proc/kallsyms)
check_eq "kallsyms hides them from root without CAP_SYSLOG (premise)" "$k" 0000000000000000

cp "$T/stack_map_bin" "$TMPD/root.bin"
cp "$T/stack_map" "$TMPD/root.map"
check "uid 65534 reads stack_map_bin" \
	eval '"${NOBODY[@]}" cat "$T/stack_map_bin" >"$TMPD/nobody.bin"'
check "uid 65534 reads stack_map" \
	eval '"${NOBODY[@]}" cat "$T/stack_map" >"$TMPD/nobody.map"'
check "root without CAP_SYSLOG reads stack_map_bin" \
	eval '"${NOSYSLOG[@]}" cat "$T/stack_map_bin" >"$TMPD/nosyslog.bin"'
echo 2 >"$KR"
cp "$T/stack_map_bin" "$TMPD/kr2.bin"
k=$(head -c 16 /proc/kallsyms)
echo "$kr" >"$KR"
check_eq "kptr_restrict=2: kallsyms hides them from root too (premise)" \
	"$k" 0000000000000000

# stack_map: symbols as before; a frame that resolves to no symbol (raw
# address for root) is 0x0000000000000000 for the others
mapfile -t rm <"$TMPD/root.map"
mapfile -t nm <"$TMPD/nobody.map"
bad=0
raw=0
for i in "${!rm[@]}"; do
	want=${rm[$i]}
	if [[ $want =~ ^(\ +\[[0-9]+\]\ )0x[0-9a-f]+$ ]]; then
		want="${BASH_REMATCH[1]}0x0000000000000000"
		raw=$((raw + 1))
	fi
	[ "${nm[$i]-}" = "$want" ] || bad=$((bad + 1))
done
diag "stack_map: ${#rm[@]} lines, $raw raw addresses for root"
check_eq "stack_map for uid 65534: same lines, no address" \
	"$bad ${#nm[@]}" "0 ${#rm[@]}"
check "stack_map for uid 65534 holds no non-zero raw address" \
	eval "! grep -Eq '^ +\[[0-9]+\] 0x0*[1-9a-f]' $TMPD/nobody.map"

chmod o-r "$T/stack_map" "$T/stack_map_bin"
chmod "$mode_t" "$T"

later "root" bin "$TMPD/root.bin"
later "root" kaddr "$TMPD/root.bin" shown
later "uid65534" kaddr "$TMPD/nobody.bin" hidden "$TMPD/root.bin"
later "nosyslog" kaddr "$TMPD/nosyslog.bin" hidden "$TMPD/root.bin"
later "kptr_restrict2" kaddr "$TMPD/kr2.bin" hidden "$TMPD/root.bin"

check "rmmod" unload
finish
