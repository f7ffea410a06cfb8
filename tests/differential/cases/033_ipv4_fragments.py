from scapy.all import IP, UDP, Raw, fragment

S, D = '10.1.0.1', '10.2.0.1'
PACKETS = fragment(IP(src=S, dst=D, id=0x4242) / UDP(sport=1, dport=53) / Raw(b'A' * 100), fragsize=40)
PACKETS += fragment(IP(src=S, dst=D, id=0x4343) / UDP(sport=1, dport=54) / Raw(b'B' * 100), fragsize=40)
PACKETS += [IP(src=S, dst=D, flags='DF') / UDP(sport=1, dport=55)]
EXPECT = {'dp1': 6}
