# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers shared by the QEMU test-loop scripts. Source it; do not run it.
#
#   FSM_CACHE          every cache (stock image, debug kernel, initramfs) lives
#                      here, outside the work tree
#   FSM_ROOT           the checkout this file belongs to
#   fsm_log/fsm_warn   messages on stderr, prefixed with the script name
#   fsm_die            message on stderr, exit 1
#   fsm_stock_abi      Debian ABI of the stock kernel, e.g. 6.1.0-56-amd64
#   fsm_lock NAME      take an exclusive lock (held until the shell exits or
#                      fsm_unlock)

FSM_CACHE=${FSM_CACHE:-$HOME/.cache/ftrace_stackmap}
export FSM_CACHE
FSM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this file
FSM_SCRIPTS=$FSM_ROOT/scripts
FSM_PROG=${FSM_PROG:-$(basename "$0")}

fsm_log() { printf '%s: %s\n' "$FSM_PROG" "$*" >&2; }
fsm_warn() { printf '%s: warning: %s\n' "$FSM_PROG" "$*" >&2; }
fsm_die() {
	printf '%s: error: %s\n' "$FSM_PROG" "$*" >&2
	exit 1
}

fsm_need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			fsm_die "'$c' not found; run scripts/deps"
	done
}

# Exclusive lock on $FSM_CACHE/locks/NAME.lock, held until this shell exits.
# Builds of the same cache entry from concurrent shells serialise on it.
# fsm_unlock releases the most recent one early.
fsm_lock() {
	local f=$FSM_CACHE/locks/$1.lock
	mkdir -p "$FSM_CACHE/locks"
	exec {FSM_LOCK_FD}>"$f"
	if ! flock -n "$FSM_LOCK_FD"; then
		fsm_log "waiting for lock $f"
		flock "$FSM_LOCK_FD"
	fi
}
fsm_unlock() {
	if [ -n "${FSM_LOCK_FD:-}" ]; then
		exec {FSM_LOCK_FD}>&-
		FSM_LOCK_FD=""
	fi
}

