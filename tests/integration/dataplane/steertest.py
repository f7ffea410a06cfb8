#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Shard steering on ports without RSS (docs/dataplane.md, "Steering").

usage: steertest.py BUILD_DIR

Two net_pcap ports with one rx queue each (no RSS): port 0 is polled by
worker 0, port 1 by worker 1 % N. Each capture holds many connections, both
directions interleaved packet by packet: TCP (handshake, data, FIN close),
UDP request/reply, ICMP echo, IPv4 and IPv6, and ICMP errors quoting UDP
datagrams, sent by the server or by a router (their outer addresses hash
elsewhere than the flow they quote). The ruleset counts ct states. A reply is
`established` and an error `related` only if it met its connection's shard,
so with 1, 2 and 3 workers the counters must equal the model (what the
kernel says for these packets: first packet of a connection new, errors
related, the rest established, none invalid). The stats must show exactly
the packets steered that a symmetric Toeplitz hash (computed here in
Python) assigns to another worker than the one polling their port, and
every port must send back what it received, each connection in order.
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402
from scapy.all import (ICMP, IP, TCP, UDP, Ether, ICMPv6DestUnreach, ICMPv6EchoReply,
                       ICMPv6EchoRequest, IPv6, IPv6ExtHdrFragment, Raw, fragment, fragment6,
                       rdpcap, wrpcap)

BUILD = os.path.abspath(sys.argv[1])
checks = T.Checks()
check = checks.check
KEY = bytes([0x6d, 0x5a] * 20)


def toeplitz(data):
    """The Toeplitz hash of data with the symmetric key, as a NIC's RSS."""
    k, klen, r = int.from_bytes(KEY, 'big'), len(KEY) * 8, 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            r ^= (k >> (klen - 32 - i)) & 0xffffffff
    return r


FRAG_OF = {}  # a fragment's bytes -> its whole datagram


def rss(p):
    """What nftdp hashes a packet by: its tuple, an error's quoted one, a
    fragment's datagram's."""
    p = FRAG_OF.get(bytes(p), p)
    ip = p[IP] if IP in p else p[IPv6]
    inner = None
    if ICMP in p and p[ICMP].type in (3, 4, 5, 11, 12):
        inner = IP(bytes(p[ICMP].payload))
    elif ICMPv6DestUnreach in p:
        inner = IPv6(bytes(p[ICMPv6DestUnreach].payload))
    if inner is not None:
        ip = inner
    v4 = isinstance(ip, IP)
    fam = __import__('socket').AF_INET if v4 else __import__('socket').AF_INET6
    pton = __import__('socket').inet_pton
    data = pton(fam, ip.src) + pton(fam, ip.dst)
    proto = ip.proto if v4 else ip.nh
    if proto in (6, 17):
        l4 = bytes(ip.payload)
        data += l4[:4]
    return toeplitz(data)


E = dict(src='02:00:00:00:00:01', dst='02:00:00:00:00:02')
R = dict(src='02:00:00:00:00:02', dst='02:00:00:00:00:01')


def tcp_flow(l3c, l3s, sport, a, b):
    c = lambda fl, seq, ack, data=b'': Ether(**E) / l3c / TCP(sport=sport, dport=80, flags=fl,
                                                                seq=seq, ack=ack, window=65535) / \
        Raw(data)
    s = lambda fl, seq, ack, data=b'': Ether(**R) / l3s / TCP(sport=80, dport=sport, flags=fl,
                                                                seq=seq, ack=ack, window=65535) / \
        Raw(data)
    return [c('S', a, 0), s('SA', b, a + 1), c('A', a + 1, b + 1),
            c('PA', a + 1, b + 1, b'x' * 50), s('PA', b + 1, a + 51, b'y' * 80),
            c('FA', a + 51, b + 81), s('FA', b + 81, a + 52), c('A', a + 52, b + 82)]


