from scapy.all import IP, IPv6, UDP, TCP, ICMP, ICMPv6EchoRequest, ICMPv6PacketTooBig, Raw

S, D = '10.1.0.1', '10.2.0.1'
S6, D6 = '2001:db8:1::1', '2001:db8:2::1'
PACKETS = [
    IP(src='10.1.10.7', dst=D) / UDP(dport=9999),
    IP(src='192.168.50.1', dst='172.16.0.1') / TCP(dport=1, flags='S'),
    IP(src=S, dst=D) / TCP(sport=40000, dport=443, flags='S'),
    IP(src=S, dst=D) / TCP(sport=40000, dport=444, flags='S'),
    IP(src=S, dst=D) / TCP(sport=40000, dport=444, flags='A') / Raw(b'data'),
    IP(src=S, dst=D) / TCP(sport=40000, dport=443, flags='SA'),
    IP(src=S, dst=D) / UDP(sport=5353, dport=53) / Raw(b'dns'),
    IP(src=S, dst=D) / UDP(sport=5353, dport=33440),
    IP(src=S, dst=D) / UDP(sport=5353, dport=9),
    IP(src=S, dst=D) / ICMP(type=8),
    IP(src=S, dst=D) / ICMP(type=13),
    IP(src=S, dst=D, proto=47) / Raw(b'gre!'),
    IPv6(src=S6, dst=D6) / TCP(dport=22, flags='S'),
    IPv6(src=S6, dst=D6) / ICMPv6EchoRequest(),
    IPv6(src=S6, dst=D6) / ICMPv6PacketTooBig() / IPv6(src=D6, dst=S6) / UDP(),
    IPv6(src=S6, dst=D6) / UDP(dport=33500),
    IPv6(src=S6, dst=D6) / UDP(dport=1),
]
EXPECT = {'dp1': 9, 'dp0': 2}
