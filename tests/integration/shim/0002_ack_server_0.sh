#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The shim against a stand-in daemon (ack_server: control/server.c answering
# every message with an ACK): shim_client.py checks the socket calls as nft
# and libmnl make them, then the stock nft runs a few commands through it.
set -u
NFT=${NFT:?NFT must point to build/nftdp-nft}
SHIM=${SHIM:?SHIM must be the LD_PRELOAD list for libnftdp_shim.so}
ACK_SERVER=${ACK_SERVER:?ACK_SERVER must point to the ack_server binary}
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d /tmp/nftdp-shim-XXXXXX)
export NFTDP_SOCKET=$tmp/run/nfnetlink.sock
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

"$ACK_SERVER" "$NFTDP_SOCKET" &
pid=$!
for _ in $(seq 100); do
	[ -S "$NFTDP_SOCKET" ] && break
	sleep 0.05
done
[ -S "$NFTDP_SOCKET" ] || fail "ack_server did not start"

# (python's own leaks are not ours to report in a sanitizer build)
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} LD_PRELOAD=$SHIM python3 "$here/shim_client.py" ||
	fail "shim_client.py"

# nft itself: every request gets an ACK, so listings are empty and batches
# succeed; what matters is that nft runs to completion on the shim.
for cmd in "list ruleset" "add table ip t" "flush ruleset"; do
	# shellcheck disable=SC2086
	out=$("$NFT" $cmd 2>&1) || fail "'nft $cmd' failed: $out"
done

# The socket is 0660 root: anyone else is refused by connect(), and nft says so.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$NFT" list ruleset 2>&1) &&
		fail "an unprivileged user reached the daemon"
	case $out in
	*"Unable to initialize Netlink socket: Permission denied"*) ;;
	*) fail "unprivileged: unexpected output: $out" ;;
	esac
fi
echo ok
