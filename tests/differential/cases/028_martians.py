from scapy.all import IP, UDP

D = '10.2.0.1'
PACKETS = [IP(src=s, dst=d) / UDP(dport=9) for s, d in (
    ('10.1.0.1', D),            # fine
    ('127.0.0.1', D),           # loopback source
    ('0.0.0.0', D),             # unspecified source
    ('224.0.0.5', D),           # multicast source
    ('255.255.255.255', D),     # broadcast source
    ('10.1.0.1', '127.0.0.1'),  # loopback destination
    ('10.1.0.1', '0.0.0.0'),    # zero destination
    ('10.1.0.1', '10.2.255.255'),  # directed broadcast of dp1's subnet
    ('10.1.0.1', '10.2.0.2'),   # fine
)]
EXPECT = {'dp1': 2}
