#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Steering with NAT, live, across two ports (docs/dataplane.md, "Steering").

usage: steer_live.py BUILD_DIR

nftdp runs with two workers on two net_af_packet ports (one rx queue each:
port 0 is worker 0's, port 1 worker 1's), --wire 0:1, inside a scratch
network namespace; a tester in a second namespace plays client (t0) and
server (t1) and answers every packet only after it saw nftdp forward the
one before, so the two directions are ordered as on a real wire. Each
connection's original direction enters on worker 0 and its replies on
worker 1: they only meet if steering brings both to the owning shard.

- DNAT (TCP and UDP to 10.9.9.9): the server sees the translated
  destination; replies come back translated to the client; every
  connection completes.
- masquerade towards the server side (--ifaddr 1=198.51.100.1): replies to
  the chosen port come back to the client.
- `ct state` counters: every packet after a connection's first is
  established, none invalid; the stats show packets steered both ways.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_T = T.netns_name('h2sl'), T.netns_name('h2sl', 't')
checks = T.Checks()
check = checks.check
N_TCP, N_UDP, N_MASQ = 12, 8, 8


RULES = '''
table ip nat {
	chain pre {
		type nat hook prerouting priority -100; policy accept;
		ip daddr 10.9.9.9 tcp dport 80 dnat to 192.168.1.10:8080
		ip daddr 10.9.9.9 udp dport 53 dnat to 192.168.1.11:5353
	}
	chain post {
		type nat hook postrouting priority 100; policy accept;
		ip daddr 203.0.113.0/24 masquerade
	}
}
table ip flt {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established counter accept
		ct state new counter accept
		ct state invalid counter drop
		counter drop
	}
}
'''

# the tester: run inside NS_T with scapy (root netns is never touched)
TESTER = r'''
import json, sys, time
from scapy.all import Ether, IP, TCP, UDP, Raw, AsyncSniffer, sendp, conf
conf.verb = 0
N_TCP, N_UDP, N_MASQ = %d, %d, %d
C, S = dict(src='02:00:00:00:00:c0', dst='02:00:00:00:00:d0'), dict(src='02:00:00:00:00:c1', dst='02:00:00:00:00:d1')
got = {'t0': [], 't1': []}
sn = {i: AsyncSniffer(iface=i, store=False, prn=lambda p, i=i: got[i].append(p)) for i in got}
for s in sn.values():
    s.start()
time.sleep(0.5)
def expect(iface, match, what):
    end = time.time() + 3
    while time.time() < end:
        for p in got[iface]:
            if match(p):
                got[iface].remove(p)
                return p
        time.sleep(0.002)
    raise SystemExit('no ' + what)
res = {'tcp': 0, 'udp': 0, 'masq': 0, 'dnat_sports': [], 'masq_sports': []}
for i in range(N_TCP):
    cli, cp = '10.1.0.%%d' %% (i + 1), 41000 + 17 * i
    sendp(Ether(**C) / IP(src=cli, dst='10.9.9.9') / TCP(sport=cp, dport=80, flags='S', seq=1000), iface='t0')
    s = expect('t1', lambda p: TCP in p and p[IP].src == cli and p[TCP].flags == 'S', 'dnat SYN')
    assert s[IP].dst == '192.168.1.10' and s[TCP].dport == 8080, s.summary()
    sp = s[TCP].sport
    res['dnat_sports'].append(sp)
    sendp(Ether(**S) / IP(src='192.168.1.10', dst=cli) / TCP(sport=8080, dport=sp, flags='SA', seq=5000, ack=1001), iface='t1')
    a = expect('t0', lambda p: TCP in p and p[IP].dst == cli and p[TCP].flags == 'SA', 'de-NATed SYN-ACK')
    assert a[IP].src == '10.9.9.9' and a[TCP].sport == 80 and a[TCP].dport == cp, a.summary()
    sendp(Ether(**C) / IP(src=cli, dst='10.9.9.9') / TCP(sport=cp, dport=80, flags='A', seq=1001, ack=5001), iface='t0')
    expect('t1', lambda p: TCP in p and p[IP].src == cli and p[TCP].flags == 'A', 'ACK')
    sendp(Ether(**S) / IP(src='192.168.1.10', dst=cli) / TCP(sport=8080, dport=sp, flags='PA', seq=5001, ack=1001) / Raw(b'x' * 10), iface='t1')
    expect('t0', lambda p: TCP in p and p[IP].dst == cli and p[TCP].flags == 'PA', 'data')
    res['tcp'] += 1
for i in range(N_UDP):
    cli, cp = '10.1.1.%%d' %% (i + 1), 42000 + 13 * i
    sendp(Ether(**C) / IP(src=cli, dst='10.9.9.9') / UDP(sport=cp, dport=53) / Raw(b'q'), iface='t0')
    s = expect('t1', lambda p: UDP in p and p[IP].src == cli, 'dnat datagram')
    assert s[IP].dst == '192.168.1.11' and s[UDP].dport == 5353, s.summary()
    sendp(Ether(**S) / IP(src='192.168.1.11', dst=cli) / UDP(sport=5353, dport=s[UDP].sport) / Raw(b'a'), iface='t1')
    a = expect('t0', lambda p: UDP in p and p[IP].dst == cli, 'de-NATed reply')
    assert a[IP].src == '10.9.9.9' and a[UDP].sport == 53 and a[UDP].dport == cp, a.summary()
    res['udp'] += 1
for i in range(N_MASQ):
    cli, cp, srv = '10.1.2.%%d' %% (i + 1), 43000 + 11 * i, '203.0.113.%%d' %% (i + 1)
    sendp(Ether(**C) / IP(src=cli, dst=srv) / UDP(sport=cp, dport=123) / Raw(b'n'), iface='t0')
    s = expect('t1', lambda p: UDP in p and p[IP].dst == srv, 'masqueraded datagram')
    assert s[IP].src == '198.51.100.1', s.summary()
    res['masq_sports'].append(s[UDP].sport)
    sendp(Ether(**S) / IP(src=srv, dst='198.51.100.1') / UDP(sport=123, dport=s[UDP].sport) / Raw(b'r'), iface='t1')
    a = expect('t0', lambda p: UDP in p and p[IP].src == srv, 'masquerade reply')
    assert a[IP].dst == cli and a[UDP].dport == cp, a.summary()
    res['masq'] += 1
for s in sn.values():
    s.stop()
print(json.dumps(res))
''' % (N_TCP, N_UDP, N_MASQ)


