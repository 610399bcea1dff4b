#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/compat/run.sh - TAP tests of scripts/compat-table: the table in
# Documentation/build.rst is the one it generates from what the tests run;
# and the check fails when it should: a guest job dropped from
# scripts/check, a suite in no feature, a cell edited by hand, a run of an
# unknown flavour (each on a copy of the inputs in a temporary tree).
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }

if out=$("$repo/scripts/compat-table" --check "$repo/Documentation/build.rst" 2>&1); then
	ok "the table in Documentation/build.rst is scripts/compat-table's"
else
	bad "the table in Documentation/build.rst is scripts/compat-table's"
	printf '%s\n' "$out" | sed -n '1,40s/^/# /p'
fi

# tree: a copy of what compat-table reads, in $tmp/t
tree() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t/scripts" "$tmp/t/selftests/guest" "$tmp/t/Documentation"
	cp "$repo/scripts/compat-table" "$repo/scripts/compat-table.runs" \
		"$repo/scripts/check" "$tmp/t/scripts/"
	cp "$repo"/selftests/guest/*.sh "$tmp/t/selftests/guest/"
	cp "$repo/Documentation/build.rst" "$tmp/t/Documentation/"
}
# fails WHAT PATTERN: the check of the tree fails, saying PATTERN
fails() {
	local out
	if out=$("$tmp/t/scripts/compat-table" --check "$tmp/t/Documentation/build.rst" 2>&1); then
		bad "$1: the check passed"
	elif grep -q -- "$2" <<<"$out"; then
		ok "$1: the check fails ($2)"
	else
		bad "$1: the check fails, but not with '$2'"
		printf '%s\n' "$out" | sed -n '1,10s/^/# /p'
	fi
}

tree
if "$tmp/t/scripts/compat-table" --check "$tmp/t/Documentation/build.rst" >/dev/null 2>&1; then
	ok "the copied tree passes"
else
	bad "the copied tree passes"
fi

tree
sed -i '/^\techo "stock-ustack stock /d' "$tmp/t/scripts/check"
fails "a guest job dropped from scripts/check" "not what the tests run"

tree
printf '#!/bin/bash\n' >"$tmp/t/selftests/guest/stackmap_new.sh"
fails "a new suite in no feature" "stackmap_new is in no feature"

tree
sed -i '0,/     - check: arm64-ustack/s//     - check: arm64-ustack, arm64-debug/' \
	"$tmp/t/Documentation/build.rst"
fails "a cell edited by hand" "not what the tests run"

tree
echo "nosuch stackmap_basic 1/1 2026-11-28 0000000" >>"$tmp/t/scripts/compat-table.runs"
fails "a run of an unknown flavour" "unknown flavour nosuch"

# An x86-only feature (IBT): "not applicable" in every arm64 column, also
# where an arm64 job runs its suite (which skips there), and the check
# fails when the feature loses its architecture or names an unknown one
row=$("$repo/scripts/compat-table" | sed -n '/(x86 IBT)/,/^   \* - /p')
na=$(grep -c '^     - not applicable (amd64 only)$' <<<"$row")
if [ "$na" = 3 ]; then
	ok "IBT: not applicable in the 3 arm64 columns"
else
	bad "IBT: not applicable in the 3 arm64 columns (got $na)"
	printf '%s\n' "$row" | sed 's/^/# /'
fi
tree
sed -i 's/\["stackmap_ibt"\], \["amd64"\]/["stackmap_ibt"]/' "$tmp/t/scripts/compat-table"
fails "IBT without its architecture" "not what the tests run"
tree
sed -i 's/\["stackmap_ibt"\], \["amd64"\]/["stackmap_ibt"], ["x86"]/' "$tmp/t/scripts/compat-table"
fails "IBT on an unknown architecture" "unknown architecture x86"

echo "1..$n"
[ "$fail" -eq 0 ]
