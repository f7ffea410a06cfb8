from scapy.all import ARP, Ether, IP, UDP, ICMP, Raw

# nfnetlink_log from netdev ingress: group 1 with queue threshold 1 and
# SEQ_GLOBAL, group 2 with threshold 2 (two messages a datagram, then
# NLMSG_DONE) and a copy range of 30. Short frames are padded to 60 bytes,
# which ingress's payload includes and the forward hook's does not.
C, S = '192.168.1.1', '172.16.0.1'

NFLOG = ['1:1:2', '2:2:0:30']

PACKETS = [
    ('dp0', IP(src=C, dst=S) / UDP(sport=1000, dport=53) / Raw(b'q')),
    ('dp0', IP(src=C, dst=S) / ICMP(type=8, id=7, seq=1) / Raw(b'ping')),
    ('dp0', IP(src=C, dst=S) / UDP(sport=1001, dport=53) / Raw(b'a longer query, past the copy range')),
    ('dp0', Ether(src='02:00:00:00:01:10', dst='ff:ff:ff:ff:ff:ff') /
     ARP(op=1, hwsrc='02:00:00:00:01:10', psrc='10.1.0.9', pdst='10.1.0.10')),
]

EXPECT = {'dp1': 3, 'dp0': 0}
