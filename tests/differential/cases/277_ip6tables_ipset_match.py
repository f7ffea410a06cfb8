from scapy.all import IPv6, ICMPv6EchoRequest, TCP, UDP, Raw

# ip6tables-nft-restore rules over ipset's IPv6 sets, made by `ipset
# restore` on both sides (.ipset); FORWARD's policy drops the rest
S, HOLE, HOLE_HOST, OUT, D, E = ('2001:db8:1::1', '2001:db8:1:5::1', '2001:db8:1:5::7',
                                 '2001:db8:9::1', '2001:db8:2::1', '2001:db8:2::2')
PACKETS = [
    IPv6(src=S, dst=D) / TCP(sport=4000, dport=443, flags='S'),        # ipp6: accept
    IPv6(src=OUT, dst=D) / TCP(sport=4001, dport=443, flags='S'),      # not ipp6, not nets6: drop
    IPv6(src=OUT, dst=D) / UDP(sport=7, dport=53) / Raw(b'q' * 8),     # np6: accept
    IPv6(src=OUT, dst=D) / UDP(sport=7, dport=54) / Raw(b'q' * 8),     # drop
    IPv6(src=OUT, dst=D) / ICMPv6EchoRequest(id=1, seq=1),             # np6 icmpv6: accept
    IPv6(src=OUT, dst=E) / TCP(sport=4002, dport=22, flags='S'),       # bp: accept
    IPv6(src=S, dst=E) / UDP(sport=7, dport=9) / Raw(b'q' * 8),        # nets6 /48: accept
    IPv6(src=HOLE, dst=E) / UDP(sport=7, dport=9) / Raw(b'q' * 8),     # nets6 nomatch /64: drop
    IPv6(src=HOLE_HOST, dst=E) / UDP(sport=7, dport=9) / Raw(b'q' * 8),  # /128 in the hole: accept
]
EXPECT = {'dp1': 6}
