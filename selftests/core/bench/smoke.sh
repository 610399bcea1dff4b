#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# smoke.sh [EMULATOR] BENCH - run the core benchmark quickly (--quick, under
# EMULATOR, e.g. qemu-aarch64-static, when given) and check that it exits 0
# (its own consistency checks passed) and prints every figure that make
# bench reports, each once, with a number (the 2-thread figures may be
# n/a on one CPU). No timing threshold: any value passes.
set -u
out=$("$@" --quick) || { echo "smoke: '$*' exited $?"; printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out"
bad=0
for name in cpus cpu_source hit_ns_16 seed_hit_ns_16 speedup_vs_seed \
	hit_claim_ns_16 def_claim_cost_ratio def_claims_due_per_1k \
	hit_ns_mixed seed_hit_ns_mixed speedup_vs_seed_mixed \
	hot_hit_ns_16 seed_hot_hit_ns_16 insert_ns_mixed seed_insert_ns_mixed \
	hot_2t_scaling seed_hot_2t_scaling collide_2t_scaling \
	bytes_per_stack bytes_per_stack_with_table seed_bytes_per_stack \
	seed_bytes_per_stack_with_table \
	reset_drop_window_us_bits14 reset_drop_window_us_bits20 \
	reset_call_us_bits14 reset_call_us_bits20; do
	case $name in
	cpu_source) re='(rseq|pinned|getcpu)' ;;
	*2t_scaling) re='([0-9]+(\.[0-9]+)?|n/a)' ;;
	*) re='[0-9]+(\.[0-9]+)?' ;;
	esac
	n=$(printf '%s\n' "$out" | grep -cE "^$name=$re\$")
	if [ "$n" -ne 1 ]; then
		echo "smoke: expected one line '$name=<value>' (matching $re), got $n"
		bad=1
	fi
done
[ $bad -eq 0 ] && echo "smoke: ok"
exit $bad
