# ebtables-nft through a bridge (BRIDGE = True): the compat extensions
# ip, arp, vlan, pkttype, mark_m, 802_3 and the mark target run in bridge
# forward chains as ebt_*.c run them; every rule's counter is compared.
from scapy.all import ARP, Dot1Q, Ether, ICMP, IP, Raw, TCP, UDP

BRIDGE = True
S, D = '10.1.0.10', '172.16.0.10'
T0, T1 = '02:00:00:00:01:10', '02:00:00:00:01:11'
PACKETS = [
    Ether(src=T0, dst=T1) / Dot1Q(vlan=10) / IP(src=S, dst=D) / UDP(sport=1, dport=2),
    Ether(src=T0, dst=T1) / Dot1Q(vlan=20, prio=3) / IP(src=S, dst=D) / UDP(sport=1, dport=2),
    Ether(src=T0, dst=T1) / Dot1Q(vlan=20, prio=4) / IP(src=S, dst=D) / UDP(sport=1, dport=2),
    Ether(src=T0, dst=T1) / Dot1Q(vlan=0, prio=5) / IP(src=S, dst=D) / UDP(sport=1, dport=2),
    IP(src=S, dst=D) / ICMP(type=8),
    IP(src=S, dst=D) / ICMP(type=0),
    IP(src=S, dst='255.255.255.255') / UDP(sport=68, dport=67),
    IP(src=S, dst=D, tos=0x10) / UDP(sport=1000, dport=53),
    IP(src=S, dst='192.168.5.5') / UDP(sport=1000, dport=53),
    IP(src=S, dst=D) / TCP(sport=1000, dport=22, flags='S'),
    IP(src=S, dst=D) / TCP(sport=1000, dport=80, flags='S'),
    IP(src=S, dst=D, frag=10) / Raw(b'later fragment, no ports here'),
    Ether(src=T0, dst='ff:ff:ff:ff:ff:ff') / ARP(psrc=S, pdst='10.1.0.1', hwsrc=T0),
    Ether(src=T0, dst='ff:ff:ff:ff:ff:ff') / ARP(op=2, psrc=S, pdst=S, hwsrc=T0),
    Ether(src='02:00:00:00:01:20', dst='ff:ff:ff:ff:ff:ff') /
    ARP(psrc='10.1.0.20', pdst='10.1.0.2', hwsrc='02:00:00:00:01:20'),
    # 802.3 frames with a length, LLC/SNAP built by hand
    Ether(src=T0, dst=T1, type=16) / Raw(bytes([0xaa, 0xaa, 3, 0, 0, 0, 0, 1]) + b'x' * 8),
    Ether(src=T0, dst=T1, type=10) / Raw(bytes([0x42, 0x42, 3]) + b'stp-ish'),
    Ether(src=T0, dst=T1, type=16) / Raw(bytes([0xaa, 0xaa, 3, 0, 0, 0, 0, 2]) + b'y' * 8),
]
EXPECT = {'dp1': 8}