def udp_flow(l3c, l3s, sport, err):
    req = Ether(**E) / l3c / UDP(sport=sport, dport=53) / Raw(b'q' * 20)
    pk = [req, Ether(**R) / l3s / UDP(sport=53, dport=sport) / Raw(b'r' * 30)]
    if err:  # an error from a router (or the server) back to the client: related
        v4 = IP in req
        src = err if v4 else err
        if v4:
            e = Ether(**R) / IP(src=src, dst=req[IP].src) / ICMP(type=3, code=3) / \
                Raw(bytes(req[IP]))
        else:
            e = Ether(**R) / IPv6(src=src, dst=req[IPv6].src) / ICMPv6DestUnreach(code=4) / \
                Raw(bytes(req[IPv6]))
        pk.append(e)
    pk += [Ether(**E) / l3c / UDP(sport=sport, dport=53) / Raw(b'q' * 21),
           Ether(**R) / l3s / UDP(sport=53, dport=sport) / Raw(b'r' * 31)]
    return pk


def frag_flow(l3c, l3s, sport):
    """A request and a reply of 3000 bytes in fragments (reassembled before
    conntrack: the reply counts once, established), then a small pair."""
    req = Ether(**E) / l3c / UDP(sport=sport, dport=9000) / Raw(b'a' * 30)
    big = Ether(**R) / l3s / UDP(sport=9000, dport=sport) / Raw(b'b' * 3000)
    if IP in big:
        frags = [Ether(**R) / f for f in fragment(big[IP], fragsize=1480)]
    else:
        frags = [Ether(**R) / f for f in
                 fragment6(l3s / IPv6ExtHdrFragment(id=sport) / big[UDP], 1280)]
    for f in frags:
        FRAG_OF[bytes(f)] = big
    return [req] + frags + [Ether(**E) / l3c / UDP(sport=sport, dport=9000) / Raw(b'c' * 31),
                            Ether(**R) / l3s / UDP(sport=9000, dport=sport) / Raw(b'd' * 32)]


def capture(side):
    """Flows of one port: (packets interleaved, per-flow lists, counts)."""
    flows, n_err = [], 0
    for i in range(24):
        c4, s4 = '10.%d.0.%d' % (10 + side, i + 1), '192.0.2.%d' % (i % 7 + 1)
        c6, s6 = '2001:db8:%d::%x' % (10 + side, i + 1), '2001:db8:99::%x' % (i % 5 + 1)
        flows.append(tcp_flow(IP(src=c4, dst=s4), IP(src=s4, dst=c4), 20000 + 7 * side + i,
                              1000 * i + 7, 900000 + 1000 * i))
        if i % 3 == 0:
            flows.append(tcp_flow(IPv6(src=c6, dst=s6), IPv6(src=s6, dst=c6), 21000 + 7 * side + i,
                                  5000 * i + 1, 7000 * i + 3))
        err = None
        if i % 4 == 1:
            err = '10.250.0.1' if i % 8 == 1 else s4  # router or server
        flows.append(udp_flow(IP(src=c4, dst=s4), IP(src=s4, dst=c4), 30000 + 7 * side + i, err))
        if i % 4 == 2:
            flows.append(udp_flow(IPv6(src=c6, dst=s6), IPv6(src=s6, dst=c6), 31000 + 7 * side + i,
                                  '2001:db8:250::1'))
        n_err += err is not None or i % 4 == 2
        if i % 6 == 3:
            flows.append(frag_flow(IP(src=c4, dst=s4), IP(src=s4, dst=c4), 32000 + 7 * side + i))
        if i % 12 == 9:
            flows.append(frag_flow(IPv6(src=c6, dst=s6), IPv6(src=s6, dst=c6), 33000 + 7 * side + i))
        if i % 6 == 0:
            flows.append([Ether(**E) / IP(src=c4, dst=s4) / ICMP(type=8, id=i, seq=1),
                          Ether(**R) / IP(src=s4, dst=c4) / ICMP(type=0, id=i, seq=1)])
            flows.append([Ether(**E) / IPv6(src=c6, dst=s6) / ICMPv6EchoRequest(id=i),
                          Ether(**R) / IPv6(src=s6, dst=c6) / ICMPv6EchoReply(id=i)])
    # interleave: step k of every flow before step k + 1 of any
    pkts = []
    for k in range(max(len(f) for f in flows)):
        pkts += [f[k] for f in flows if k < len(f)]
    return pkts, flows, len(flows), n_err


RULES = '''
table inet st {
	chain forward {
		type filter hook forward priority 0; policy accept;
		ct state established counter accept
		ct state related counter accept
		ct state new counter accept
		counter drop
	}
}
'''


