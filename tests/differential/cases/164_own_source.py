from scapy.all import IP, IPv6, UDP, Raw

PACKETS = [
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=7),
    IP(src='10.1.255.254', dst='10.2.0.1') / UDP(dport=7),      # dp0's own address
    IP(src='10.2.255.254', dst='10.2.0.1') / UDP(dport=7),      # dp1's own address
    IP(src='10.1.255.254', dst='10.2.0.1', ttl=1) / UDP(dport=7),  # ... TTL 1: no time exceeded
    IP(src='10.1.255.255', dst='10.2.0.1') / UDP(dport=8),     # dp0's subnet broadcast: forwarded
    IP(src='10.2.255.255', dst='10.2.0.1') / UDP(dport=8),     # dp1's: forwarded
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(dport=7),
    IPv6(src='2001:db8:1::ffff', dst='2001:db8:2::1') / UDP(dport=7),  # dp0's own
    IPv6(src='2001:db8:2::ffff', dst='2001:db8:2::1') / UDP(dport=7),  # dp1's own
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=7) / Raw(b'end'),
]
EXPECT = {"dp1": 7}
