#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Conntrack table exhaustion (docs/conntrack.md, "Table full").

usage: table_full.py BUILD_DIR

nftdp runs with --conntrack-max 256 and a stateful ruleset (established and
new accepted, the rest dropped) over one net_pcap port. The capture first
sets up 200 TCP connections (handshake both ways, so ASSURED), then a SYN
flood of 2000 new sources from nftdp-gen --syn-flood, interleaved with data
and acknowledgements of the established connections. Then:

- every packet of the established connections passes (the tx capture holds
  them all, in order) and each is counted `established` after its SYN;
- the flood fills the table: unassured entries are early-dropped for new
  ones, and what finds nothing to evict is dropped (conntrack drop and
  table_full in --stats-json); every flood SYN is either accepted as new
  or dropped there, none is seen otherwise;
- the daemon prints the kernel's "nf_conntrack: table full, dropping
  packet" line, rate-limited.

Run with one worker, and with two (shards of 128, the established
connections chosen so that each shard holds 100 of them; the flood is
steered across the shards).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402
from scapy.all import IP, TCP, Ether, Raw, rdpcap, wrpcap

BUILD = os.path.abspath(sys.argv[1])
checks = T.Checks()
check = checks.check
KEY = bytes([0x6d, 0x5a] * 20)
N_EST, N_FLOOD, CT_MAX = 200, 2000, 256


def toeplitz(data):
    k, klen, r = int.from_bytes(KEY, 'big'), len(KEY) * 8, 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            r ^= (k >> (klen - 32 - i)) & 0xffffffff
    return r


def owner(src, dst, sport, dport, n):
    a = socket.inet_aton(src) + socket.inet_aton(dst)
    return toeplitz(a + sport.to_bytes(2, 'big') + dport.to_bytes(2, 'big')) % n


E = dict(src='02:00:00:00:00:01', dst='02:00:00:00:00:02')
R = dict(src='02:00:00:00:00:02', dst='02:00:00:00:00:01')
SRV = '192.0.2.80'


