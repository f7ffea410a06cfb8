from scapy.all import IP, TCP, UDP, ICMP, Raw

# Counters of set elements moved by -m set (ip_set_match_extensions: the
# packet counts, then --packets-*/--bytes-* compare), ! --update-counters,
# a list:set's own counters with ! --update-subcounters, hash:net's
# nomatch entry counting under --return-nomatch.
A, B, C, H, N, D = '10.1.0.1', '10.1.0.2', '10.1.0.3', '10.1.0.5', '10.1.0.9', '10.2.0.1'


# sent one at a time from dp0 (two-way mode: nftdp runs live), so that
# `ipset save` compares the counters the packets left on both sides
def udp(src, sport):
    return ('dp0', IP(src=src, dst=D) / UDP(sport=sport, dport=53) / Raw(b'q' * 12))


def tcp(src, sport):
    return ('dp0', IP(src=src, dst=D) / TCP(sport=sport, dport=80, flags='S'))


def icmp(src, seq):
    return ('dp0', IP(src=src, dst=D) / ICMP(id=7, seq=seq))


PACKETS = [
    udp(A, 1000), udp(A, 1001), udp(A, 1002), udp(A, 1003),  # A counts 1..4: 3rd, 4th dropped
    udp(B, 1004),                                              # B: 5 (not counted by #1), 6 > 2
    tcp(C, 2000), tcp(C, 2001), tcp(C, 2002), tcp(C, 2003),    # bytes 40, 80 < 100, then lst's
    icmp(H, 1), icmp(H, 2), icmp(H, 3),                        # /30 nomatch, then /24 when it fails
    icmp(N, 4), icmp(N, 5), icmp(N, 6),                        # /24's bytes over 60: dropped
]
IPSET_SAVE = True
EXPECT = {'dp1': 5}
