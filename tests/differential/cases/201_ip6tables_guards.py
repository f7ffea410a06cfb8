from scapy.all import IPv6, TCP, UDP, Raw

# ip6tables-nft-restore programs both sides: hashlimit by /64, recent with
# --rttl and --remove, TCPMSS on IPv6 SYNs
A, A2, B, D = '2001:db8:1::1', '2001:db8:1::2', '2001:db8:1:5::1', '2001:db8:2::1'


def syn(src, sport):
    return IPv6(src=src, dst=D) / TCP(sport=sport, dport=22, flags='S', seq=1,
                                      options=[('MSS', 1440)])


def udp(src, dport, hlim=64):
    return IPv6(src=src, dst=D, hlim=hlim) / UDP(sport=1000, dport=dport) / Raw(b'r' * 8)


PACKETS = (
    # A and A2 share one /64 bucket of 2; B has its own
    [syn(A, 40000), syn(A2, 40001), syn(A, 40002), syn(B, 40003)] +
    # seen with hop limit 64; a check with another hop limit fails
    [udp(A, 9), udp(A, 10), udp(A, 10, hlim=30), udp(B, 10),
     udp(A, 11), udp(A, 10)]
)
# forwarded: 2 + 1 SYNs, A's first check, A's remove
EXPECT = {'dp1': 5}
