#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# nftdp on net_af_xdp over veths inside a scratch netns: traffic sent from
# one peer crosses nftdp (--wire 0:1) to the other peer, and a drop rule
# visibly filters it. Skips (77) only if the kernel refuses AF_XDP.
# usage: 0001_af_xdp_0.sh BUILD_DIR
set -euo pipefail
BUILD=$(cd "${1:?build dir}" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "af_xdp: needs root, skipped"; exit 77; }
ns=nftdp-dpx-$$
tmp=$(mktemp -d /tmp/nftdp-afxdp.XXXXXX)
pid=
bgpid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$bgpid" 2>/dev/null || true
	fi
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp" "/var/run/dpdk/$ns"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
in_ns() { ip netns exec "$ns" "$@"; }

ip netns add "$ns"
in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
in_ns ip link set lo up
for s in a b; do
	in_ns ip link add "v${s}0" type veth peer name "v${s}1"
	in_ns ip link set "v${s}0" up
	in_ns ip link set "v${s}1" up
done
cat >"$tmp/rules.nft" <<'NFT'
table inet f {
	chain forward {
		type filter hook forward priority 0; policy accept;
		udp dport 10 counter drop
	}
}
NFT
# ip netns exec may fork: the pid to signal is the one sh writes before exec
in_ns sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/pid" timeout 60 "$BUILD/nftdp" -l 0-1 \
	--no-huge -m 512 --no-pci --vdev=net_af_xdp0,iface=va1 --vdev=net_af_xdp1,iface=vb1 \
	--file-prefix "$ns" --log-level=lib.*:warning -- \
	--socket "$tmp/nl.sock" --ruleset "$tmp/rules.nft" --wire 0:1 \
	--stats-json "$tmp/stats.json" >"$tmp/log" 2>&1 &
bgpid=$!
for _ in $(seq 50); do
	[ -s "$tmp/pid" ] && break
	sleep 0.1
done
pid=$(cat "$tmp/pid")
for _ in $(seq 150); do
	grep -q "worker" "$tmp/log" && break
	if ! kill -0 "$pid" 2>/dev/null; then
		cat "$tmp/log"
		if grep -qiE "xsk_|create xsk|af_xdp.*(fail|refus)" "$tmp/log"; then
			echo "af_xdp: the kernel refused AF_XDP on veth, skipped"
			exit 77
		fi
		echo "af_xdp: nftdp exited"
		exit 1
	fi
	sleep 0.1
done
rc=0
in_ns timeout 30 /usr/bin/python3 - <<'PY' || rc=$?
import sys, time
from scapy.all import AsyncSniffer, Ether, IP, UDP, sendp, conf
conf.verb = 0
sn = AsyncSniffer(iface='vb0', lfilter=lambda p: UDP in p and p[IP].src == '10.7.0.1')
sn.start()
time.sleep(0.5)
pk = [Ether(src='02:00:00:00:07:01', dst='02:00:00:00:07:02') /
      IP(src='10.7.0.1', dst='10.7.0.2') / UDP(sport=5000 + i, dport=9 if i % 2 else 10)
      for i in range(40)]
sendp(pk, iface='va0', inter=0.005)
time.sleep(1)
got = sn.stop()
d9 = sum(1 for p in got if p[UDP].dport == 9)
d10 = sum(1 for p in got if p[UDP].dport == 10)
print('af_xdp: arrived on vb0: dport 9: %d of 20, dport 10: %d of 20 (dropped)' % (d9, d10))
sys.exit(0 if d9 == 20 and d10 == 0 else 1)
PY
kill "$pid"
wait "$bgpid" || true
pid=
cat "$tmp/log"
grep -o '"forward": {[^}]*}' "$tmp/stats.json" || true
grep -q '"forward": {"accept": 20, "drop": 20' "$tmp/stats.json" || {
	echo "af_xdp: forward hook counts wrong"
	exit 1
}
exit $rc
