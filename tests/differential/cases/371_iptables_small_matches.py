from scapy.all import IP, TCP, UDP, Raw

S, D = '10.1.0.1', '10.2.0.1'


def t(sport, opts=None, flags='S'):
    return IP(src=S, dst=D) / TCP(sport=sport, dport=80, flags=flags, options=opts or [])


def u(dport, tos=0, ttl=64):
    return IP(src=S, dst=D, tos=tos, ttl=ttl) / UDP(sport=5000, dport=dport) / Raw(b'x' * 8)


PACKETS = [
    t(40000, [('MSS', 1460)]),   # --tcp-option 2
    t(40001, [('NOP', None), ('WScale', 7)]),  # options, no MSS
    t(40002),
    t(40003),
    t(40004, flags='SEC'),       # ECE: ecn --ecn-tcp-ece
    t(40005),
    t(40006),
    t(40007),
    t(40008),
    u(1, ttl=5),                 # random 1.0 and ttl < 10
    u(2),                        # nothing
    u(3, ttl=34),                # ! random 0.0 and ttl 33 (forward sees TTL - 1)
    u(4, tos=0x28),              # dscp AF11
    u(5, tos=0x04),              # tos 0x04/0x04
    u(6, tos=0x03),              # ECT bits 3
    u(7, ttl=20),                # ttl not 64, below 30
    u(8, tos=0x02, ttl=65),      # nothing (64 at forward)
    u(9), u(9), u(9),            # quota: 36 + 36 fit, 36 more do not
    IP(src=S, dst=D) / UDP(sport=5000, dport=9),  # 28 bytes: emptied, no
    u(10),                       # --pol none
    u(11),                       # --dir out --pol ipsec: no
]
EXPECT = {'dp1': 13}
