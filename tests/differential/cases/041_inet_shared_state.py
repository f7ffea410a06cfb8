from scapy.all import IP, IPv6, UDP, Raw

# IPv4 and IPv6 interleaved, 50 bytes each at L3: the quota lets the first four through,
# the limit the first three, whatever their family; the rejects answer in packet order.
PACKETS = []
for i in range(4):
    for d in (1, 2, 3):
        PACKETS.append(IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=100 + i, dport=d) / Raw(b'4' * 22))
        PACKETS.append(IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=100 + i, dport=d) / Raw(b'6' * 2))
EXPECT = {'dp1': 7, 'dp0': 8}
