from scapy.all import IPv6, TCP, UDP, Raw

PACKETS = [
    ('dp0', IPv6(src='2001:db8:1::5', dst='2001:db8:2::100') /
     TCP(sport=1000, dport=8080, flags='S', seq=7)),
    ('dp0', IPv6(src='2001:db8:1::5', dst='2001:db8:2::100') /
     UDP(sport=1001, dport=5353) / Raw(b'q')),
    ('dp0', IPv6(src='2001:db8:1::6', dst='2001:db8:2::1') / UDP(sport=1002, dport=9) / Raw(b'n')),
    ('dp0', IPv6(src='2001:db8:1::9', dst='2001:db8:2::1') / UDP(sport=3000, dport=53) / Raw(b'q')),
    ('dp1', IPv6(src='2001:db8:2::1', dst='2001:db8:2::ffff', hlim=1) /
     UDP(sport=53, dport=3000) / Raw(b'a')),
    ('dp1', IPv6(src='2001:db8:2::1', dst='2001:db8:2::ffff') / UDP(sport=53, dport=3000) / Raw(b'a2')),
]
EXPECT = {'dp1': 2, 'dp0': 4}
NEIGHBOURS = ['2001:db8:2::100']
