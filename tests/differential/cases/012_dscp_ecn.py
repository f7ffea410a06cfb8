from scapy.all import IP, IPv6, UDP

S, D = '10.1.0.1', '10.2.0.1'
PACKETS = [IP(src=S, dst=D, tos=t) / UDP(dport=3) for t in
           (0x20, 0x21, 0xb8, 0x28, 0x48, 0x88, 0x8b, 0x02, 0x01, 0x03, 0x00, 0xfc)]
PACKETS += [IPv6(src='2001:db8:1::1', dst='2001:db8:2::1', tc=t) / UDP(dport=3)
            for t in (0xa0, 0xa1, 0x98, 0x01, 0x02, 0x03)]
EXPECT = {'dp1': 16}
