#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# With no daemon (or a dead one), $NFT (build/nftdp-nft) must fail the way
# nft fails without netlink, and never fall back to the kernel: run in a
# scratch network namespace and check its ruleset stays empty.
# Needs root (ip netns); exits 77 (skipped) otherwise.
set -u
NFT=${NFT:?NFT must point to build/nftdp-nft}
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root"; exit 77; }
command -v ip >/dev/null || { echo "skip: no ip(8)"; exit 77; }

ns=nftdp-test-$$
tmp=$(mktemp -d /tmp/nftdp-shim-XXXXXX)
cleanup() {
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns" || { echo "skip: cannot create a network namespace"; exit 77; }

fail() {
	echo "FAIL: $*"
	exit 1
}

# $1: socket path, $2: the errno text nft must print
expect_fail() {
	local sock=$1 err=$2 out rc
	for cmd in "list ruleset" "add table ip nftdp_leak" "flush ruleset"; do
		# shellcheck disable=SC2086
		out=$(NFTDP_SOCKET=$sock ip netns exec "$ns" "$NFT" $cmd 2>&1)
		rc=$?
		[ "$rc" -ne 0 ] || fail "'nft $cmd' succeeded without a daemon"
		case $out in
		*"Unable to initialize Netlink socket: $err"*) ;;
		*) fail "'nft $cmd': unexpected output: $out" ;;
		esac
	done
}

# Nothing at the path: ENOENT.
expect_fail "$tmp/missing/nfnetlink.sock" "No such file or directory"
# A stale socket file nobody listens on: ECONNREFUSED.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$tmp/stale.sock" || fail "cannot create a stale socket"
expect_fail "$tmp/stale.sock" "Connection refused"
# The default path, when no daemon runs there.
if [ ! -S /run/nftdp/nfnetlink.sock ]; then
	out=$(env -u NFTDP_SOCKET ip netns exec "$ns" "$NFT" list ruleset 2>&1) &&
		fail "default socket: nft succeeded"
	case $out in
	*"Unable to initialize Netlink socket"*) ;;
	*) fail "default socket: unexpected output: $out" ;;
	esac
fi

# And the kernel of that namespace never saw anything.
left=$(ip netns exec "$ns" nft list ruleset) || fail "kernel nft failed in $ns"
[ -z "$left" ] || fail "the kernel ruleset changed: $left"
echo ok
