from scapy.all import IP, IPv6, UDP, TCP

PACKETS = []
for s in (1, 2, 3, 4):
    for tos in (0x00, 0x03, 0xfd):
        PACKETS.append(IP(src='10.1.0.%d' % s, dst='10.2.0.1', tos=tos, id=s * 7) / UDP(sport=s, dport=9))
for s in (1, 2, 3):
    for tc in (0x00, 0x03, 0xfd):
        PACKETS.append(IPv6(src='2001:db8:1::%d' % s, dst='2001:db8:2::1', tc=tc, fl=0x12345) / TCP(dport=9))
EXPECT = {'dp1': 21}
