from scapy.all import IP, IPv6, UDP, TCP, Raw

PACKETS = [IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=7, dport=d) / Raw(b'6' * 20)
           for d in (1, 2, 3, 10, 11, 12, 13, 15)]
PACKETS += [IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=7, dport=d) / Raw(b'4' * 20)
            for d in (10, 11, 12, 13, 15)]
PACKETS += [IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=7, dport=14, flags='S'),
            IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(sport=7, dport=14, flags='S'),
            IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=7, dport=1) / Raw(b'B' * 1400)]
EXPECT = {'dp1': 2, 'dp0': 14}
