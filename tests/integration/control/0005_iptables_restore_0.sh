#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# iptables-nft programs nftdp (issue 17): each legacy iptables-restore file
# of tests/data/iptables is loaded with iptables-nft-restore (ip6tables-nft-
# restore for .v6) into the kernel, in a scratch network namespace this
# script creates and deletes, and into a private nftdp through the shim;
# iptables-nft-save must print the same on both. unsupported.v4 must fail
# on nftdp with EOPNOTSUPP and leave nothing behind, as must REDIRECT (this
# daemon has no --host-ports).
# synproxy.v4 (-j SYNPROXY) loads as on the kernel.
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
command -v iptables-nft-restore > /dev/null || { echo "SKIP: no iptables-nft"; exit 77; }
DATA=$(cd "$(dirname "$0")/../../data/iptables" && pwd)
tmp=$(mktemp -d /tmp/nftdp-ipt-XXXXXX)
ns=nftdp-ipt-$$
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
	ip netns del "$ns" 2> /dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-ipt-$$"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	tail -5 "$tmp/daemon.log"
	exit 1
}
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-ipt-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" \
	> "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
# the tool through the shim (build/nftdp-nft runs $NFTDP_NFT)
dp() { NFTDP_NFT="/usr/sbin/$1" timeout 30 "$BUILD/nftdp-nft" "${@:2}"; }
kern() { timeout 30 ip netns exec "$ns" "$@"; }
# iptables-nft-save's header and footer carry the time
strip() { grep -v '^# \(Generated\|Completed\)'; }
flush() {
	kern iptables-nft -F; kern ip6tables-nft -F
	kern nft flush ruleset
	NFTDP_NFT=/usr/sbin/nft timeout 30 "$BUILD/nftdp-nft" flush ruleset
}
pass=0
ip netns add "$ns" || fail "cannot create netns"
for f in "$DATA"/*.v4 "$DATA"/*.v6; do
	name=$(basename "$f")
	[ "$name" = unsupported.v4 ] && continue
	v=; [ "${f##*.}" = v6 ] && v=6
	flush
	kern "ip${v}tables-nft-restore" "$f" 2> "$tmp/kernel.err" || fail "$name: the kernel refused it"
	kern "ip${v}tables-nft-save" | strip > "$tmp/kernel.save"
	dp "ip${v}tables-nft-restore" "$f" 2> "$tmp/err" || fail "$name: nftdp refused it: $(cat "$tmp/err")"
	# revision queries answered as the kernel does: no warnings of missing modules
	diff -u "$tmp/kernel.err" "$tmp/err" || fail "$name: iptables-nft-restore's messages differ"
	dp "ip${v}tables-nft-save" | strip > "$tmp/nftdp.save"
	[ -s "$tmp/kernel.save" ] || fail "$name: empty save on the kernel"
	diff -u "$tmp/kernel.save" "$tmp/nftdp.save" || fail "$name: iptables-nft-save differs"
	# the listing with counters too
	kern "ip${v}tables-nft" -L -n -v -x > "$tmp/kernel.list"
	dp "ip${v}tables-nft" -L -n -v -x > "$tmp/nftdp.list"
	diff -u "$tmp/kernel.list" "$tmp/nftdp.list" || fail "$name: iptables -L -n -v -x differs"
	echo "ok $name"
	pass=$((pass + 1))
done
# refused extensions: the whole restore fails, naming the rule; nothing loads
flush
dp iptables-nft-restore "$DATA/unsupported.v4" 2> "$tmp/err" && fail "unsupported.v4 loaded"
grep -q "Operation not supported" "$tmp/err" || fail "unsupported.v4: want EOPNOTSUPP: $(cat "$tmp/err")"
[ -z "$(NFTDP_NFT=/usr/sbin/nft timeout 30 "$BUILD/nftdp-nft" list ruleset)" ] ||
	fail "unsupported.v4 left rules behind"
echo "ok unsupported.v4"
pass=$((pass + 1))
# REDIRECT runs only with a local stack (--host-ports, tested by
# dataplane-host-path-iptables): this daemon has none, so it is refused by name
printf '*nat\n-A PREROUTING -p tcp --dport 80 -j REDIRECT --to-ports 8080\nCOMMIT\n' > "$tmp/redir.v4"
dp iptables-nft-restore "$tmp/redir.v4" 2> "$tmp/err" && fail "REDIRECT loaded with no local stack"
grep -q "Operation not supported" "$tmp/err" || fail "REDIRECT: want EOPNOTSUPP: $(cat "$tmp/err")"
grep -q "REDIRECT: no local stack" "$tmp/daemon.log" || fail "REDIRECT: the log does not say why"
echo "ok REDIRECT refused without --host-ports"
pass=$((pass + 1))
kill -0 "$pid" || fail "daemon died"
echo "$pass passed, 0 failed"
