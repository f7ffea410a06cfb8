from scapy.all import IP, TCP, UDP

PACKETS = [
    # dnat to address and port; the second packet of the connection takes
    # the same binding without running the nat chain again
    IP(src='10.1.0.1', dst='10.2.0.100') / TCP(sport=1000, dport=8080, flags='S', seq=1),
    IP(src='10.1.0.1', dst='10.2.0.100') / TCP(sport=1000, dport=8080, flags='S', seq=1),
    # dnat to an address only
    IP(src='10.1.0.1', dst='10.2.0.101') / UDP(sport=2000, dport=53),
    # masquerade and snat, twice each
    IP(src='10.1.0.9', dst='10.2.0.1') / UDP(sport=3000, dport=53),
    IP(src='10.1.0.9', dst='10.2.0.1') / UDP(sport=3000, dport=53),
    IP(src='10.1.0.8', dst='10.2.0.1') / TCP(sport=4000, dport=443, flags='S'),
    # untouched
    IP(src='10.1.0.7', dst='10.2.0.1') / UDP(sport=5000, dport=123),
]
EXPECT = {'dp1': 7}
NEIGHBOURS = ['10.2.0.2', '10.2.0.100', '10.2.0.101']
