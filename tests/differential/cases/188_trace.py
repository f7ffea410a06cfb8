from scapy.all import IP, IPv6, TCP, UDP, ICMP, Raw

# Traced: sources in 192.168.0.0/16 and fd00:1::/32 (meta nftrace set 1 at
# prerouting). Untraced: 10.1.0.1. One packet at a time (two-way form, so
# nftdp runs live with `nft monitor trace` watching).
C, S = '192.168.1.1', '172.16.0.1'

TRACE = True

PACKETS = [
    # jump sub, sub sets mark 7 and ends, accepted; postrouting counts mark 7
    ('dp0', IP(src=C, dst=S) / TCP(sport=1000, dport=80, flags='S', seq=1)),
    # sub returns at once; nothing in fwd matches: policy drop
    ('dp0', IP(src=C, dst=S) / TCP(sport=1001, dport=22, flags='S', seq=1)),
    # goto drops, dropped there
    ('dp0', IP(src=C, dst=S) / UDP(sport=1002, dport=9) / Raw(b'discard')),
    # accepted by fwd (counter), then t2's fwd2 sets mark 9, its policy accepts
    ('dp0', IP(src=C, dst=S) / UDP(sport=1003, dport=53) / Raw(b'query')),
    # ICMP accepted from a set; IPv6 too
    ('dp0', IP(src=C, dst=S) / ICMP(type=8, id=1, seq=1) / Raw(b'ping')),
    ('dp0', IPv6(src='fd00:1::1', dst='fd00:2::1') / UDP(sport=1004, dport=53) / Raw(b'q6')),
    ('dp0', IPv6(src='fd00:1::1', dst='fd00:2::1') / TCP(sport=1005, dport=80, flags='S')),
    # reject: a RST back out of dp0
    ('dp0', IP(src=C, dst=S) / TCP(sport=1007, dport=23, flags='S', seq=5)),
    # a verdict map: jump (returns, then policy drop) and goto (accepted)
    ('dp0', IP(src=C, dst=S) / UDP(sport=1008, dport=5000) / Raw(b'vmap')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1009, dport=5001) / Raw(b'vmap')),
    # untraced: no events, forwarded
    ('dp0', IP(src='10.1.0.1', dst='172.16.0.2') / UDP(sport=1006, dport=7) / Raw(b'quiet')),
]

EXPECT = {'dp1': 7, 'dp0': 1}