def established(n_workers):
    """N_EST connections, as many owned by each shard; their packets."""
    per = [0] * n_workers
    conns = []
    port = 10000
    while len(conns) < N_EST:
        cli = '10.1.%d.%d' % (len(conns) // 200, len(conns) % 200 + 1)
        while per[owner(cli, SRV, port, 80, n_workers)] >= N_EST // n_workers:
            port += 1
        per[owner(cli, SRV, port, 80, n_workers)] += 1
        conns.append((cli, port))
        port += 1
    hs, data = [], []
    for i, (cli, sp) in enumerate(conns):
        a, b = 1000 + 77 * i, 500000 + 91 * i
        c = lambda fl, seq, ack, d=b'': Ether(**E) / IP(src=cli, dst=SRV) / \
            TCP(sport=sp, dport=80, flags=fl, seq=seq, ack=ack, window=65535) / Raw(d)
        s = lambda fl, seq, ack, d=b'': Ether(**R) / IP(src=SRV, dst=cli) / \
            TCP(sport=80, dport=sp, flags=fl, seq=seq, ack=ack, window=65535) / Raw(d)
        hs += [c('S', a, 0), s('SA', b, a + 1), c('A', a + 1, b + 1)]
        data.append([c('PA', a + 1, b + 1, b'd' * 100), s('A', b + 1, a + 101),
                     c('PA', a + 101, b + 1, b'e' * 100), s('PA', b + 1, a + 201, b'f' * 40)])
    return hs, data


RULES = '''
table ip tf {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ip saddr 10.1.0.0/16 ct state established counter accept
		ip daddr 10.1.0.0/16 ct state established counter accept
		ip saddr 10.1.0.0/16 ct state new counter accept
		ip saddr 10.200.0.0/16 ct state new counter accept
		counter
	}
}
'''


def run(tmp, n_workers, flood):
    tag = 'w%d' % n_workers
    hs, data = established(n_workers)
    # the handshakes, then the flood with a data packet after every 5th SYN
    steps = [p for k in range(4) for p in (d[k] for d in data)]
    pkts = list(hs)
    for i, f in enumerate(flood):
        pkts.append(f)
        if i % 5 == 4 and steps:
            p = steps.pop(0)
            pkts.append(p)
    pkts += steps
    est_all = set(bytes(p) for p in hs) | set(bytes(p) for d in data for p in d)
    wrpcap(os.path.join(tmp, tag + '-in.pcap'), pkts)
    prefix = 'nftdp-tfull-%d-%s' % (os.getpid(), tag)
    rules, sj, lj = (os.path.join(tmp, tag + x) for x in ('.nft', '.json', '-list.json'))
    with open(rules, 'w') as f:
        f.write(RULES)
    lcores = ['-l', '0-1'] if n_workers == 1 else ['--lcores', '0@0,1@1,2@1']
    eal = T.eal_args(prefix, ['net_pcap0,rx_pcap=%s/%s-in.pcap,tx_pcap=%s/%s-out.pcap' %
                              (tmp, tag, tmp, tag)], lcores)
    r = T.run_offline(BUILD, eal, ['--socket', os.path.join(tmp, tag + '.sock'),
                                   '--ruleset', rules, '--conntrack-max', str(CT_MAX),
                                   '--exit-on-idle', '400', '--stats-json', sj,
                                   '--listing-json', lj], prefix, timeout=60)
    if r.returncode != 0:
        print(r.stdout)
    check(r.returncode == 0, '%s: nftdp exits 0' % tag)
    if r.returncode != 0:
        return
    s = json.load(open(sj))
    ct = s['conntrack']
    ctr = []
    for o in json.load(open(lj))['nftables']:
        if 'rule' in o:
            ctr += [e['counter']['packets'] for e in o['rule']['expr'] if 'counter' in e]
    out = [bytes(p) for p in rdpcap(os.path.join(tmp, tag + '-out.pcap'))]
    est_out = [p for p in out if p in est_all]
    in_order = True
    for i, d in enumerate(data):  # each connection's packets in order
        conn = [bytes(p) for p in hs[3 * i:3 * i + 3] + d]
        in_order &= [p for p in est_out if p in conn] == conn
    check(sorted(est_out) == sorted(est_all) and in_order,
          '%s: all %d packets of the established connections pass, each connection in '
          'order (got %d)' % (tag, len(est_all), len(est_out)))
    n_data = sum(len(d) for d in data)
    check(ctr[0] + ctr[1] == 2 * N_EST + n_data and ctr[2] == N_EST,
          '%s: established connections: %d established, %d new (got %d + %d, %d)' %
          (tag, 2 * N_EST + n_data, N_EST, ctr[0], ctr[1], ctr[2]))
    acc = ctr[3]
    check(ct['drop'] > 0 and ct['table_full'] == ct['drop'],
          '%s: new connections dropped for a full table (drop %d, table_full %d)' %
          (tag, ct['drop'], ct['table_full']))
    check(acc + ct['drop'] == N_FLOOD and ctr[4] == 0,
          '%s: every flood SYN accepted as new (%d) or dropped by conntrack (%d), none '
          'otherwise (%d)' % (tag, acc, ct['drop'], ctr[4]))
    check(ct['early_drop'] > 0, '%s: unassured entries early-dropped for new ones (%d)' %
          (tag, ct['early_drop']))
    check(s['hooks']['prerouting']['drop'] == ct['drop'],
          '%s: the refused SYNs are dropped at prerouting (%d)' %
          (tag, s['hooks']['prerouting']['drop']))
    check(ct['max'] == CT_MAX and ct['count'] <= CT_MAX,
          '%s: table of %d entries, %d in use' % (tag, ct['max'], ct['count']))
    lines = [l for l in r.stdout.splitlines() if 'nf_conntrack: table full, dropping packet' in l]
    check(1 <= len(lines) <= 3, '%s: "table full, dropping packet" logged, rate-limited '
          '(%d lines: %s)' % (tag, len(lines), lines[:1]))
    if n_workers > 1:
        check(s['steering']['steered'] > 0 and s['steering']['ring_full'] == 0,
              '%s: steered %d, no steering drop' % (tag, s['steering']['steered']))


def main(tmp):
    fp = os.path.join(tmp, 'flood.pcap')
    g = subprocess.run([os.path.join(BUILD, 'nftdp-gen'), '--proto', 'tcp', '--syn-flood',
                        '--flows', str(N_FLOOD), '--src', '10.200.0.0-10.200.7.255',
                        '--sport', '40000', '--dport', '80', '--dst', '198.51.100.1',
                        '--count', str(N_FLOOD), '--pcap-out', fp], timeout=30)
    check(g.returncode == 0, 'nftdp-gen --syn-flood writes %d SYNs' % N_FLOOD)
    flood = rdpcap(fp)
    check(len(flood) == N_FLOOD and all(p[TCP].flags == 'S' for p in flood),
          'the flood is %d SYNs' % N_FLOOD)
    for n in (1, 2):
        run(tmp, n, flood)


tmp = tempfile.mkdtemp(prefix='nftdp-tfull.')
try:
    main(tmp)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(checks.report('table-full'))
