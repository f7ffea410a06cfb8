from scapy.all import IP, TCP

S, D = '10.1.0.1', '10.2.0.1'
PACKETS = [IP(src=S, dst=D) / TCP(sport=1, dport=2, flags=f, window=w) for f, w in
           (('S', 8192), ('SA', 1024), ('A', 8192), ('F', 8192), ('R', 1024), ('FA', 8192),
            ('FS', 8192), ('', 8192), ('PA', 1024), ('U', 8192), ('EC', 8192), ('SEC', 8192),
            ('FSRPAUEC', 1024))]
PACKETS += [IP(src=S, dst=D) / TCP(sport=1, dport=2, flags='S', options=[('MSS', 1460)])]
EXPECT = {'dp1': 11}
