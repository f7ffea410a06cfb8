from scapy.all import IP, UDP, Raw


def udp(src, sport, dst='10.2.0.1'):
    return ('dp0', IP(src=src, dst=dst) / UDP(sport=sport, dport=53) / Raw(b'm' * 8))


PACKETS = (
    [udp('10.1.0.2', 2001 + i) for i in range(3)]       # its own list: pass
    + [udp('10.1.0.3', 3001 + i) for i in range(22)]    # 20 pass, 2 over
    + [udp('10.1.0.1', 1001 + i) for i in range(25)]    # 20 pass, 5 over
)
# Only new connections: a packet of a counted UDP connection right after
# a drop may see the dropped one still counted by the kernel (case 237).
EXPECT = {'dp1': 43}
