from scapy.all import IP, IPv6, TCP, UDP

PACKETS = [
    # a DNS query and its retransmission: both new (no reply seen)
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=5353, dport=53),
    IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=5353, dport=53),
    # a SYN and its retransmission: new, new
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=40000, dport=80, flags='S', seq=1000),
    IP(src='10.1.0.1', dst='10.2.0.1') / TCP(sport=40000, dport=80, flags='S', seq=1000),
    # mid-stream ACK of an unknown flow: picked up (loose), new
    IP(src='10.1.0.2', dst='10.2.0.1') / TCP(sport=40001, dport=80, flags='A', seq=5, ack=7),
    # then more of it
    IP(src='10.1.0.2', dst='10.2.0.1') / TCP(sport=40001, dport=80, flags='A', seq=5, ack=7),
    # TCP with no flags at all: invalid
    IP(src='10.1.0.3', dst='10.2.0.1') / TCP(sport=40002, dport=80, flags=0),
    # SYN+FIN: invalid
    IP(src='10.1.0.3', dst='10.2.0.1') / TCP(sport=40003, dport=80, flags='SF'),
    # notrack in raw: untracked
    IP(src='10.1.0.4', dst='10.2.0.1') / UDP(sport=1000, dport=7),
    # first packet dropped: no entry, so the second one is new again
    IP(src='10.1.0.5', dst='10.2.0.1') / UDP(sport=1000, dport=99),
    IP(src='10.1.0.5', dst='10.2.0.1') / UDP(sport=1000, dport=99),
    # IPv6 too
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / UDP(sport=5353, dport=53),
    IPv6(src='2001:db8:1::1', dst='2001:db8:2::1') / TCP(sport=40000, dport=80, flags='S'),
]
EXPECT = {'dp1': 9}
