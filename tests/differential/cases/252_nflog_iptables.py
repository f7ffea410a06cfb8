from scapy.all import IP, TCP, UDP, Raw

# iptables-nft's -j NFLOG: group 3 bound with threshold 1 and SEQ; group 0
# (the default --nflog-group) with the defaults: its one message comes
# after the 1 s timeout.
C, S = '192.168.1.1', '172.16.0.1'

NFLOG = ['3:1:1', '0']

PACKETS = [
    ('dp0', IP(src=C, dst=S) / UDP(sport=1000, dport=514) / Raw(b'<13>a syslog line, longer than 32')),
    ('dp0', IP(src=C, dst=S) / TCP(sport=1001, dport=22, flags='S', seq=9)),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1002, dport=123) / Raw(b'ntp')),
]

EXPECT = {'dp1': 2, 'dp0': 0}
