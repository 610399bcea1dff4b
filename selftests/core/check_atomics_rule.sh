#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check_atomics_rule.sh SRCDIR - the one rule for atomics in src/core
# (platform.h): every atomic access goes through fsm::Atomic<T> or
# fsm::AtomicRef<T>, so no file of SRCDIR but platform.h may call an
# __atomic builtin (or the legacy __sync ones). Comments are ignored.
# Prints TAP; exits non-zero if a file breaks the rule.
set -u
src=${1:?usage: check_atomics_rule.sh SRCDIR}
n=0
fail=0
for f in "$src"/*.h "$src"/*.cpp; do
	[ -f "$f" ] || continue
	case ${f##*/} in
	platform.h) continue ;;
	esac
	n=$((n + 1))
	# Strip /* */ and // comments, then look for the builtins.
	hits=$(sed -e 's|//.*||' "$f" |
		awk '{
			line = $0
			while (line != "") {
				if (inc) {
					e = index(line, "*/")
					if (!e) { line = ""; break }
					line = substr(line, e + 2); inc = 0
				}
				s = index(line, "/*")
				if (!s) { out = out line; break }
				out = out substr(line, 1, s - 1); line = substr(line, s + 2); inc = 1
			}
			if (out ~ /__atomic_|__sync_/) print NR ": " out
			out = ""
		}')
	if [ -n "$hits" ]; then
		fail=$((fail + 1))
		echo "not ok $n - ${f##*/}: raw atomic builtins (use fsm::Atomic/AtomicRef)"
		echo "$hits" | sed 's/^/# /'
	else
		echo "ok $n - ${f##*/}"
	fi
done
echo "1..$n"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]
