from scapy.all import Ether, Dot1Q, ARP, IP, UDP

E = Ether(src='02:00:00:00:01:10', dst='02:00:00:00:00:10')
PACKETS = [
    Ether(src='02:00:00:00:01:10', dst='ff:ff:ff:ff:ff:ff') /
    ARP(op=1, hwsrc='02:00:00:00:01:10', psrc='10.1.0.1', pdst='10.1.0.77'),
    E / Dot1Q(vlan=10) / IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1),
    E / Dot1Q(vlan=11) / IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=1),
]
EXPECT = {'dp1': 1}
