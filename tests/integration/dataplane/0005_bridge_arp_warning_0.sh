#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# arp tables without --host-ports, and bridge input/output chains (wire
# mode has no frames for or from the bridge itself), are accepted and
# listed but never run (docs/differences.md): the commit that adds such a
# base chain says so once on the daemon's stderr; a ruleset without one
# (bridge prerouting/forward/postrouting run in wire mode) says nothing.
#
# usage: 0005_bridge_arp_warning_0.sh BUILD_DIR     (root; exit 77 = skipped)
set -euo pipefail

build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (EAL runtime dir)"; exit 77; }
[ -x "$build/nftdp" ] || { echo "SKIP: $build/nftdp missing"; exit 77; }
tmp=$(mktemp -d /tmp/nftdp-brwarn-test.XXXXXX)
pfx="nftdp-brwarn-$$"
trap 'rm -rf /var/run/dpdk/"$pfx"-*' EXIT

# an empty capture: the pcap file header alone
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x01\x00\x00\x00' \
	> "$tmp/empty.pcap"
cat > "$tmp/bridge.nft" <<'NFT'
table bridge br {
	chain fw { type filter hook forward priority 0; counter; }
	chain pre { type filter hook prerouting priority 0; counter; }
}
table arp ar {
	chain in { type filter hook input priority 0; counter; }
}
table inet flt {
	chain fw { type filter hook forward priority 0; counter; }
}
NFT
cat > "$tmp/inet.nft" <<'NFT'
table inet flt {
	chain fw { type filter hook forward priority 0; counter; }
}
NFT

run() { # ruleset -> the daemon's stderr in $tmp/err, listing in $tmp/list
	timeout 60 "$build/nftdp" -l 0,1 --no-huge -m 512 --no-pci --log-level=error \
		--file-prefix "$pfx-$1" --vdev="net_pcap0,rx_pcap=$tmp/empty.pcap" -- \
		--socket "$tmp/nl.sock" --workers 1 --exit-on-idle 200 --ruleset "$tmp/$1.nft" \
		--listing "$tmp/list" > "$tmp/out" 2> "$tmp/err"
}

fail=0
run bridge
n=$(grep -c 'warning: .* base chain .* is accepted but never run' "$tmp/err" || true)
if [ "$n" = 1 ] && grep -q 'arp base chain ar in' "$tmp/err" &&
	grep -q 'table bridge br' "$tmp/list" && grep -q 'table arp ar' "$tmp/list"; then
	echo "ok   bridge/arp ruleset: one warning, tables listed"
else
	echo "FAIL bridge/arp ruleset: $n warnings (want 1)"; cat "$tmp/err"; fail=1
fi
run inet
n=$(grep -c 'never run' "$tmp/err" || true)
if [ "$n" = 0 ]; then
	echo "ok   inet ruleset: no warning"
else
	echo "FAIL inet ruleset: $n warnings (want 0)"; cat "$tmp/err"; fail=1
fi

# live: a commit that adds no bridge/arp chain says nothing, the next one
# that adds one says it again (once)
[ -x "$build/nftdp-nft" ] || { echo "SKIP: $build/nftdp-nft missing"; exit $fail; }
timeout 60 "$build/nftdp" -l 0,1 --no-huge -m 512 --no-pci --log-level=error \
	--file-prefix "$pfx-live" --vdev="net_pcap0,rx_pcap=$tmp/empty.pcap" -- \
	--socket "$tmp/nl.sock" --workers 1 --ruleset "$tmp/bridge.nft" \
	> "$tmp/out" 2> "$tmp/err" &
pid=$!
for _ in $(seq 100); do grep -q ' mode$' "$tmp/out" && break; sleep 0.1; done
nft() { NFTDP_SOCKET="$tmp/nl.sock" timeout 20 "$build/nftdp-nft" "$@"; }
nft add chain inet flt pre '{ type filter hook prerouting priority 0; }'
nft add table bridge br2
nft add chain bridge br2 pre '{ type filter hook prerouting priority 0; }'
nft add chain bridge br2 in '{ type filter hook input priority 0; }'
nft add chain bridge br2 out '{ type filter hook output priority 0; }'
kill -TERM "$pid"
wait "$pid" || true
got=$(grep -o 'bridge base chain [a-z0-9]* [a-z0-9]*' "$tmp/err" | tr '\n' ',')
if [ "$got" = "bridge base chain br2 in,bridge base chain br2 out," ]; then
	echo "ok   live: one warning per commit that adds such a chain"
else
	echo "FAIL live: warnings '$got'"; cat "$tmp/err"; fail=1
fi
exit $fail
