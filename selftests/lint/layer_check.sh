#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/lint/layer_check.sh - TAP tests of scripts/layer-check on small
# objects built here: a downward call passes; an upward call, a sideways
# call without an allow line, a circle, an object LAYERS does not place and
# a placed file without an object each fail, naming the call.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
lc=$repo/scripts/layer-check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }

# tree NAME FILE=BODY...: a fresh tree/src/kernel with each FILE compiled
tree() {
	local d=$tmp/$1 f
	shift
	rm -rf "$d"
	mkdir -p "$d/src/kernel"
	for f in "$@"; do
		mkdir -p "$(dirname "$d/src/kernel/${f%%=*}")"
		gcc -c -o "$d/src/kernel/${f%%=*}" -x c - <<< "${f#*=}" ||
			return 1
	done
}
# expect DESC WANT(0|1) REGEX TREE LAYERS-TEXT
expect() {
	local desc=$1 want=$2 re=$3 d=$tmp/$4 rc
	printf '%s\n' "$5" > "$d/src/kernel/LAYERS"
	"$lc" "$d" > "$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -Eq -- "$re" "$tmp/out"; then
		ok "$desc"
	else
		bad "$desc (exit $rc)"
		sed 's/^/# /' "$tmp/out"
	fi
}

top='int low(void); int top(void) { return low(); }'
low='int low(void) { return 1; }'
lowup='int top(void); int low(void) { return top(); }'
side='int low(void); int side(void) { return low(); }'

tree down top.o="$top" low.o="$low"
expect "a downward call passes" 0 'ok: 2 files in 2 layers' down \
	$'# order\ntop: top.c\nbottom: low.c'
expect "the same call upward fails, naming it" 1 \
	'top.c \(bottom\) -> low.c \(top\): low: upward' down \
	$'top: low.c\nbottom: top.c'
expect "a sideways call without an allow line fails" 1 \
	'top.c -> low.c \(one\): low: sideways' down $'one: top.c low.c'
expect "an allow line lets one sideways call pass" 0 'ok:' down \
	$'# why\nallow: top.c -> low.c\none: top.c low.c'
tree circle top.o="$top" low.o="$lowup"
expect "a circle fails, even with allow lines" 1 \
	'circle: (top.c -> low.c -> top.c|low.c -> top.c -> low.c)' circle \
	$'allow: top.c -> low.c\nallow: low.c -> top.c\none: top.c low.c'
tree extra top.o="$top" low.o="$low" compat/x.o="$side"
expect "an object LAYERS does not place fails" 1 \
	'compat/x.o: an object LAYERS does not place' extra \
	$'top: top.c\nbottom: low.c'
expect "a file in a subdirectory is placed by its path" 0 'ok: 3 files' extra \
	$'top: top.c compat/x.c\nallow: top.c -> compat/x.c\nbottom: low.c'
expect "a placed file without an object fails" 1 \
	'gone.c: placed in LAYERS but' down $'top: top.c gone.c\nbottom: low.c'
expect "an allow line across layers is refused" 2 'not in one layer' down \
	$'allow: top.c -> low.c\ntop: top.c\nbottom: low.c'

echo "1..$n"
[ "$fail" -eq 0 ]
