from scapy.all import IP, UDP

PACKETS = []
for d in (1, 2, 3, 4):
    for h in range(1, 13):
        PACKETS.append(IP(src='10.1.0.%d' % h, dst='10.2.0.%d' % (20 - h)) / UDP(sport=1000 + 7 * h, dport=d))
PACKETS += [IP(src='10.1.0.1', dst='10.2.0.1', tos=t) / UDP(dport=5) for t in (0x00, 0x20, 0x80)]
# how many the hashes drop is the kernel's answer (jhash with seed 0x1234, numgen in packet order)
EXPECT = {"dp1": 39}
