# Multipath hash policy 2 (the innermost L3 header) with a fixed seed:
# IPv4 and IPv6 flows over a two-path route (one path out of dp0, one out
# of dp1), plain, in IPIP, IPv6-in-IP, GRE (with key, checksum and
# sequence, TEB) and ICMP errors, each recorded with the next hop its
# forward route took (rt nexthop: the path ip_route_input's
# fib_multipath_hash / ip6_route_input's rt6_multipath_hash picked),
# compared element by element with the kernel's. The tunnelled flows share
# outer addresses: only their inner ones spread them.
from scapy.all import IP, IPv6, UDP, TCP, GRE, GRE_PPTP, ICMP, Ether, Dot1Q, Raw

MIRROR_ROUTES = True
SYSCTLS = ['net.ipv4.fib_multipath_hash_seed=4242', 'net.ipv4.fib_multipath_hash_policy=2',
           'net.ipv6.fib_multipath_hash_policy=2']
ROUTES = [
    'route add 10.50.0.0/24 nexthop via 10.1.0.9 dev dp0 nexthop via 10.2.0.1 dev dp1',
    '-6 route add 2001:db8:50::/64 nexthop via 2001:db8:1::9 dev dp0 '
    'nexthop via 2001:db8:2::1 dev dp1',
]
NEIGHBOURS = ['10.1.0.9', '10.2.0.1', '2001:db8:1::9', '2001:db8:2::1']

S4, S6 = '10.1.0.2', '2001:db8:1::2'
P = []
for i in range(1, 13):  # plain: the addresses
    P.append(IP(src=S4, dst='10.50.0.%d' % i) / UDP(sport=3000 + i, dport=53) / Raw(b'p' * 4))
for i in range(1, 13):  # IPIP
    P.append(IP(src=S4, dst='10.50.0.200') / IP(src='172.16.0.%d' % i, dst='172.17.%d.1' % i) /
             UDP(sport=4000, dport=4000) / Raw(b'i' * 4))
for i in range(1, 13):  # GRE with key, checksum and sequence
    P.append(IP(src=S4, dst='10.50.0.201') /
             GRE(chksum_present=1, key_present=1, seqnum_present=1, key=i, seqence_number=i) /
             IP(src='192.168.%d.1' % i, dst='192.168.99.%d' % i) / TCP(sport=1000 + i, dport=80))
for i in range(1, 9):  # GRE carrying IPv6: its flow label and protocol too
    P.append(IP(src=S4, dst='10.50.0.202') / GRE(proto=0x86dd) /
             IPv6(src='2001:db8:77::1', dst='2001:db8:78::1', fl=i * 4099) /
             UDP(sport=5000, dport=5000))
for i in range(1, 7):  # IPv6 in IPv4
    P.append(IP(src=S4, dst='10.50.0.203') /
             IPv6(src='2001:db8:77::%x' % i, dst='2001:db8:79::%x' % (i * 3)) /
             UDP(sport=6000, dport=6000))
for i in range(1, 5):  # GRE TEB: an Ethernet frame with IPv4
    P.append(IP(src=S4, dst='10.50.0.204') / GRE(proto=0x6558) /
             Ether(src='02:00:00:00:09:01', dst='02:00:00:00:09:02') /
             IP(src='10.200.%d.1' % i, dst='10.201.0.%d' % i) / UDP(sport=7, dport=7))
for i in range(1, 5):  # GRE TEB with a VLAN tag inside
    P.append(IP(src=S4, dst='10.50.0.205') / GRE(proto=0x6558) /
             Ether(src='02:00:00:00:09:01', dst='02:00:00:00:09:02') / Dot1Q(vlan=5) /
             IP(src='10.202.%d.1' % i, dst='10.203.0.%d' % i) / UDP(sport=7, dport=7))
for i in range(1, 9):  # PPTP (GRE version 1, key) carrying PPP with IPv4
    P.append(IP(src=S4, dst='10.50.0.206') /
             GRE_PPTP(call_id=i, seqnum_present=1, seqence_number=i) /
             Raw(b'\xff\x03\x00\x21') /  # PPP address, control, protocol IP
             IP(src='10.204.%d.1' % i, dst='10.205.0.%d' % i) / UDP(sport=7, dport=7))
for i in range(1, 7):  # ICMP errors: the outer addresses (the dissector stops)
    P.append(IP(src=S4, dst='10.50.0.%d' % (100 + i)) / ICMP(type=3, code=3) /
             IP(src='10.50.0.%d' % (100 + i), dst='10.9.%d.1' % i) / UDP(sport=53, dport=9999))
P = [p for p in P]
for n, p in enumerate(P):
    p[IP].id = n + 1  # the outer header's: the flow's key in @p4
Q = []
for i in range(1, 13):  # plain IPv6: addresses, flow label, next header
    Q.append(IPv6(src=S6, dst='2001:db8:50::%x' % i, fl=i * 7919 & 0xfffff) /
             UDP(sport=3000 + i, dport=53) / Raw(b'q' * 4))
for i in range(1, 9):  # IPv4 in IPv6
    Q.append(IPv6(src=S6, dst='2001:db8:50::200') /
             IP(src='172.18.0.%d' % i, dst='172.19.%d.9' % i) / UDP(sport=1, dport=2))
for i in range(1, 9):  # IPv6 in IPv6, the outer label set, the inner's not
    Q.append(IPv6(src=S6, dst='2001:db8:50::201', fl=0x54321) /
             IPv6(src='2001:db8:88::%x' % i, dst='2001:db8:89::1') / UDP(sport=1, dport=2))
for i in range(1, 9):  # GRE over IPv6 with IPv4 inside
    Q.append(IPv6(src=S6, dst='2001:db8:50::202') / GRE(key_present=1, key=7) /
             IP(src='10.210.%d.1' % i, dst='10.211.0.1') / UDP(sport=1, dport=2))
for n, q in enumerate(Q):
    q[IPv6].src = '2001:db8:1::%x' % (0x100 + n)  # the flow's key in @p6
PACKETS = P + Q
# every packet is dropped in forward after it is recorded
EXPECT = {'dp0': 0, 'dp1': 0}
