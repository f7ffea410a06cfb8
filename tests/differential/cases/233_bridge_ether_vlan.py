# The DUT is a bridge (BRIDGE = True): L3 packets go from t0's MAC to
# t1's, which the bridge has not learnt, so it floods them out of dp1.
from scapy.all import ARP, Dot1Q, Ether, ICMP, IP, IPv6, Raw, TCP, UDP

BRIDGE = True
S = '10.1.0.10'
T0, T1 = '02:00:00:00:01:10', '02:00:00:00:01:11'
PACKETS = [
    IP(src=S, dst='172.16.0.5') / UDP(sport=1000, dport=53),  # marks: inet pre 5, ...
    IP(src=S, dst='172.16.0.8') / TCP(sport=1000, dport=80, flags='S'),  # inet fwd drops
    IP(src=S, dst='172.16.0.9') / UDP(sport=1000, dport=53),  # bridge fwd drops
    Ether(src=T0, dst='ff:ff:ff:ff:ff:ff') / ARP(psrc=S, pdst='10.1.0.1', hwsrc=T0),
    Ether(src=T0, dst=T1) / Dot1Q(vlan=5) / IP(src=S, dst='172.16.1.1') / UDP(sport=1, dport=2),
    Ether(src=T0, dst=T1) / Dot1Q(vlan=6, prio=3) / IP(src=S, dst='172.16.1.2') /
    UDP(sport=1, dport=2) / Raw(b'x' * 8),
    IPv6(src='fd00:1::10', dst='fd00:2::10') / UDP(sport=1000, dport=53),
    Ether(src=T0, dst=T1, type=0x88b5) / Raw(b'local experimental ethertype'),
    Ether(src='02:00:00:00:01:20', dst=T1, type=0x88b6) / Raw(b'another station'),
    Ether(src=T0, dst='01:00:5e:01:02:03') / IP(src=S, dst='224.1.2.3', ttl=1) /
    UDP(sport=5000, dport=5000),
    IP(src=S, dst='172.16.0.1') / UDP(sport=1000, dport=7),
    IP(src=S, dst='172.16.0.1') / TCP(sport=1000, dport=7, flags='S'),
]
EXPECT = {'dp1': 9}
