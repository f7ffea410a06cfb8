from scapy.all import IP, TCP, UDP, Raw

C, S = '10.1.0.1', '10.2.0.1'


def udp(sport):
    return ('dp0', IP(src=C, dst=S) / UDP(sport=sport, dport=53) / Raw(b'c' * 8))


PACKETS = [
    ('dp0', IP(src=C, dst=S) / TCP(sport=47200, dport=80, flags='S', seq=100, window=8192)),
    ('dp1', IP(src=S, dst=C) / TCP(sport=80, dport=47200, flags='SA', seq=900, ack=101,
                                   window=8192)),
    ('dp0', IP(src=C, dst=S) / TCP(sport=47200, dport=80, flags='A', seq=101, ack=901,
                                   window=8192)),
    udp(47201),                  # counted: 2
    udp(47202), udp(47203),      # over: dropped
    ('dp0', IP(src=C, dst=S) / TCP(sport=47200, dport=80, flags='PA', seq=101, ack=901,
                                   window=8192) / Raw(b'd' * 10)),  # counted already: passes
    udp(47202),                  # still over
    ('dp0', IP(src=C, dst=S) / TCP(sport=47200, dport=80, flags='RA', seq=111, ack=901,
                                   window=8192)),  # CLOSE: no longer counted
    udp(47202),                  # fits now
    udp(47204),                  # over again
]
# (not here: UDP packets of counted connections right after a drop, which
# the kernel drops while it still lists the dropped one; docs/conntrack.md)
EXPECT = {'dp1': 6, 'dp0': 1}
# nf_conncount collects closed connections at most once a jiffy: replayed
# at full speed, the RST'd connection still counts within that jiffy, on
# the kernel too; only the paced run shows the collection
PACED_ONLY = 'ct count collects closed connections at most once a jiffy'
