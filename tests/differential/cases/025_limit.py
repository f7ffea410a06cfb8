from scapy.all import IP, UDP, Raw

PACKETS = [IP(src='10.1.0.1', dst='10.2.0.1') / UDP(dport=d) / Raw(b'L' * 12)
           for i in range(6) for d in (1, 2, 3, 4)]
# the kernel lets through burst packets, and rate + burst bytes (110: two 40-byte packets)
EXPECT = {'dp1': 11}
