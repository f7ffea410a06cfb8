from scapy.all import Ether, IP, IPv6, UDP, Raw

T0 = '02:00:00:00:01:10'
S, D, S6, D6 = '10.1.0.1', '10.2.0.1', '2001:db8:1::1', '2001:db8:2::1'
PACKETS = [
    IP(src=S, dst=D) / UDP(dport=7),
    Ether(src=T0, dst='ff:ff:ff:ff:ff:ff') / IP(src=S, dst=D) / UDP(dport=7),
    Ether(src=T0, dst='01:00:5e:00:00:01') / IP(src=S, dst=D) / UDP(dport=7),
    Ether(src=T0, dst='ff:ff:ff:ff:ff:ff') / IP(src=S, dst=D, ttl=1) / UDP(dport=7),
    Ether(src=T0, dst='33:33:00:00:00:01') / IPv6(src=S6, dst=D6) / UDP(dport=7),
    Ether(src=T0, dst='ff:ff:ff:ff:ff:ff') / IPv6(src=S6, dst=D6, hlim=1) / UDP(dport=7),
    IPv6(src=S6, dst=D6) / UDP(dport=7),
    IP(src=S, dst=D) / UDP(dport=7) / Raw(b'end'),
]
EXPECT = {'dp1': 3}
