from scapy.all import IP, UDP, IPv6, IPv6ExtHdrFragment, fragment, fragment6

V4 = fragment(IP(src='10.1.0.1', dst='10.2.0.1', id=300) / UDP(sport=1234, dport=5000) / (b'a' * 3000),
              fragsize=1480)
V6 = fragment6(IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / IPv6ExtHdrFragment(id=400) /
               UDP(sport=1234, dport=5000) / (b'b' * 2000), 1400)

# forwarded as they come, out of order too
PACKETS = V4 + list(reversed(V4)) + V6 + list(reversed(V6))
EXPECT = {'dp1': 10}
