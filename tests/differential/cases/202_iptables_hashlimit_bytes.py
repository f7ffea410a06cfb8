from scapy.all import IP, TCP, UDP, Raw

# hashlimit's byte mode and rate-match (rev 3), per source; the byte-mode
# packets come first: their credit comes back after a second
A, B, D = '10.1.0.1', '10.1.0.2', '10.2.0.1'
PACKETS = (
    # 16b/s, 3 refills: 4 packets per source
    [IP(src=A, dst=D) / UDP(sport=1000 + i, dport=53) / Raw(b'q' * 20) for i in range(6)] +
    [IP(src=B, dst=D) / UDP(sport=2000 + i, dport=53) / Raw(b'q' * 20) for i in range(2)] +
    # above 16b/s, no burst: the first per source and port passes
    [IP(src=A, dst=D) / UDP(sport=3000 + i, dport=123) / Raw(b'n' * 48) for i in range(3)] +
    # rate-match 2/s, burst 3: 3 + 2 (the rate) per source in the interval
    [IP(src=A, dst=D) / TCP(sport=4000 + i, dport=80, flags='S', seq=1) for i in range(7)] +
    [IP(src=B, dst=D) / TCP(sport=5000 + i, dport=80, flags='S', seq=1) for i in range(2)] +
    # rate-match 1kb/s: 1024 bytes an interval, 500-byte packets: 2
    [IP(src=A, dst=D) / TCP(sport=6000 + i, dport=81, flags='S', seq=1) / Raw(b'w' * 460)
     for i in range(4)]
)
# forwarded: 4 + 2 DNS, 1 NTP, 5 + 2 web, 2 webb
EXPECT = {'dp1': 16}