def cleanup():
    T.netns_del(NS_DP, NS_T)


def main(tmp):
    for ns in (NS_DP, NS_T):
        T.netns_add(ns, ipv6=False)
    for dp, t in (('dp0', 't0'), ('dp1', 't1')):
        T.veth(NS_DP, dp, t, peer_ns=NS_T)
    rules, sj, lj = (os.path.join(tmp, x) for x in ('r.nft', 's.json', 'l.json'))
    with open(rules, 'w') as f:
        f.write(RULES)
    prefix = T.netns_name('h2sl')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     lcores=('--lcores', '0@0,1@1,2@1'))
    args = ['--socket', os.path.join(tmp, 'nl.sock'), '--wire', '0:1', '--ruleset', rules,
            '--ifaddr', '1=198.51.100.1', '--stats-json', sj, '--listing-json', lj]
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=50)
    p = d.proc
    try:
        d.wait_started()
        t = subprocess.run(['ip', 'netns', 'exec', NS_T, '/usr/bin/python3', '-c', TESTER],
                           timeout=40, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = t.stdout.strip().splitlines()
        check(t.returncode == 0, 'tester: every connection completed through NAT (%s)' %
              (out[-1] if out else ''))
        res = json.loads(out[-1]) if t.returncode == 0 else {}
    finally:
        d.stop(wait=20)
    check(p.returncode == 0, 'nftdp exits 0 on SIGTERM')
    if p.returncode != 0 or not res:
        print(d.log()[-2000:])
        return
    s = json.load(open(sj))
    ctr = []
    for o in json.load(open(lj))['nftables']:
        if 'rule' in o and o['rule']['table'] == 'flt':
            ctr += [e['counter']['packets'] for e in o['rule']['expr'] if 'counter' in e]
    n_conn = N_TCP + N_UDP + N_MASQ
    n_est = 3 * N_TCP + N_UDP + N_MASQ
    check(ctr == [n_est, n_conn, 0, 0], 'ct state established %d, new %d, invalid 0, other 0 '
          '(got %s)' % (n_est, n_conn, ctr))
    st = s['steering']
    check(st['steered'] > 0 and st['ring_full'] == 0 and
          all(w['steered'] > 0 for w in s['per_worker']),
          'both workers steered packets to the other (%s)' %
          [w['steered'] for w in s['per_worker']])
    check(s['conntrack']['invalid'] == 0, 'conntrack saw nothing invalid')
    moved = sum(1 for i, sp in enumerate(res['dnat_sports']) if sp != 41000 + 17 * i)
    print('DNAT connections whose source port nftdp moved so the replies hash to its shard: '
          '%d of %d' % (moved, N_TCP))


T.run_root_test('steer-live', checks, main, cleanup)
