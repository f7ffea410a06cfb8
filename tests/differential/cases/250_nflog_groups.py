from scapy.all import IP, IPv6, TCP, UDP, ICMP, Raw

# nfnetlink_log: nflog_listen.py binds the groups below on each side (the
# kernel's DUT namespace; nftdp's control socket through the shim) and
# prints every NFULNL_MSG_PACKET it receives. Group 1: queue threshold 1,
# NFULNL_CFG_F_SEQ | SEQ_GLOBAL; group 2: threshold 1, SEQ, copy range
# 64; group 4: the defaults (threshold 100, timeout 1 s), so its three
# messages come in one datagram with NLMSG_DONE. One packet at a time
# (two-way form, so that nftdp runs live).
C, S = '192.168.1.1', '172.16.0.1'

NFLOG = ['1:1:3', '2:1:1:64', '4']

PACKETS = [
    ('dp0', IP(src=C, dst=S) / UDP(sport=1000, dport=5000) / Raw(b'batch one')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1001, dport=5001) / Raw(b'batch two')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1002, dport=5002) / Raw(b'batch three')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1003, dport=53) / Raw(b'query')),
    ('dp0', IP(src=C, dst=S) / TCP(sport=1004, dport=80, flags='S', seq=1) / Raw(b'x' * 30)),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1005, dport=9) / Raw(b'd' * 100)),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1006, dport=7) / Raw(b'nobody listens')),
    ('dp0', IP(src=C, dst=S) / TCP(sport=1007, dport=23, flags='S', seq=5)),
    ('dp0', IP(src=C, dst=S) / ICMP(type=8, id=1, seq=1) / Raw(b'ping')),
    ('dp0', IPv6(src='fd00:1::1', dst='fd00:2::1') / UDP(sport=1008, dport=53) / Raw(b'q6')),
]

EXPECT = {'dp1': 9, 'dp0': 0}
