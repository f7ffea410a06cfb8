# ICMP errors about a trap connection through snat (see 290_ct_helper_snmp_nat_icmp.nft).
from scapy.all import ICMP, IP, UDP, Raw

AGENT, MGR, PUB = '10.1.0.2', '10.2.0.1', '10.2.0.100'
H = bytes.fromhex
# v2c trap with an IpAddress 10.1.0.2; v2c response with none
TRAP = H('302302010104067075626c6963a716020107020100020100300b300906012b40040a010002')
RESP = H('302002010104067075626c6963a2130201070201000201003008300606012b020101')

PACKETS = [
    ('dp0', IP(src=AGENT, dst=MGR) / UDP(sport=1162, dport=162) / Raw(TRAP)),
    ('dp1', IP(src=MGR, dst=PUB) / UDP(sport=162, dport=1162) / Raw(RESP)),
    # the agent's port unreachable about the response it got
    ('dp0', IP(src=AGENT, dst=MGR) / ICMP(type=3, code=3) /
     IP(src=MGR, dst=AGENT) / UDP(sport=162, dport=1162) / Raw(RESP)),
    # the manager's port unreachable about the trap
    ('dp1', IP(src=MGR, dst=PUB) / ICMP(type=3, code=3) /
     IP(src=PUB, dst=MGR) / UDP(sport=1162, dport=162) / Raw(TRAP)),
]
EXPECT = {'dp1': 1, 'dp0': 2}
