#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# VNF chain: nftdp between two other DPDK processes over memif.
#
#   nftdp-gen (client)  memif0 ──► nftdp port 0 ─(--wire 0:1)─► port 1 ──► memif1  nftdp-gen
#
# nftdp owns both memif sockets (role=server); one nftdp-gen process is the
# client of both, sends known flows into port 0 and counts what comes back
# from port 1, by protocol and destination port. The ruleset drops UDP to
# 5001 and TCP to 5003; every other (protocol, port) must arrive exactly as
# often as it was sent, those two never, and nftdp's own counters must agree.
#
# usage: 0001_memif_chain_0.sh BUILD_DIR     (root; exit 77 = skipped)
# env:   VNF_COUNT (packets, 200000), VNF_RATE (Mpps, 0.5)
set -euo pipefail

build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
count=${VNF_COUNT:-200000}
rate=${VNF_RATE:-0.5}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (memif sockets, EAL)"; exit 77; }
for b in nftdp nftdp-gen nftdp-nft; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done
# the dataplane's options are in its usage text
grep -aq -- '--wire' "$build/nftdp" || { echo "SKIP: nftdp has no --wire"; exit 77; }

tmp=$(mktemp -d /tmp/nftdp-vnf.XXXXXX)
pfx="nftdp-vnf-$$"
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "/var/run/dpdk/$pfx-d" "/var/run/dpdk/$pfx-g"
	# VNF_KEEP=1 keeps the logs and JSON for a look
	if [ "${VNF_KEEP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

cat > "$tmp/rules.nft" <<'EOF'
flush ruleset
table inet vnf {
	chain forward {
		type filter hook forward priority filter; policy accept;
		udp dport 5001 counter drop
		tcp dport 5003 counter drop
		counter accept
	}
}
EOF

eal=(--no-huge -m 512 --no-pci --log-level=error)
# rsize: 2^13-slot rings absorb the scheduling gaps of three pollers on two cores
m0="socket=$tmp/m0.sock,rsize=13"
m1="socket=$tmp/m1.sock,rsize=13"

timeout 120 "$build/nftdp" -l 0,1 "${eal[@]}" --file-prefix "$pfx-d" \
	--vdev="net_memif0,role=server,$m0" --vdev="net_memif1,role=server,$m1" -- \
	--socket "$tmp/nl.sock" --ruleset "$tmp/rules.nft" --wire 0:1 --workers 1 \
	--stats-json "$tmp/stats.json" > "$tmp/nftdp.log" 2>&1 &
pids+=($!)
dpid=$!

# traffic only once the ruleset is in: a listing of the table proves it
ready=0
for _ in $(seq 300); do
	if [ -S "$tmp/nl.sock" ] &&
	   NFTDP_SOCKET="$tmp/nl.sock" timeout 10 "$build/nftdp-nft" list table inet vnf \
		> /dev/null 2>&1; then
		ready=1
		break
	fi
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if [ "$ready" -ne 1 ]; then
	echo "FAIL: nftdp did not come up with the ruleset"
	cat "$tmp/nftdp.log"
	exit 1
fi

# 64 flows: IPv4 and IPv6, TCP (handshake, data, FIN), UDP, ICMP echo,
# destination ports 5000..5003 (flow f: 5000 + (f / 6) % 4). The generator
# lingers after its report, its ports open but no longer polled, so nftdp
# stops first: a memif side that polls while its peer disconnects can
# fault on the rings being unmapped.
timeout 120 "$build/nftdp-gen" -l 0 "${eal[@]}" --file-prefix "$pfx-g" \
	--vdev="net_memif0,role=client,$m0" --vdev="net_memif1,role=client,$m1" -- \
	--tx-port 0 --rx-port 1 --flows 64 --family 46 --proto tcp,udp,icmp --data 3 \
	--size imix --dport 5000-5003 --count "$count" --rate "$rate" --drain-ms 500 \
	--link-wait-ms 10000 --linger-ms 60000 --json "$tmp/gen.json" > "$tmp/gen.log" 2>&1 &
gpid=$!
pids+=("$gpid")
for _ in $(seq 1000); do
	[ -f "$tmp/gen.json" ] && break
	kill -0 "$gpid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -f "$tmp/gen.json" ]; then
	echo "FAIL: nftdp-gen gave no report"
	cat "$tmp/gen.log" "$tmp/nftdp.log"
	exit 1
fi
cat "$tmp/gen.log"

# the rules' own counters, then nftdp's totals at exit, then the generator
NFTDP_SOCKET="$tmp/nl.sock" timeout 20 "$build/nftdp-nft" -j list ruleset > "$tmp/list.json"
kill -TERM "$dpid"
drc=0
wait "$dpid" || drc=$?
kill -TERM "$gpid"
grc=0
wait "$gpid" || grc=$?
[ "$drc" -eq 0 ] || { echo "FAIL: nftdp exited with $drc"; cat "$tmp/nftdp.log"; exit 1; }
[ "$grc" -eq 0 ] || { echo "FAIL: nftdp-gen exited with $grc"; cat "$tmp/gen.log"; exit 1; }
[ -s "$tmp/stats.json" ] || { echo "FAIL: no --stats-json"; cat "$tmp/nftdp.log"; exit 1; }

/usr/bin/python3 "$(dirname "$0")/check_counts.py" "$tmp/gen.json" "$tmp/stats.json" \
	--count "$count" --drop udp:5001 --drop tcp:5003 --listing "$tmp/list.json" || {
	cat "$tmp/nftdp.log"
	exit 1
}
echo PASS
