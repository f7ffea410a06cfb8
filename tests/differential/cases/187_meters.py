from scapy.all import IP, UDP, Raw


def udp(src, dst, sport):
    # 128 bytes at the IP layer
    return IP(src=src, dst=dst, id=sport) / UDP(sport=sport, dport=53) / Raw(b'm' * 100)


PACKETS = (
    # 10.1.0.1: a burst of 3 passes its meter, the 4th and 5th are over it
    [udp('10.1.0.1', '10.2.0.1', 1000 + i) for i in range(5)] +
    [udp('10.1.0.2', '10.2.0.2', 2000 + i) for i in range(2)] +
    # 10.2.0.1 has had 384 bytes by now: over its quota
    [udp('10.1.0.3', '10.2.0.1', 3000)]
)
# 10.1.0.1's first two, 10.1.0.2's two; 10.1.0.1's third is over the quota
EXPECT = {'dp1': 4}
