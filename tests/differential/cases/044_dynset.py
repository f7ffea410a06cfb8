from scapy.all import IP, UDP

PACKETS = []
for rnd in range(3):
    for h in (1, 2, 3):
        PACKETS.append(IP(src='10.1.0.%d' % h, dst='10.2.0.1') / UDP(sport=10 + h % 2, dport=1))
        PACKETS.append(IP(src='10.1.0.%d' % h, dst='10.2.0.1') / UDP(sport=10 + h % 2, dport=2))
EXPECT = {'dp1': 12}

