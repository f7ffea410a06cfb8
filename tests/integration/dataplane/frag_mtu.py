#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fragments with conntrack and an egress MTU smaller than the fragments
(docs/dataplane.md "Fragments"): what the kernel's ip_forward/ip_fragment and
ip6_forward/ip6_fragment do, checked against a model of it, as the
differential harness gives every port the same 1500-byte MTU.

    frag_mtu.py BUILD_DIR

nftdp replays a capture offline (net_pcap, --router, --wire 0:1, --mtu 1300)
through a ruleset with `ct state new accept`:

- IPv4 3008-byte UDP datagram in 1500-byte fragments, no DF: reassembled,
  then cut again in pieces of at most 1300 bytes (the slow path: the
  received fragments do not fit), offsets and MF right, same id;
- the same with DF on every fragment: ICMP fragmentation needed (MTU 1300)
  back out of dp0, nothing out of dp1;
- IPv6 in 1400-byte fragments: ICMPv6 packet too big (MTU 1300) back;
- IPv4 in 500-byte fragments: they fit, so they leave as they came (the
  fast path), DF never set;
- a fragment whose datagram never completes: nothing.
Exit 0 when everything is as the model says, 1 otherwise, 77 without root.
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402
from scapy.all import (ICMP, IP, UDP, Ether, ICMPv6PacketTooBig, IPv6, IPv6ExtHdrFragment,
                       fragment, fragment6)

MTU = 1300
SRC, DST = '10.1.0.1', '10.2.0.1'
RULES = '''flush ruleset
table inet t {
	chain fw {
		type filter hook forward priority filter; policy drop;
		ct state new counter accept
	}
}
'''


def write_pcap(path, frames):
    T.write_pcap(path, frames, stamp=lambda i: (1700000000, i))


read_pcap = T.read_pcap


def eth(p):
    return bytes(Ether(src='02:00:00:00:01:10', dst='02:00:00:00:00:10') / p)


def udp4(ident, n, size, df=False):
    frags = fragment(IP(src=SRC, dst=DST, id=ident, ttl=64) / UDP(sport=1234, dport=5000) /
                     (b'x' * n), fragsize=size)
    for f in frags:
        if df:
            f.flags = f.flags | 2
    return frags


def main():
    build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else 'build'
    if not T.is_root():
        T.skip('SKIP: needs root')
    exe = os.path.join(build, 'nftdp')
    if not os.access(exe, os.X_OK):
        T.skip('SKIP: %s missing' % exe)
    big = udp4(1, 3000, 1480)
    dfd = udp4(2, 3000, 1480, df=True)
    v6 = fragment6(IPv6(src='2001:db8:1::1', dst='2001:db8:2::1', hlim=64) /
                   IPv6ExtHdrFragment(id=3) / UDP(sport=1234, dport=5000) / (b'y' * 3000), 1400)
    small = udp4(4, 1400, 480)
    lone = udp4(5, 3000, 1480)[:1]
    frames = [eth(p) for p in big + dfd + v6 + small + lone]

    # the model: the kernel forwards with TTL - 1
    want1 = []
    whole = IP(src=SRC, dst=DST, id=1, ttl=63) / UDP(sport=1234, dport=5000) / (b'x' * 3000)
    want1 += [bytes(f) for f in fragment(IP(bytes(whole)), fragsize=(MTU - 20) & ~7)]
    for f in small:
        g = IP(bytes(f))
        g.ttl = 63
        del g.chksum
        want1.append(bytes(IP(bytes(g))))
    work = tempfile.mkdtemp(prefix='nftdp-frag-mtu-')
    pfx = 'nftdp-frag-mtu-%d' % os.getpid()
    try:
        inp, empty = os.path.join(work, 'in.pcap'), os.path.join(work, 'empty.pcap')
        out0, out1 = os.path.join(work, 'out0.pcap'), os.path.join(work, 'out1.pcap')
        write_pcap(inp, frames)
        write_pcap(empty, [])
        with open(os.path.join(work, 'rules.nft'), 'w') as f:
            f.write(RULES)
        stats = os.path.join(work, 'stats.json')
        eal = T.eal_args(pfx, ['net_pcap0,rx_pcap=%s,tx_pcap=%s' % (inp, out0),
                               'net_pcap1,rx_pcap=%s,tx_pcap=%s' % (empty, out1)],
                         ('-l', '0'), log_level='error')
        args = ['--socket', os.path.join(work, 'nl.sock'), '--wire', '0:1', '--router',
                '--mtu', str(MTU), '--ifaddr', '0=10.1.255.254/16',
                '--ifaddr', '0=2001:db8:1::ffff/48', '--ruleset', os.path.join(work, 'rules.nft'),
                '--exit-on-idle', '500', '--stats-json', stats]
        r = T.run_offline(build, eal, args, pfx, timeout=60, text=False)
        if r.returncode != 0:
            print('FAIL: nftdp exit %d: %s' % (r.returncode, r.stdout.decode()[-800:]))
            return 1
        got1 = [f[14:] for f in read_pcap(out1)]
        got0 = read_pcap(out0)
        with open(stats) as f:
            st = json.load(f)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    fail = []
    if got1 != want1:
        fail.append('dp1: %d frames, the model %d' % (len(got1), len(want1)))
        for i, (a, b) in enumerate(zip(got1, want1)):
            if a != b:
                fail.append('  #%d nftdp %s / model %s' % (i, IP(a).summary(), IP(b).summary()))
                break
    icmp = [Ether(f) for f in got0]
    v4 = [p for p in icmp if ICMP in p and p[ICMP].type == 3 and p[ICMP].code == 4]
    v6e = [p for p in icmp if ICMPv6PacketTooBig in p]
    if len(icmp) != 2 or len(v4) != 1 or len(v6e) != 1:
        fail.append('dp0: %s, want one ICMP frag needed and one packet too big' %
                    [p.summary() for p in icmp])
    else:
        if v4[0][ICMP].nexthopmtu != MTU or v4[0][IP].src != '10.1.255.254':
            fail.append('frag needed: mtu %d from %s' % (v4[0][ICMP].nexthopmtu, v4[0][IP].src))
        if v6e[0][ICMPv6PacketTooBig].mtu != MTU:
            fail.append('packet too big: mtu %d' % v6e[0][ICMPv6PacketTooBig].mtu)
        for p, layer, field in ((v4[0], ICMP, 'chksum'), (v6e[0], ICMPv6PacketTooBig, 'cksum')):
            q = Ether(bytes(p))
            c = getattr(q[layer], field)
            delattr(q[layer], field)  # scapy computes it again
            c2 = getattr(Ether(bytes(q))[layer], field)
            if c != c2:
                fail.append('%s: checksum %#x, scapy %#x' % (layer.__name__, c, c2))
    drops = st.get('drops', {})
    if drops.get('frag_too_big') != 2:
        fail.append('frag_too_big %s, want 2' % drops.get('frag_too_big'))
    if fail:
        print('FAIL:\n  ' + '\n  '.join(fail))
        return 1
    print('PASS: %d fragments out of dp1, frag needed and packet too big out of dp0' % len(got1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
