from scapy.all import IP, TCP, UDP

PACKETS = [
    # snat prefix from the map: 10.1.0.7 -> 10.9.8.7, twice (one binding)
    IP(src='10.1.0.7', dst='10.2.0.1') / UDP(sport=3000, dport=53),
    IP(src='10.1.0.7', dst='10.2.0.1') / UDP(sport=3000, dport=53),
    # the other map entry: 10.1.1.200 -> 10.9.9.200
    IP(src='10.1.1.200', dst='10.2.0.1') / TCP(sport=4000, dport=443, flags='S'),
    # dnat prefix: 10.2.5.2 -> 10.2.0.2; and snat 10.1.0.9 -> 10.9.8.9
    IP(src='10.1.0.9', dst='10.2.5.2') / UDP(sport=2000, dport=53),
    # no map entry for the source: the snat statement breaks, untouched
    IP(src='10.1.2.3', dst='10.2.0.1') / UDP(sport=5000, dport=123),
]
EXPECT = {'dp1': 5}
NEIGHBOURS = ['10.2.0.2']
