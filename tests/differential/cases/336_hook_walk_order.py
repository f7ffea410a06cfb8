from scapy.all import IP, IPv6, UDP, Raw

C4, S4 = '10.1.0.1', '10.2.0.1'
C6, S6 = '2001:db8:1::1', '2001:db8:2::1'


def f4(sport, dport=53):
    return ('dp0', IP(src=C4, dst=S4) / UDP(sport=sport, dport=dport) / Raw(b'q' * 8))


def r4(sport, dport=53):
    return ('dp1', IP(src=S4, dst=C4) / UDP(sport=dport, dport=sport) / Raw(b'r' * 8))


def f6(sport, dport=53):
    return ('dp0', IPv6(src=C6, dst=S6) / UDP(sport=sport, dport=dport) / Raw(b'q' * 8))


def r6(sport, dport=53):
    return ('dp1', IPv6(src=S6, dst=C6) / UDP(sport=dport, dport=sport) / Raw(b'r' * 8))


PACKETS = [
    f4(40000), f6(40000),          # new, both families
    f4(40001, 9), f6(40001, 9),    # IPv4 dropped before conntrack; IPv6 on
    f4(40002, 7), f6(40002, 7),    # untracked at -300
    f6(40003, 8), f4(40003, 8),    # IPv6 dropped at -199, after conntrack
    r4(40000), r6(40000),          # replies: established
    r4(40001, 9), r6(40001, 9),    # IPv4: no entry, new; IPv6: established
    f4(40000), f6(40000), f4(40000), f6(40000),
    r6(40003, 8), r4(40003, 8),    # IPv6: unconfirmed, so new; IPv4: established
    f4(40002, 7), f6(40002, 7),
]
# dropped: f4(40001, 9) in raw, f6(40003, 8) at -199
EXPECT = {'dp1': 12, 'dp0': 6}
