import random

from scapy.all import ICMP, IP, TCP, UDP, Raw

FLOWS = []
for i in range(6):
    FLOWS.append([IP(src='10.1.0.%d' % (1 + i % 3), dst='10.2.0.9') /
                  UDP(sport=5000 + i, dport=53) / Raw(b'q%d' % k) for k in range(5)])
for i in range(3):
    syn = IP(src='10.1.1.%d' % (1 + i), dst='10.2.0.9') / TCP(sport=6000 + i, dport=443,
                                                             flags='S', seq=1000)
    FLOWS.append([syn, syn, syn])
FLOWS.append([IP(src='10.1.2.1', dst='10.2.0.9') / ICMP(id=77, seq=k) / Raw(b'ping')
              for k in range(8)])

rnd = random.Random(182)
pos, PACKETS = [0] * len(FLOWS), []
while True:
    live = [i for i, f in enumerate(FLOWS) if pos[i] < len(f)]
    if not live:
        break
    i = rnd.choice(live)
    PACKETS.append(FLOWS[i][pos[i]])
    pos[i] += 1
EXPECT = {'dp1': 45}
