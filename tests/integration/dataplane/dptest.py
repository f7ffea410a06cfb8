#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Dataplane integration tests over net_pcap ports (docs/dataplane.md).

usage: dptest.py BUILD_DIR replay|replay-main|wire|router|workers

replay: a crafted capture through a small ruleset on one port (replay mode):
  exact --stats-json counts, a named counter from --listing-json, and the tx
  capture holding exactly the accepted frames, in order, padding trimmed.
replay-main: the same with -l 0 (the main lcore runs the burst loop).
wire:   two ports, --wire 0:1: what is accepted from each side leaves on the
  other, in order and byte-identical; iifname/oifname see the right ports;
  TCP resets go back out of the port the packet came in on.
router: the same with --router: TTL / hop limit decremented with a valid
  header checksum, TTL 1 answered with time exceeded out of the rx port.
workers: two workers on a port with two queues, wired to a port with one tx
  queue (the second worker hands its packets to the queue's owner): every
  accepted packet arrives, each queue's in order.
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402
from scapy.all import (ARP, ICMP, IP, TCP, UDP, Ether, ICMPv6EchoRequest, IPv6,
                       Raw, rdpcap, wrpcap)

BUILD = os.path.abspath(sys.argv[1])
MODE = sys.argv[2]
checks = T.Checks()
check = checks.check


def run_nftdp(tmp, vdevs, ruleset, extra, tag, lcores=('-l', '0-1')):
    prefix = 'nftdp-dpt-%d-%s' % (os.getpid(), tag)
    rules = os.path.join(tmp, tag + '.nft')
    with open(rules, 'w') as f:
        f.write(ruleset)
    r = T.run_offline(BUILD, T.eal_args(prefix, vdevs, lcores),
                      ['--socket', os.path.join(tmp, tag + '.sock'), '--ruleset', rules,
                       '--exit-on-idle', '300'] + extra, prefix, timeout=60)
    if r.returncode != 0:
        print(r.stdout)
    check(r.returncode == 0, '%s: nftdp exits 0' % tag)
    return r


def frames(path):
    return [bytes(p) for p in rdpcap(path)]


E = dict(src='02:00:00:00:00:01', dst='02:00:00:00:00:02')


def replay(tmp, lcores=('-l', '0-1')):
    pkts, accepted = [], []

    def add(p, ok):
        pkts.append(p)
        if ok:
            accepted.append(bytes(p))

    for i in range(5):
        add(Ether(**E) / IP(src='10.1.0.%d' % i, dst='192.0.2.1') / TCP(sport=1000 + i, dport=22),
            False)
    for i in range(4):
        add(Ether(**E) / IP(src='192.0.2.%d' % (i + 5), dst='10.1.0.1') / UDP(dport=53) /
            Raw(b'q' * i), True)
    for i in range(3):
        add(Ether(**E) / IP(src='10.1.0.%d' % i, dst='10.1.0.99') / UDP(dport=53), False)
    for i in range(6):
        add(Ether(**E) / IP(src='10.1.0.%d' % i, dst='198.18.0.1') / TCP(sport=2000 + i, dport=80),
            True)
    for i in range(2):
        add(Ether(**E) / IPv6(src='2001:db8::%d' % (i + 1), dst='2001:db8::99') /
            ICMPv6EchoRequest(id=i), True)
        add(Ether(**E) / IPv6(src='2001:db8::%d' % (i + 1), dst='2001:db8::99') /
            UDP(dport=9), False)
    for i in range(2):
        add(Ether(**E) / ARP(psrc='10.1.0.%d' % i, pdst='10.1.0.99'), False)
    add(Ether(**E) / IP(src='10.1.0.1', dst='198.18.0.1', chksum=0x4242) / TCP(dport=80), False)
    # padded to 60 bytes on the wire: leaves trimmed to the datagram, as the kernel's
    small = Ether(**E) / IP(src='192.0.2.50', dst='10.1.0.1') / UDP(dport=53)
    pkts.append(Ether(bytes(small) + b'\x00' * (60 - len(small))))
    accepted.append(bytes(small))

    wrpcap(os.path.join(tmp, 'in.pcap'), pkts)
    ruleset = '''
table ip filt {
	counter c_ssh { }
	chain forward {
		type filter hook forward priority 0; policy accept;
		tcp dport 22 counter name c_ssh drop
		ip saddr 192.0.2.0/24 udp dport 53 counter accept
		udp dport 53 counter drop
	}
}
table ip6 f6 {
	chain forward {
		type filter hook forward priority 0; policy drop;
		icmpv6 type echo-request counter accept
	}
}
table netdev nd {
	chain ingress {
		type filter hook ingress device "dp0" priority 0; policy accept;
		ether type arp drop
	}
}
'''
    sj, lj = os.path.join(tmp, 'stats.json'), os.path.join(tmp, 'listing.json')
    run_nftdp(tmp, ['net_pcap0,rx_pcap=%s/in.pcap,tx_pcap=%s/out.pcap' % (tmp, tmp)], ruleset,
              ['--stats-json', sj, '--listing-json', lj], 'replay', lcores)
    s = json.load(open(sj))
    p = s['packets']
    check(p['rx'] == 26, 'replay: rx 26 (got %d)' % p['rx'])
    check(p['accepted'] == 13 and p['tx'] == 13,
          'replay: accepted and sent 13 (got %d, %d)' % (p['accepted'], p['tx']))
    check(p['dropped'] == 12, 'replay: 12 dropped by rules (got %d)' % p['dropped'])
    check(s['drops']['ip_csum'] == 1 and p['dropped_before_rules'] == 1,
          'replay: one bad header checksum dropped before the rules')
    check(s['hooks']['netdev_ingress']['drop'] == 2, 'replay: ARP dropped at netdev ingress')
    check(s['hooks']['forward']['drop'] == 10, 'replay: 10 dropped at forward (got %d)' %
          s['hooks']['forward']['drop'])
    out = frames(os.path.join(tmp, 'out.pcap'))
    check(out == accepted, 'replay: tx capture is the accepted frames, in order, trimmed '
          '(%d frames)' % len(out))
    lst = json.load(open(lj))['nftables']
    ctr = [o['counter'] for o in lst if 'counter' in o and o['counter']['name'] == 'c_ssh']
    check(len(ctr) == 1 and ctr[0]['packets'] == 5 and ctr[0]['bytes'] == 200,
          'replay: counter c_ssh packets 5 bytes 200 (got %s)' % ctr)
    # rule counters count IP lengths at ip hooks, padding trimmed
    rc = [(r['rule']['chain'], [e['counter'] for e in r['rule']['expr'] if 'counter' in e])
          for r in lst if 'rule' in r]
    rc = [(c, x[0]['packets'], x[0]['bytes']) for c, x in rc if x and isinstance(x[0], dict)]
    want = [('forward', 5, 146), ('forward', 3, 84), ('forward', 2, 96)]
    check(rc == want, 'replay: rule counters %s (got %s)' % (want, rc))


WIRE_RULES = '''
table inet w {
	chain forward {
		type filter hook forward priority 0; policy accept;
		udp dport 9 drop
		iifname "dp1" oifname "dp0" udp dport 4000 drop
		tcp dport 23 reject with tcp reset
	}
}
'''


def wire(tmp, router):
    tag = 'router' if router else 'wire'
    a, b = [], []
    a_ok, b_ok, a_rst = [], [], 0
    for i in range(20):
        kind = i % 5
        l4 = [UDP(sport=3000 + i, dport=53), UDP(sport=3000 + i, dport=9),
              UDP(sport=3000 + i, dport=4000), TCP(sport=3000 + i, dport=23, flags='S'),
              TCP(sport=3000 + i, dport=443, flags='S')][kind]
        l3 = IP(src='10.2.0.1', dst='10.3.0.%d' % i, ttl=10 + i) if i % 2 == 0 else \
            IPv6(src='2001:db8:2::1', dst='2001:db8:3::%x' % i, hlim=10 + i)
        p = Ether(**E) / l3 / l4
        a.append(p)
        if kind in (0, 2, 4):
            a_ok.append(p)
        a_rst += kind == 3
    for i in range(10):
        p = Ether(src=E['dst'], dst=E['src']) / IP(src='10.3.0.1', dst='10.2.0.1', ttl=30) / \
            UDP(sport=4000 + i, dport=4000 if i % 2 else 5000)
        b.append(p)
        if i % 2 == 0:
            b_ok.append(p)
    if router:  # TTL 1 gets time exceeded back out of dp0
        a.append(Ether(**E) / IP(src='10.2.0.1', dst='10.3.0.1', ttl=1) / UDP(dport=53))
    wrpcap(os.path.join(tmp, tag + '-a.pcap'), a)
    wrpcap(os.path.join(tmp, tag + '-b.pcap'), b)
    sj = os.path.join(tmp, tag + '-stats.json')
    vd = ['net_pcap0,rx_pcap=%s/%s-a.pcap,tx_pcap=%s/%s-o0.pcap' % (tmp, tag, tmp, tag),
          'net_pcap1,rx_pcap=%s/%s-b.pcap,tx_pcap=%s/%s-o1.pcap' % (tmp, tag, tmp, tag)]
    run_nftdp(tmp, vd, WIRE_RULES, ['--wire', '0:1', '--stats-json', sj] +
              (['--router'] if router else []), tag)
    o0 = rdpcap(os.path.join(tmp, tag + '-o0.pcap'))
    o1 = rdpcap(os.path.join(tmp, tag + '-o1.pcap'))

    def expect(p):
        if not router:
            return bytes(p)
        q = p.copy()
        if IP in q:
            q[IP].ttl -= 1
            del q[IP].chksum
        else:
            q[IPv6].hlim -= 1
        return bytes(Ether(bytes(q)))

    check([bytes(p) for p in o1] == [expect(p) for p in a_ok],
          '%s: port 1 sends what dp0 accepted, in order, %s (%d frames)' %
          (tag, 'TTL decremented' if router else 'byte-identical', len(o1)))
    fwd0 = [bytes(p) for p in o0 if UDP in p and ICMP not in p and p[UDP].sport >= 4000]
    check(fwd0 == [expect(p) for p in b_ok],
          '%s: port 0 sends what dp1 accepted, in order (oifname dp0 rule applied)' % tag)
    rst = [p for p in o0 if TCP in p and p[TCP].flags == 'RA']
    check(len(rst) == a_rst, '%s: %d TCP resets out of dp0 (got %d)' % (tag, a_rst, len(rst)))
    ok = all(p[TCP].dport >= 3000 and p[Ether].dst == E['src'] for p in rst)
    check(ok, '%s: resets go to the sender (MACs swapped, ports swapped)' % tag)
    for p in rst:  # checksums as scapy recomputes them
        q = p.copy()
        if IP in q:
            del q[IP].chksum
        del q[TCP].chksum
        if bytes(Ether(bytes(q))) != bytes(p):
            check(False, '%s: reset checksums valid' % tag)
            break
    if router:
        te = [p for p in o0 if ICMP in p and p[ICMP].type == 11]
        check(len(te) == 1 and te[0][IP].src == '10.3.0.1' and te[0][IP].ttl == 64,
              'router: one time exceeded from the original destination, TTL 64')
        s = json.load(open(sj))
        check(s['drops']['ttl_exceeded'] == 1, 'router: ttl_exceeded counted')


def workers(tmp):
    qa = [Ether(**E) / IP(src='10.4.0.1', dst='10.9.0.%d' % i) / UDP(dport=53 if i % 3 else 9)
          for i in range(100)]
    qb = [Ether(**E) / IP(src='10.4.1.1', dst='10.9.1.%d' % i) / UDP(dport=53 if i % 3 else 9)
          for i in range(100)]
    wrpcap(os.path.join(tmp, 'qa.pcap'), qa)
    wrpcap(os.path.join(tmp, 'qb.pcap'), qb)
    wrpcap(os.path.join(tmp, 'empty.pcap'), [])
    sj = os.path.join(tmp, 'mq.json')
    vd = ['net_pcap0,rx_pcap={0}/qa.pcap,rx_pcap={0}/qb.pcap,tx_pcap={0}/m0a.pcap,'
          'tx_pcap={0}/m0b.pcap'.format(tmp),
          'net_pcap1,rx_pcap={0}/empty.pcap,tx_pcap={0}/m1.pcap'.format(tmp)]
    rules = ('table ip t {\n\tchain forward {\n\t\ttype filter hook forward priority 0; '
             'policy accept;\n\t\tudp dport 9 drop\n\t}\n}\n')
    # three lcores on two CPUs: main and two workers
    run_nftdp(tmp, vd, rules, ['--wire', '0:1', '--stats-json', sj], 'workers',
              ('--lcores', '0@0,1@1,2@1'))
    s = json.load(open(sj))
    check(s['workers'] == 2 and all(w['rx'] == 100 for w in s['per_worker']),
          'workers: two workers, one rx queue each')
    out = [bytes(p) for p in rdpcap(os.path.join(tmp, 'm1.pcap'))]
    ea = [bytes(p) for p in qa if p[UDP].dport == 53]
    eb = [bytes(p) for p in qb if p[UDP].dport == 53]
    check([f for f in out if f in ea] == ea and [f for f in out if f in eb] == eb and
          len(out) == len(ea) + len(eb),
          'workers: port 1 sends all %d accepted, each queue in order (got %d)' %
          (len(ea) + len(eb), len(out)))


tmp = tempfile.mkdtemp(prefix='nftdp-dptest.')
try:
    if MODE == 'replay':
        replay(tmp)
    elif MODE == 'replay-main':  # no worker lcore: the main lcore runs the burst loop
        replay(tmp, ('-l', '0'))
    elif MODE == 'wire':
        wire(tmp, False)
    elif MODE == 'router':
        wire(tmp, True)
    elif MODE == 'workers':
        workers(tmp)
    else:
        sys.exit('unknown mode ' + MODE)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(checks.report(MODE))
