import random

from scapy.all import IP, TCP, UDP, Raw

ME = '10.2.255.254'        # dp1's address: masquerade's source
VIP = '10.2.0.100'


def tcp_flow(client, cport, server):
    def c(flags, seq, ack, data=b''):
        return ('dp0', IP(src=client, dst=VIP) / TCP(sport=cport, dport=80, flags=flags,
                                                      seq=seq, ack=ack, window=8192) / Raw(data))

    def s(flags, seq, ack, data=b''):
        return ('dp1', IP(src=server, dst=ME) / TCP(sport=8080, dport=cport, flags=flags,
                                                     seq=seq, ack=ack, window=8192) / Raw(data))
    return [c('S', 100, 0), s('SA', 900, 101), c('A', 101, 901), c('PA', 101, 901, b'GET /'),
            s('A', 901, 106), s('PA', 901, 106, b'200 OK'), c('FA', 106, 907),
            s('FA', 907, 107), c('A', 107, 908)]


def udp_flow(client, cport):
    q = [('dp0', IP(src=client, dst=VIP) / UDP(sport=cport, dport=53) / Raw(b'q%d' % i))
         for i in range(5)]
    a = [('dp1', IP(src='10.2.0.2', dst=ME) / UDP(sport=5353, dport=cport) / Raw(b'a%d' % i))
         for i in range(2)]
    return q[:3] + a[:1] + q[3:] + a[1:]


def interleave(flows, seed):
    rnd = random.Random(seed)
    pos, out = [0] * len(flows), []
    while True:
        live = [i for i, f in enumerate(flows) if pos[i] < len(f)]
        if not live:
            return out
        i = rnd.choice(live)
        out.append(flows[i][pos[i]])
        pos[i] += 1


FLOWS = [tcp_flow('10.1.0.%d' % (1 + i), 20000 + i, '10.2.0.1') for i in range(5)]
FLOWS += [udp_flow('10.1.0.%d' % (10 + i), 30000 + i) for i in range(3)]
PACKETS = interleave(FLOWS, 180)
NEIGHBOURS = [VIP]
EXPECT = {'dp1': 40, 'dp0': 26}