# The ABI ("6.1.0-56-amd64") the meta package linux-image-amd64 points at:
# the installed meta package if there is one, else apt's candidate.
# FSM_STOCK_ABI overrides (for experiments only).
fsm_stock_abi() {
	if [ -n "${FSM_STOCK_ABI:-}" ]; then
		printf '%s\n' "$FSM_STOCK_ABI"
		return
	fi
	local deps="" ver abi key memo=$FSM_CACHE/stock-abi.memo
	# apt-cache takes seconds: remember the answer until dpkg's status or
	# apt's lists change.
	key="$(stat -c %Y /var/lib/dpkg/status 2>/dev/null):$(stat -c %Y /var/lib/apt/lists 2>/dev/null)"
	if [ -r "$memo" ] && [ "$(sed -n 1p "$memo")" = "$key" ]; then
		sed -n 2p "$memo"
		return
	fi
	if dpkg-query -W -f='${Status}' linux-image-amd64 2>/dev/null |
		grep -q 'install ok installed'; then
		deps=$(dpkg-query -W -f='${Depends}' linux-image-amd64)
	else
		ver=$(apt-cache policy linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Candidate: *//p')
		if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
			fsm_log "apt knows no linux-image-amd64; running apt-get update"
			apt-get update -qq >&2 || fsm_die "apt-get update failed"
			ver=$(apt-cache policy linux-image-amd64 |
				sed -n 's/^ *Candidate: *//p')
		fi
		if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
			fsm_die "apt has no candidate for linux-image-amd64"
		fi
		deps=$(apt-cache show "linux-image-amd64=$ver" |
			awk '/^Depends: / && !n++ { sub(/^Depends: /, ""); print }')
	fi
	abi=$(printf '%s\n' "$deps" | tr ',|' '\n' |
		sed -n 's/^ *linux-image-\([0-9][^ ]*-amd64\)\( .*\)\{0,1\}$/\1/p' |
		head -n1)
	[ -n "$abi" ] || fsm_die "cannot parse the ABI from linux-image-amd64 Depends: '$deps'"
	mkdir -p "$FSM_CACHE"
	printf '%s\n%s\n' "$key" "$abi" >"$memo.$$" && mv -f "$memo.$$" "$memo"
	printf '%s\n' "$abi"
}

# Seconds (with one decimal) since an EPOCHREALTIME value.
fsm_elapsed() {
	local start=$1 now=$EPOCHREALTIME
	awk -v a="$start" -v b="$now" 'BEGIN { printf "%.1f", b - a }'
}

# --- arm64 packages without a dpkg architecture -------------------------------
# apt with a state of its own under $FSM_CACHE/apt-arm64 (package lists,
# downloads, an empty dpkg status): the host's dpkg never learns about arm64,
# and nothing is installed. The sources are the host's (/etc/apt).
FSM_ARM64_APT=$FSM_CACHE/apt-arm64
fsm_arm64_apt_opts() {
	printf '%s\n' -o APT::Architecture=arm64 -o APT::Architectures::=arm64 \
		-o "Dir::State::Lists=$FSM_ARM64_APT/lists" \
		-o "Dir::Cache=$FSM_ARM64_APT/cache" \
		-o "Dir::State::status=$FSM_ARM64_APT/status"
}
# fsm_arm64_apt apt-get|apt-cache ARGS...: run it with the arm64 state;
# the lists are fetched on first use (and again by fsm_arm64_apt_update).
fsm_arm64_apt() {
	local tool=$1 opts
	shift
	mapfile -t opts < <(fsm_arm64_apt_opts)
	if [ ! -e "$FSM_ARM64_APT/lists/.fsm-updated" ]; then
		fsm_arm64_apt_update
	fi
	"$tool" "${opts[@]}" "$@"
}
fsm_arm64_apt_update() {
	local opts
	mapfile -t opts < <(fsm_arm64_apt_opts)
	mkdir -p "$FSM_ARM64_APT/lists/partial" "$FSM_ARM64_APT/cache/archives/partial"
	[ -e "$FSM_ARM64_APT/status" ] || : >"$FSM_ARM64_APT/status"
	# apt's sandbox user downloads there
	chown -R _apt "$FSM_ARM64_APT/lists" "$FSM_ARM64_APT/cache" 2>/dev/null || true
	fsm_log "apt-get update (arm64 lists in $FSM_ARM64_APT)"
	apt-get "${opts[@]}" update -qq >&2 || fsm_die "apt-get update for arm64 failed"
	touch "$FSM_ARM64_APT/lists/.fsm-updated"
}

# The ABI ("6.1.0-56-arm64") of Debian's arm64 kernel: the candidate of the
# meta package linux-image-arm64 in the arm64 lists. It must be the ABI of
# the amd64 kernel (fsm_stock_abi) with -arm64: the same kernel version,
# tested on both architectures. FSM_ARM64_ABI overrides (experiments only).
fsm_arm64_abi() {
	if [ -n "${FSM_ARM64_ABI:-}" ]; then
		printf '%s\n' "$FSM_ARM64_ABI"
		return
	fi
	local ver deps abi amd
	ver=$(fsm_arm64_apt apt-cache policy linux-image-arm64 2>/dev/null |
		sed -n 's/^ *Candidate: *//p')
	[ -n "$ver" ] && [ "$ver" != "(none)" ] ||
		fsm_die "no arm64 candidate for linux-image-arm64 (lists in $FSM_ARM64_APT)"
	deps=$(fsm_arm64_apt apt-cache show "linux-image-arm64=$ver" |
		awk '/^Depends: / && !n++ { sub(/^Depends: /, ""); print }')
	abi=$(printf '%s\n' "$deps" | tr ',|' '\n' |
		sed -n 's/^ *linux-image-\([0-9][^ ]*-arm64\)\( .*\)\{0,1\}$/\1/p' |
		sed -n 1p)
	[ -n "$abi" ] || fsm_die "cannot parse the ABI from linux-image-arm64 Depends: '$deps'"
	amd=$(fsm_stock_abi)
	if [ "${abi%-arm64}" != "${amd%-amd64}" ]; then
		fsm_log "arm64 lists give $abi, amd64 has $amd: refreshing the arm64 lists"
		fsm_arm64_apt_update
		FSM_ARM64_RETRIED=${FSM_ARM64_RETRIED:-0}
		[ "$FSM_ARM64_RETRIED" = 0 ] ||
			fsm_die "Debian's arm64 kernel ABI $abi is not the amd64 one ($amd): run apt-get update (and scripts/deps) so both are current"
		FSM_ARM64_RETRIED=1 fsm_arm64_abi
		return
	fi
	printf '%s\n' "$abi"
}

# --- Debian 13 (trixie) packages, amd64 and arm64 -----------------------------
# apt with a state of its own under $FSM_CACHE/apt-trixie: its own sources
# (trixie and trixie-security, main), both architectures, an empty dpkg
# status. The host (Debian 12) learns nothing; nothing is installed. The
# kernels of the trixie* flavours (scripts/kernel-trixie) are resolved and
# downloaded through it. FSM_DEBIAN_MIRROR / FSM_DEBIAN_SECURITY_MIRROR
# override the mirrors.
#
# The same helpers serve the other suites a kernel comes from, one apt
# state each (fsm_deb_suite picks it; trixie is the default):
#   trixie     trixie + trixie-security      $FSM_CACHE/apt-trixie
#   backports  trixie-backports only         $FSM_CACHE/apt-backports
#   sid        sid (unstable) only           $FSM_CACHE/apt-sid
# backports alone in its sources: with trixie beside it, apt's candidate for
# linux-image-amd64 would be trixie's (backports has priority 100).
FSM_DEB_SUITE=trixie
FSM_TRIXIE_APT=$FSM_CACHE/apt-trixie
# fsm_deb_suite trixie|backports|sid: the suite the fsm_trixie_* helpers
# below resolve and download from (their apt state and sources).
fsm_deb_suite() {
	case $1 in
	trixie | backports | sid) ;;
	*) fsm_die "unknown Debian suite '$1' (trixie, backports or sid)" ;;
	esac
	FSM_DEB_SUITE=$1
	FSM_TRIXIE_APT=$FSM_CACHE/apt-$1
}
# the sources.list lines of the suite in use
fsm_deb_sources() {
	local mirror=${FSM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
	local sec=${FSM_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
	local keys=/usr/share/keyrings/debian-archive-keyring.gpg
	case $FSM_DEB_SUITE in
	trixie)
		printf '%s\n' "deb [signed-by=$keys] $mirror trixie main" \
			"deb [signed-by=$keys] $sec trixie-security main"
		;;
	backports) printf '%s\n' "deb [signed-by=$keys] $mirror trixie-backports main" ;;
	sid) printf '%s\n' "deb [signed-by=$keys] $mirror sid main" ;;
	esac
}
fsm_trixie_apt_opts() {
	printf '%s\n' -o APT::Architecture=amd64 \
		-o APT::Architectures::=amd64 -o APT::Architectures::=arm64 \
		-o "Dir::Etc::SourceList=$FSM_TRIXIE_APT/sources.list" \
		-o "Dir::Etc::SourceParts=$FSM_TRIXIE_APT/empty" \
		-o "Dir::Etc::PreferencesParts=$FSM_TRIXIE_APT/empty" \
		-o "Dir::Etc::Preferences=$FSM_TRIXIE_APT/empty/none" \
		-o "Dir::State::Lists=$FSM_TRIXIE_APT/lists" \
		-o "Dir::Cache=$FSM_TRIXIE_APT/cache" \
		-o "Dir::State::status=$FSM_TRIXIE_APT/status"
}
# fsm_trixie_apt apt-get|apt-cache ARGS...: run it with the trixie state;
# the lists are fetched on first use and when older than a day
# (FSM_TRIXIE_REFRESH=1: now), so that a new kernel in trixie-security is
# seen.
fsm_trixie_apt() {
	local tool=$1 opts
	shift
	mapfile -t opts < <(fsm_trixie_apt_opts)
	fsm_trixie_lists
	"$tool" "${opts[@]}" "$@"
}
# fetch the lists if missing, older than a day, or FSM_TRIXIE_REFRESH=1
fsm_trixie_lists() {
	if [ "${FSM_TRIXIE_REFRESH:-0}" = 1 ] ||
		[ ! -e "$FSM_TRIXIE_APT/lists/.fsm-updated" ] ||
		[ -n "$(find "$FSM_TRIXIE_APT/lists/.fsm-updated" -mmin +1440 2>/dev/null)" ]; then
		fsm_trixie_apt_update
		FSM_TRIXIE_REFRESH=0
	fi
}
fsm_trixie_apt_update() {
	local opts
	mapfile -t opts < <(fsm_trixie_apt_opts)
	mkdir -p "$FSM_TRIXIE_APT/lists/partial" "$FSM_TRIXIE_APT/cache/archives/partial" \
		"$FSM_TRIXIE_APT/empty"
	[ -e "$FSM_TRIXIE_APT/status" ] || : >"$FSM_TRIXIE_APT/status"
	fsm_deb_sources >"$FSM_TRIXIE_APT/sources.list"
	chown -R _apt "$FSM_TRIXIE_APT/lists" "$FSM_TRIXIE_APT/cache" 2>/dev/null || true
	fsm_log "apt-get update ($FSM_DEB_SUITE lists in $FSM_TRIXIE_APT)"
	apt-get "${opts[@]}" update -qq >&2 || fsm_die "apt-get update for $FSM_DEB_SUITE failed"
	touch "$FSM_TRIXIE_APT/lists/.fsm-updated"
}