def run(tmp, n_workers, caps):
    tag = 'w%d' % n_workers
    prefix = 'nftdp-steer-%d-%s' % (os.getpid(), tag)
    rules, sj, lj = (os.path.join(tmp, tag + x) for x in ('.nft', '.json', '-list.json'))
    with open(rules, 'w') as f:
        f.write(RULES)
    lcores = {1: ['-l', '0-1'], 2: ['--lcores', '0@0,1@1,2@1'],
              3: ['--lcores', '0@0,1@1,2@1,3@0']}[n_workers]
    vdevs = ['net_pcap%d,rx_pcap=%s/in%d.pcap,tx_pcap=%s/%s-out%d.pcap' %
             (p, tmp, p, tmp, tag, p) for p in range(2)]
    r = T.run_offline(BUILD, T.eal_args(prefix, vdevs, lcores),
                      ['--socket', os.path.join(tmp, tag + '.sock'), '--ruleset', rules,
                       '--exit-on-idle', '400', '--stats-json', sj, '--listing-json', lj],
                      prefix, timeout=60)
    if r.returncode != 0:
        print(r.stdout)
    check(r.returncode == 0, '%s: nftdp exits 0' % tag)
    if r.returncode != 0:
        return None
    s = json.load(open(sj))
    lst = json.load(open(lj))['nftables']
    ctr = []
    for o in lst:
        if 'rule' in o:
            ctr += [e['counter']['packets'] for e in o['rule']['expr'] if 'counter' in e]
    outs = [[bytes(p) for p in rdpcap(os.path.join(tmp, '%s-out%d.pcap' % (tag, p)))]
            for p in range(2)]
    return s, ctr, outs


def main(tmp):
    caps = [capture(side) for side in range(2)]
    for p in range(2):
        wrpcap(os.path.join(tmp, 'in%d.pcap' % p), caps[p][0])
    total = sum(len(c[0]) for c in caps)
    datagrams = total - sum(1 for c in caps for p in c[0] if bytes(p) in FRAG_OF) + \
        sum(1 for c in caps for p in c[0] if bytes(p) in FRAG_OF and
            (p[IP].frag == 0 if IP in p else p[IPv6ExtHdrFragment].offset == 0))
    n_new = sum(c[2] for c in caps)
    n_rel = sum(c[3] for c in caps)
    want = [datagrams - n_new - n_rel, n_rel, n_new, 0]
    print('%d frames, %d datagrams, %d connections, %d ICMP errors' %
          (total, datagrams, n_new, n_rel))
    base = None
    for n in (1, 2, 3):
        res = run(tmp, n, caps)
        if res is None:
            continue
        s, ctr, outs = res
        tag = 'w%d' % n
        check(s['workers'] == n, '%s: %d workers' % (tag, n))
        check(ctr == want, '%s: counters established/related/new/invalid %s (got %s)' %
              (tag, want, ctr))
        if base is None:
            base = ctr
        check(ctr == base, '%s: counters equal the one-worker run' % tag)
        # which worker owns what, and what had to move
        steered, owned = 0, [0] * n
        for p in range(2):
            for pk in caps[p][0]:
                o = rss(pk) % n
                owned[o] += 1
                steered += o != p % n
        st = s.get('steering', {})
        check(st.get('steered') == steered and st.get('steered_in') == steered,
              '%s: %d packets steered to their owner (got %s)' % (tag, steered, st))
        check(st.get('ring_full') == 0, '%s: no steering drop' % tag)
        got = [w['rx'] for w in s['per_worker']]
        check(got == owned, '%s: each worker ran what its shard owns %s (got %s)' %
              (tag, owned, got))
        check(s['conntrack']['invalid'] == 0 and s['conntrack']['new'] == n_new,
              '%s: conntrack saw %d new, 0 invalid (got %d, %d)' %
              (tag, n_new, s['conntrack']['new'], s['conntrack']['invalid']))
        for p in range(2):
            out = outs[p]
            ok = sorted(out) == sorted(bytes(x) for x in caps[p][0])
            for f in caps[p][1]:
                fb = [bytes(x) for x in f]
                ok &= [x for x in out if x in fb] == fb
            check(ok, '%s: port %d sends all %d frames it received, each connection in '
                  'order (sent %d, tx drops %s)' % (tag, p, len(caps[p][0]), len(out),
                                                    s['ports'][p]['tx_drop']))


tmp = tempfile.mkdtemp(prefix='nftdp-steer.')
try:
    main(tmp)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(checks.report('steer'))
