#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# nftdp-gen's live mode end to end, without nftdp: two ports joined by rings
# in one process (--ring-pair), on one lcore and on two; then the pcap mode
# against scapy's checksums. Everything sent must come back, counted by
# protocol and port, with a latency sample for every stamped packet; and a
# --mid-stream capture's flags, sequence numbers and checksums.
#
# usage: 0001_ring_pair_0.sh BUILD_DIR     (root; exit 77 = skipped)
set -euo pipefail

build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (EAL runtime dir)"; exit 77; }
[ -x "$build/nftdp-gen" ] || { echo "SKIP: $build/nftdp-gen missing"; exit 77; }
tmp=$(mktemp -d /tmp/nftdp-gen-test.XXXXXX)
pfx="nftdp-gentest-$$"
trap 'rm -rf "$tmp" /var/run/dpdk/"$pfx"-*' EXIT

for lcores in 0 0,1; do
	timeout 60 "$build/nftdp-gen" -l "$lcores" --no-huge -m 256 --no-pci --log-level=error \
		--file-prefix "$pfx-$lcores" -- --ring-pair --flows 300 --family 46 \
		--proto tcp,udp,icmp --size imix --dport 7000-7009 --count 300000 \
		--json "$tmp/live.json" > "$tmp/live.log"
	cat "$tmp/live.log"
	/usr/bin/python3 - "$tmp/live.json" "$lcores" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
bd = g["by_dport"]
err = []
if g["tx_packets"] != 300000:
    err.append(f"sent {g['tx_packets']}")
if g["rx_packets"] != g["tx_packets"] or g["lost"] != 0:
    err.append(f"received {g['rx_packets']} of {g['tx_packets']}")
for p in ("tcp", "udp"):
    if bd["tx_" + p] != bd["rx_" + p] or not bd["tx_" + p]:
        err.append(f"{p} by port differs")
if sorted(map(int, bd["tx_udp"])) != list(range(7000, 7010)):
    err.append(f"udp ports {sorted(bd['tx_udp'])}")
lat = g["latency_ns"]
if lat["samples"] == 0 or not (lat["min"] <= lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["max"]):
    err.append(f"latency {lat}")
if g["rx_other"] or g["reordered"]:
    err.append(f"other {g['rx_other']} reordered {g['reordered']}")
if err:
    sys.exit(f"FAIL (-l {sys.argv[2]}): " + "; ".join(err))
print(f"-l {sys.argv[2]}: ok")
PY
done

"$build/nftdp-gen" --flows 50 --family 46 --proto tcp,udp,icmp --size imix --data 3 \
	--pcap-out "$tmp/t.pcap" --count 600
timeout 120 /usr/bin/python3 - "$tmp/t.pcap" <<'PY'
import sys
from scapy.all import rdpcap, raw, Ether, IP, TCP, UDP, ICMP
pk = rdpcap(sys.argv[1])
bad = 0
for p in pk:
    orig = raw(p)
    q = Ether(orig)
    for layer in (IP, TCP, UDP, ICMP):
        if layer in q:
            q[layer].chksum = None
    l4 = q.getlayer(2)
    if l4 is not None and hasattr(l4, "cksum"):
        l4.cksum = None  # ICMPv6
    if raw(q) != orig:
        bad += 1
if len(pk) != 600 or bad:
    sys.exit(f"FAIL: {len(pk)} packets, {bad} with checksums scapy would not write")
print("pcap: 600 packets, scapy agrees on every checksum")
PY

# --mid-stream: 3 flows picked up without a handshake: the 3 client data
# segments, then the 3 server ACKs of them, with valid checksums
"$build/nftdp-gen" --flows 3 --proto tcp --mid-stream --sport 1024-1026 \
	--pcap-out "$tmp/mid.pcap" --count 6
timeout 120 /usr/bin/python3 - "$tmp/mid.pcap" <<'PY'
import sys
from scapy.all import rdpcap, raw, Ether, IP, TCP
pk = rdpcap(sys.argv[1])
if len(pk) != 6:
    sys.exit(f"FAIL: mid-stream: {len(pk)} packets, want 6")
for i, p in enumerate(pk):
    q = Ether(raw(p))
    q[IP].chksum = None
    q[TCP].chksum = None
    q = Ether(raw(q))
    if (q[IP].chksum, q[TCP].chksum) != (p[IP].chksum, p[TCP].chksum):
        sys.exit(f"FAIL: mid-stream packet {i}: bad checksum")
    ip, tcp, f = p[IP], p[TCP], i % 3
    plen = ip.len - 4 * ip.ihl - 4 * tcp.dataofs
    if i < 3:
        d = (ip.src, ip.dst, tcp.sport, tcp.dport, str(tcp.flags))
        if d != ("10.0.0.1", "10.1.0.1", 1024 + f, 5000, "PA") or plen <= 0:
            sys.exit(f"FAIL: mid-stream segment {i}: {d}, {plen} bytes")
        continue
    d = (ip.src, ip.dst, tcp.sport, tcp.dport, str(tcp.flags))
    seg = pk[f]
    if d != ("10.1.0.1", "10.0.0.1", 5000, 1024 + f, "A") or plen != 0:
        sys.exit(f"FAIL: mid-stream ACK {i}: {d}, {plen} bytes")
    seg_len = seg[IP].len - 4 * seg[IP].ihl - 4 * seg[TCP].dataofs
    if tcp.seq != seg[TCP].ack or tcp.ack != (seg[TCP].seq + seg_len) & 0xffffffff:
        sys.exit(f"FAIL: mid-stream ACK {i}: seq {tcp.seq} ack {tcp.ack}")
print("mid-stream pcap: 3 segments, then 3 ACKs of them, checksums valid")
PY
echo PASS
