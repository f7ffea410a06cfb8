from scapy.all import IP, TCP, UDP, Raw

PACKETS = [
    # a SYN to the dnat service address, rejected after dnat: the RST comes
    # from 10.2.0.100:8080, the address and port the client used
    ('dp0', IP(src='10.1.0.5', dst='10.2.0.100') / TCP(sport=1000, dport=8080, flags='S', seq=7)),
    # UDP to the other dnat port, rejected with port unreachable
    ('dp0', IP(src='10.1.0.5', dst='10.2.0.100') / UDP(sport=1001, dport=5353) / Raw(b'q')),
    # masquerade, then a reply with TTL 1: time exceeded back out of dp1
    ('dp0', IP(src='10.1.0.9', dst='10.2.0.1') / UDP(sport=3000, dport=53) / Raw(b'q')),
    ('dp1', IP(src='10.2.0.1', dst='10.2.255.254', ttl=1) / UDP(sport=53, dport=3000) / Raw(b'a')),
    ('dp1', IP(src='10.2.0.1', dst='10.2.255.254') / UDP(sport=53, dport=3000) / Raw(b'a2')),
]
EXPECT = {'dp1': 2, 'dp0': 3}
NEIGHBOURS = ['10.2.0.100']
