from scapy.all import IP, TCP, UDP, Raw

# physdev through a bridge: prerouting knows the in port only, forward
# and postrouting both (br_nf_forward_ip records the out port)
BRIDGE = True
S, D = '10.1.0.10', '172.16.0.10'
PACKETS = [
    IP(src=S, dst=D) / TCP(sport=1000, dport=80, flags='S'),
    IP(src=S, dst=D) / TCP(sport=1001, dport=80, flags='S'),
    IP(src=S, dst=D) / UDP(sport=1000, dport=53) / Raw(b'q' * 8),
]
EXPECT = {'dp1': 2}