# fsm_trixie_abi amd64|arm64: the ABI ("6.12.57+deb13-amd64") of Debian 13's
# kernel, from the meta package linux-image-ARCH: apt's candidate over
# trixie and trixie-security, i.e. the newest of the two (of the suite
# fsm_deb_suite chose: trixie-backports' newest, sid's). The arm64 ABI must
# be the amd64 one with -arm64 (the same kernel version on both
# architectures). FSM_TRIXIE_ABI (amd64's; FSM_BACKPORTS_ABI, FSM_SID_ABI
# for the other suites) overrides, for experiments only.
fsm_trixie_abi() {
	local arch=$1 ver deps abi key memo=$FSM_TRIXIE_APT/abi-$1.memo
	local ovr=FSM_${FSM_DEB_SUITE^^}_ABI
	if [ -n "${!ovr:-}" ]; then
		printf '%s\n' "${!ovr%-amd64}-$arch"
		return
	fi
	# apt-cache takes seconds: remember the answer until the lists change.
	fsm_trixie_lists
	key=$(stat -c %Y "$FSM_TRIXIE_APT/lists/.fsm-updated")
	if [ -r "$memo" ] && [ "$(sed -n 1p "$memo")" = "$key" ]; then
		sed -n 2p "$memo"
		return
	fi
	ver=$(fsm_trixie_apt apt-cache policy "linux-image-$arch:$arch" 2>/dev/null |
		sed -n 's/^ *Candidate: *//p')
	[ -n "$ver" ] && [ "$ver" != "(none)" ] ||
		fsm_die "no $FSM_DEB_SUITE candidate for linux-image-$arch (lists in $FSM_TRIXIE_APT)"
	deps=$(fsm_trixie_apt apt-cache show "linux-image-$arch:$arch=$ver" |
		awk '/^Depends: / && !n++ { sub(/^Depends: /, ""); print }')
	abi=$(printf '%s\n' "$deps" | tr ',|' '\n' |
		sed -n "s/^ *linux-image-\([0-9][^ ]*-$arch\)\( .*\)\{0,1\}\$/\1/p" |
		sed -n 1p)
	[ -n "$abi" ] || fsm_die "cannot parse the ABI from linux-image-$arch Depends: '$deps'"
	printf '%s\n%s\n' "$key" "$abi" >"$memo.$$" && mv -f "$memo.$$" "$memo"
	printf '%s\n' "$abi"
}
# fsm_trixie_version ABI: the Debian version of linux-image-ABI (amd64),
# remembered as fsm_trixie_abi's answer is.
fsm_trixie_version() {
	local abi=$1 key ver memo=$FSM_TRIXIE_APT/version-$1.memo
	fsm_trixie_lists
	key=$(stat -c %Y "$FSM_TRIXIE_APT/lists/.fsm-updated")
	if [ -r "$memo" ] && [ "$(sed -n 1p "$memo")" = "$key" ]; then
		sed -n 2p "$memo"
		return
	fi
	ver=$(fsm_trixie_apt apt-cache show "linux-image-$abi:amd64" |
		awk '/^Version: / { v = $2 } END { print v }')
	[ -n "$ver" ] || fsm_die "no version of linux-image-$abi in the $FSM_DEB_SUITE lists"
	printf '%s\n%s\n' "$key" "$ver" >"$memo.$$" && mv -f "$memo.$$" "$memo"
	printf '%s\n' "$ver"
}
# fsm_deb_host_gcc ABI: the compiler Debian built the amd64 kernel ABI
# with, from its headers package's dependency gcc-N-for-host ("gcc-14"):
# the build root of that suite must have gcc-N and g++-N.
fsm_deb_host_gcc() {
	local abi=$1 ver gcc
	ver=$(fsm_trixie_version "$abi")
	gcc=$(fsm_trixie_apt apt-cache show "linux-headers-$abi:amd64=$ver" 2>/dev/null |
		awk '/^Depends: / && !n++ { sub(/^Depends: /, ""); print }' | tr ',|' '\n' |
		sed -n 's/^ *\(gcc-[0-9][0-9]*\)-for-host\( .*\)\{0,1\}$/\1/p' | sed -n 1p)
	[ -n "$gcc" ] || fsm_die "linux-headers-$abi names no gcc-N-for-host ($FSM_DEB_SUITE)"
	printf '%s\n' "$gcc"
}
