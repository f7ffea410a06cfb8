#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ebtables' log watcher end to end: an ebtables-restore file with --log
# rules loaded at start (--iptables-restore, through ebtables-nft-restore),
# frames replayed through a --wire pair in bridge mode, and the lines
# nftdp prints on its standard output compared with ebt_log_packet's
# format (net/bridge/netfilter/ebt_log.c, without the syslog level). The
# kernel prints none from a network namespace other than init_net
# (nf_log_all_netns is the root namespace's), so the line is checked
# here and in unit test vm-compat, not against the kernel.
#
# usage: 0006_ebtables_log_0.sh BUILD_DIR     (root; exit 77 = skipped)
set -euo pipefail

build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (EAL runtime dir)"; exit 77; }
[ -x "$build/nftdp" ] || { echo "SKIP: $build/nftdp missing"; exit 77; }
command -v ebtables-nft-restore > /dev/null || { echo "SKIP: no ebtables-nft"; exit 77; }
/usr/bin/python3 -c 'import scapy' 2> /dev/null || { echo "SKIP: no scapy"; exit 77; }
tmp=$(mktemp -d /tmp/nftdp-ebtlog-test.XXXXXX)
pfx="nftdp-ebtlog-$$"
trap 'rm -rf "$tmp" /var/run/dpdk/"$pfx"' EXIT

/usr/bin/python3 - "$tmp" <<'PY'
import sys
from scapy.all import ARP, Dot1Q, Ether, ICMP, IP, IPv6, IPv6ExtHdrHopByHop, TCP, UDP, wrpcap
a, b = '02:00:00:00:01:10', '02:00:00:00:01:11'
wrpcap(sys.argv[1] + '/in.pcap', [
    Ether(src=a, dst=b) / IP(src='10.0.0.1', dst='10.0.0.2', tos=0x10) / TCP(sport=1234, dport=80),
    Ether(src=a, dst=b) / Dot1Q(vlan=5) / IP(src='10.0.0.1', dst='10.0.0.2') / ICMP(),
    Ether(src=a, dst=b) / IPv6(src='2001:db8::1', dst='2001:db8::2', tc=0xb8) /
    IPv6ExtHdrHopByHop() / UDP(sport=1000, dport=53),
    Ether(src=a, dst='ff:ff:ff:ff:ff:ff') / ARP(psrc='10.0.0.1', pdst='10.0.0.9', hwsrc=a),
    Ether(src=a, dst=b, type=0x88b5) / (b'x' * 46),
])
PY
cat > "$tmp/log.eb" <<'EOF2'
*filter
:INPUT ACCEPT
:FORWARD ACCEPT
:OUTPUT ACCEPT
-A FORWARD --log-level info --log-prefix "fw" --log-ip --log-ip6 --log-arp -j CONTINUE
-A FORWARD -p ARP --log-prefix "arp-plain" -j CONTINUE
EOF2
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x01\x00\x00\x00' \
	> "$tmp/empty.pcap"
timeout 60 "$build/nftdp" -l 0,1 --no-huge -m 512 --no-pci --log-level=error \
	--file-prefix "$pfx" --vdev="net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out0.pcap" \
	--vdev="net_pcap1,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/out1.pcap" -- \
	--socket "$tmp/nl.sock" --workers 1 --wire 0:1 --ifname 0=dp0 --ifname 1=dp1 \
	--exit-on-idle 300 --iptables-restore "$tmp/log.eb" > "$tmp/out" 2> "$tmp/err" ||
	{ echo "FAIL: nftdp exited $?"; cat "$tmp/err"; exit 1; }
mac='MAC source = 02:00:00:00:01:10 MAC dest = 02:00:00:00:01:11'
cat > "$tmp/want" <<EOF2
fw IN=dp0 OUT=dp1 $mac proto = 0x0800 IP SRC=10.0.0.1 IP DST=10.0.0.2, IP tos=0x10, IP proto=6 SPT=1234 DPT=80
fw IN=dp0 OUT=dp1 $mac proto = 0x0800 IP SRC=10.0.0.1 IP DST=10.0.0.2, IP tos=0x00, IP proto=1
fw IN=dp0 OUT=dp1 $mac proto = 0x86dd IPv6 SRC=2001:0db8:0000:0000:0000:0000:0000:0001 IPv6 DST=2001:0db8:0000:0000:0000:0000:0000:0002, IPv6 priority=0xB, Next Header=0 SPT=1000 DPT=53
fw IN=dp0 OUT=dp1 MAC source = 02:00:00:00:01:10 MAC dest = ff:ff:ff:ff:ff:ff proto = 0x0806 ARP HTYPE=1, PTYPE=0x0800, OPCODE=1 ARP MAC SRC=02:00:00:00:01:10 ARP IP SRC=10.0.0.1 ARP MAC DST=00:00:00:00:00:00 ARP IP DST=10.0.0.9
arp-plain IN=dp0 OUT=dp1 MAC source = 02:00:00:00:01:10 MAC dest = ff:ff:ff:ff:ff:ff proto = 0x0806
fw IN=dp0 OUT=dp1 $mac proto = 0x88b5
EOF2
grep 'IN=' "$tmp/out" > "$tmp/got" || true
if diff -u "$tmp/want" "$tmp/got"; then
	echo "ok   ebtables log: $(wc -l < "$tmp/got") lines as ebt_log_packet's"
else
	echo "FAIL ebtables log lines differ"
	exit 1
fi
