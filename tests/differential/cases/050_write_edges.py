from scapy.all import IP, IPv6, TCP, UDP, Raw, IPOption_NOP, IPOption_EOL, fragment

S, D = '10.1.0.1', '10.2.0.1'
PACKETS = [
    IP(src=S, dst=D) / TCP(sport=1, dport=80, flags='S', chksum=0x1234),
    IP(src=S, dst=D) / UDP(sport=1, dport=53, chksum=0x4321) / Raw(b'bad'),
    IP(src=S, dst=D, proto=6) / Raw(bytes(TCP(sport=1, dport=80))[:8]),   # checksum field missing
    IP(src=S, dst=D, proto=6) / Raw(bytes(TCP(sport=1, dport=80))[:17]),  # checksum present, header cut
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=1, dport=53, chksum=0) / Raw(b'zero6'),
    IP(src='10.1.0.3', dst=D, options=[IPOption_NOP(), IPOption_NOP(), IPOption_NOP(), IPOption_EOL()]) / UDP(dport=9),
    IP(src='10.1.0.9', dst=D) / UDP(sport=1, dport=9) / Raw(b'ttl'),
    IP(src=S, dst='10.2.0.50') / UDP(sport=1, dport=9) / Raw(b'dnat'),
]
PACKETS += fragment(IP(src=S, dst=D, id=77) / UDP(sport=1, dport=53) / Raw(b'F' * 64), fragsize=32)
NEIGHBOURS = ['172.16.0.50']
EXPECT = {'dp1': 10, 'dp0': 1}
