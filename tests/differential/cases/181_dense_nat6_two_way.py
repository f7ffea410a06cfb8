import random

from scapy.all import IPv6, TCP, UDP, Raw

ME = '2001:db8:2::ffff'
VIP = '2001:db8:2::100'


def tcp_flow(client, cport):
    def c(flags, seq, ack, data=b''):
        return ('dp0', IPv6(src=client, dst=VIP) / TCP(sport=cport, dport=80, flags=flags,
                                                        seq=seq, ack=ack, window=8192) / Raw(data))

    def s(flags, seq, ack, data=b''):
        return ('dp1', IPv6(src='2001:db8:2::1', dst=ME) /
                TCP(sport=8080, dport=cport, flags=flags, seq=seq, ack=ack, window=8192) /
                Raw(data))
    return [c('S', 100, 0), s('SA', 900, 101), c('A', 101, 901), c('PA', 101, 901, b'GET /'),
            s('PA', 901, 106, b'200 OK'), c('RA', 106, 907)]


def udp_flow(client, cport):
    return [('dp0', IPv6(src=client, dst='2001:db8:2::53') / UDP(sport=cport, dport=53) /
             Raw(b'query-%d' % i * 4)) for i in range(5)]


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


FLOWS = [tcp_flow('2001:db8:1::%x' % (1 + i), 21000 + i) for i in range(4)]
FLOWS += [udp_flow('2001:db8:1::a%x' % i, 31000 + i) for i in range(2)]
PACKETS = interleave(FLOWS, 181)
NEIGHBOURS = [VIP, '2001:db8:2::53']
EXPECT = {'dp1': 19, 'dp0': 8}
