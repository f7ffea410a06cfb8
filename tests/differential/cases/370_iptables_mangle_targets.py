from scapy.all import IP, UDP, Raw

# one UDP packet per rule of 370_iptables_mangle_targets.v4: TTL set,
# raised, raised to the 255 cap, lowered; DSCP EF over ECN bits 01 (kept),
# TOS 0x10/0x3f, TOS --and-tos, DSCP 0 on a packet that has it already
S, D = '10.1.0.1', '10.2.0.1'


def u(dport, tos=0, ttl=64):
    return IP(src=S, dst=D, tos=tos, ttl=ttl, id=dport) / UDP(sport=5000, dport=dport) / Raw(b'x' * 8)


PACKETS = [
    u(1001),
    u(1002),
    u(1003),
    u(1004),
    u(1005, tos=0x01),
    u(1006, tos=0xe3),
    u(1007, tos=0xb9),
    u(1008, tos=0x02),
    u(1009, tos=0x03),
]
EXPECT = {'dp1': 9}
