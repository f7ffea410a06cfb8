from scapy.all import IP, UDP, TCP, IPOption_NOP, IPOption_EOL, IPOption_Router_Alert, Raw

S, D = '10.1.0.1', '10.2.0.1'
PACKETS = [
    IP(src=S, dst=D) / UDP(dport=77),
    IP(src=S, dst=D, options=[IPOption_NOP(), IPOption_NOP(), IPOption_NOP(), IPOption_EOL()]) / UDP(dport=77),
    IP(src=S, dst=D, options=[IPOption_NOP(), IPOption_NOP(), IPOption_NOP(), IPOption_EOL()]) / UDP(dport=78),
    IP(src=S, dst=D, options=[IPOption_Router_Alert()]) / TCP(dport=88),
    IP(src=S, dst=D, options=[IPOption_NOP()] * 12) / TCP(dport=88) / Raw(b'opt'),
]
EXPECT = {'dp1': 3}
