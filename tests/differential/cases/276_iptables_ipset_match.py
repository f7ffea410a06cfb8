from scapy.all import IP, TCP, UDP, Raw

# ipset's sets made by `ipset restore` on both sides (.ipset), then
# iptables-nft-restore rules matching them: hash:ip with timeouts (a
# permanent and a timed element), hash:net with a nomatch hole and
# --return-nomatch, hash:ip,port on dst,dst, bitmap:port, ! --match-set,
# list:set over two sets
A, BANNED, BANNED2, HOLE, OUT, D, E = (
    '10.1.0.1', '10.1.0.66', '10.1.0.67', '10.1.0.70', '10.9.0.1', '10.2.0.1', '10.2.0.2')
PACKETS = [
    IP(src=BANNED, dst=D) / TCP(sport=40000, dport=80, flags='S'),   # banned: drop
    IP(src=BANNED2, dst=D) / TCP(sport=40001, dport=80, flags='S'),  # banned (timed): drop
    IP(src=OUT, dst=E) / TCP(sport=40002, dport=443, flags='S'),     # ports: accept
    IP(src=OUT, dst=D) / TCP(sport=40003, dport=22, flags='S'),      # svc: accept
    IP(src=OUT, dst=E) / TCP(sport=40004, dport=22, flags='S'),      # not lan: drop
    IP(src=A, dst=E) / TCP(sport=40005, dport=22, flags='S'),        # lan: on to the end
    IP(src=HOLE, dst=E) / TCP(sport=40006, dport=22, flags='S'),     # lan's nomatch: drop
    IP(src=A, dst=D) / UDP(sport=1000, dport=53) / Raw(b'q' * 8),    # svc: accept
    IP(src=A, dst=E) / UDP(sport=1000, dport=53) / Raw(b'q' * 8),    # udp drop
    IP(src=A, dst=E) / TCP(sport=40007, dport=1024, flags='S'),      # not in ports: accept (policy)
    IP(src=A, dst=E) / UDP(sport=1000, dport=5353) / Raw(b'q' * 8),  # both (extra): accept
]
EXPECT = {'dp1': 6}
