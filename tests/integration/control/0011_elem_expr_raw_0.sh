#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Elements with expressions of their own in sets that declare none (a
# quota, a counter with a limit, a counter; nft_add_set_elem takes them,
# nft 1.0.6 cannot send them: elem_expr_msg.py does), in the batch that
# creates the set and in a later one (nftdp makes the set's dataplane copy
# again, control/build.c set_regrow), then a commit that leaves the sets
# alone: the daemon as deployed (rules compiled) takes each batch as the
# kernel in a scratch netns does and lists the same ruleset after each.
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/nftdp-eer-XXXXXX)
ns=nftdp-eer-$$
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-eer-$$" # the EAL leaves its runtime folder
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$tmp/daemon.log"; exit 1; }
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-eer-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
ip netns add "$ns" || fail "netns"
ino=$(stat -L -c %i /proc/self/ns/net)
shim=$(sed -n 's/^preload="\(.*\)"$/\1/p' "$BUILD/nftdp-nft")
[ -r "$shim" ] || fail "no shim at '$shim'"
dp() { LD_PRELOAD=$shim timeout 20 python3 "$HERE/elem_expr_msg.py" "$1"; }
kn() { timeout 20 ip netns exec "$ns" python3 "$HERE/elem_expr_msg.py" "$1" "$ino"; }
same() {
	timeout 60 ip netns exec "$ns" nft list ruleset > "$tmp/k.txt" 2>&1
	timeout 60 "$BUILD/nftdp-nft" list ruleset > "$tmp/d.txt" 2>&1
	grep -q 10.1.0.1 "$tmp/k.txt" || fail "$1: the kernel lists no elements"
	diff -u "$tmp/k.txt" "$tmp/d.txt" || fail "$1: listings differ"
}
for b in create later; do
	k=$(kn $b) || fail "kernel $b: $k"
	d=$(dp $b) || fail "nftdp $b: $d"
	[ "$k" = ok ] || fail "the kernel refused $b: $k"
	[ "$d" = "$k" ] || fail "$b: kernel '$k', nftdp '$d'"
	same $b
done
# a commit that does not touch the sets keeps their elements
ip netns exec "$ns" nft add chain ip x other || fail "kernel add chain"
"$BUILD/nftdp-nft" add chain ip x other || fail "nftdp add chain"
same "unrelated commit"
grep -q "commit refused" "$tmp/daemon.log" && fail "a commit was refused"
echo "elem-expr-raw: ok"
