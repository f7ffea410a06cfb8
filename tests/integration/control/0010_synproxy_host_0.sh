#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# synproxy in front of a server on the box itself (an input base chain
# with --host-ports) is refused at commit, through the stock tools: the
# statement (nft's caret under it), a synproxy object referenced there
# and iptables-nft's -A INPUT -j SYNPROXY, each with EOPNOTSUPP and the
# reason in the daemon's log; the kernel's SYN to the server and the
# server's SYN-ACK cross its loopback, which the exception path does not
# model (docs/differences.md). At forward all three load. The daemon runs
# in a scratch netns (--host-ports makes a tap there).
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
tmp=$(mktemp -d /tmp/nftdp-sphost-XXXXXX)
ns=nftdp-sphost-$$
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-sphost-$$" # the EAL leaves its runtime folder
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$tmp/daemon.log"; exit 1; }
ip netns add "$ns" || fail "netns"
ip netns exec "$ns" timeout 100 "$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 \
	--file-prefix "nftdp-sphost-$$" --log-level=lib.*:error -- --socket "$tmp/nl.sock" \
	--host-ports > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
nft() { ip netns exec "$ns" timeout 30 "$BUILD/nftdp-nft" "$@"; }
nft add table ip t || fail "add table"
nft add chain ip t in '{ type filter hook input priority 0; }' || fail "add chain in"
nft add chain ip t fw '{ type filter hook forward priority 0; }' || fail "add chain fw"
nft add synproxy ip t sp mss 1460 wscale 7 || fail "the synproxy object refused"

nft add rule ip t in tcp dport 80 synproxy mss 1460 2> "$tmp/in.err" &&
	fail "synproxy loaded at input"
cat > "$tmp/in.want" << 'X'
Error: Could not process rule: Operation not supported
add rule ip t in tcp dport 80 synproxy mss 1460
                              ^^^^^^^^
X
diff -u "$tmp/in.want" "$tmp/in.err" || fail "nft's error at input"
nft add rule ip t in tcp dport 80 synproxy name sp 2> "$tmp/obj.err" &&
	fail "the synproxy object loaded at input"
grep -q "Operation not supported" "$tmp/obj.err" || fail "object at input: $(cat "$tmp/obj.err")"
nft add rule ip t fw tcp dport 80 synproxy mss 1460 || fail "synproxy refused at forward"
nft add rule ip t fw tcp dport 81 synproxy name sp || fail "the object refused at forward"
if [ -x /usr/sbin/iptables-nft-restore ]; then
	printf '*filter\n-A INPUT -p tcp -j SYNPROXY --mss 1460\nCOMMIT\n' > "$tmp/in.v4"
	NFTDP_NFT=/usr/sbin/iptables-nft-restore ip netns exec "$ns" timeout 30 \
		"$BUILD/nftdp-nft" "$tmp/in.v4" 2> /dev/null && fail "-A INPUT -j SYNPROXY loaded"
	printf '*filter\n-A FORWARD -p tcp -j SYNPROXY --mss 1460\nCOMMIT\n' > "$tmp/fw.v4"
	NFTDP_NFT=/usr/sbin/iptables-nft-restore ip netns exec "$ns" timeout 30 \
		"$BUILD/nftdp-nft" "$tmp/fw.v4" || fail "-A FORWARD -j SYNPROXY refused"
	grep -q "commit refused: target SYNPROXY: not for a server on the box" "$tmp/daemon.log" ||
		fail "the target's reason not logged"
fi
n=$(grep -c "commit refused: synproxy: not for a server on the box (input with --host-ports)" \
	"$tmp/daemon.log")
[ "$n" -eq 1 ] || fail "want the statement's reason logged once, got $n"
grep -q "commit refused: synproxy object: not for a server on the box" "$tmp/daemon.log" ||
	fail "the object's reason not logged"
[ "$(nft list chain ip t fw | grep -c synproxy)" -eq 2 ] || fail "forward's rules missing"
[ -z "$(nft list chain ip t in | grep synproxy)" ] || fail "input kept a synproxy"
kill -0 "$pid" || fail "daemon died"
echo "1 passed, 0 failed"
