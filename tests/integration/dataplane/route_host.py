#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""--route with --host-ports: unresolved next hops go to the host (issue 15).

usage: route_host.py BUILD_DIR

nftdp runs with --route --host-ports on two net_af_packet ports over the
veths dp0 and dp1 of a scratch netns, the ports named h0 and h1 (--ifname)
and so their tap host interfaces too; the host has 10.1.0.254/24 on h0 and
10.2.0.254/24 on h1 and an empty neighbour table. The kernel's own stack
never sees dp0/dp1's frames (a netdev ingress chain drops them after
AF_PACKET took its copy). Two testers: a (t0 10.1.0.1, 10.2.0.0/24 via
10.1.0.254) and b (t1 10.2.0.1, 10.1.0.0/24 via 10.2.0.254). a sends N UDP
datagrams to 10.2.0.1, one every 20 ms:

- every datagram reaches b exactly once and in order: the first ones
  waited for the host to resolve 10.2.0.1 (the host's ARP request went out
  of h1 through nftdp, b's answer came back the same way), then were sent;
- the host's neighbour table has 10.2.0.1 on h1 with b's MAC;
- later datagrams went the fast way: queued < N, all queued sent, none
  dropped unresolved; one resolution asked;
- the forward chain judged each datagram once (its counter is N), and a
  datagram the forward chain drops (to port 6000, to 10.2.0.9, another
  unresolved next hop) is never queued and asks for nothing.
Bounded: nftdp runs under timeout 80.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_A, NS_B = T.netns_name('rh'), T.netns_name('rh', 'a'), T.netns_name('rh', 'b')
checks = T.Checks(flush=True)
check = checks.check
N = 30

RULES = '''
table inet fw {
	chain fw_fwd {
		type filter hook forward priority 0; policy accept;
		udp dport 6000 counter drop
		udp dport 5000 counter
	}
}
'''

GUARD = '''
table netdev guard {
	chain a { type filter hook ingress device dp0 priority 0; policy drop; }
	chain b { type filter hook ingress device dp1 priority 0; policy drop; }
}
'''

SENDER = r'''
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b'blocked', ('10.2.0.9', 6000))
for i in range(%d):
    s.sendto(b'%%04d' %% i, ('10.2.0.1', 5000))
    time.sleep(0.02)
''' % N

RECEIVER = r'''
import json, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('10.2.0.1', 5000)); s.settimeout(3)
print('ready', flush=True)
got = []
try:
    while True:
        got.append(int(s.recv(100)))
except socket.timeout:
    pass
print(json.dumps(got), flush=True)
'''


def cleanup():
    T.netns_del(NS_DP, NS_A, NS_B)


def main(tmp):
    T.netns_add(NS_DP, ipv6=False)
    for ns in (NS_A, NS_B):
        T.netns_add(ns, ipv6=False)
    T.veth(NS_DP, 'dp0', 't0', peer_ns=NS_A)
    T.veth(NS_DP, 'dp1', 't1', peer_ns=NS_B)
    T.sh('ip', 'addr', 'add', '10.1.0.1/24', 'dev', 't0', ns=NS_A)
    T.sh('ip', 'route', 'add', '10.2.0.0/24', 'via', '10.1.0.254', ns=NS_A)
    T.sh('ip', 'addr', 'add', '10.2.0.1/24', 'dev', 't1', ns=NS_B)
    T.sh('ip', 'route', 'add', '10.1.0.0/24', 'via', '10.2.0.254', ns=NS_B)
    for ns, dev in ((NS_A, 't0'), (NS_B, 't1')):
        # full checksums on the wire (a veth leaves AF_PACKET partial ones)
        T.sh('ethtool', '-K', dev, 'tx', 'off', ns=ns)
    T.sh('nft', '-f', '-', input=GUARD, ns=NS_DP)
    rules, sj, lj = (os.path.join(tmp, x) for x in ('r.nft', 's.json', 'l.json'))
    with open(rules, 'w') as f:
        f.write(RULES)
    prefix = T.netns_name('rh')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     mem=1024)
    args = ['--socket', os.path.join(tmp, 'nl.sock'), '--route', '--host-ports', '--ruleset',
            rules, '--ifname', '0=h0', '--ifname', '1=h1', '--stats-json', sj,
            '--listing-json', lj]
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=80)
    p = d.proc
    got, neigh = None, ''
    try:
        d.wait_started(timeout=30)
        for dev, a in (('h0', '10.1.0.254/24'), ('h1', '10.2.0.254/24')):
            T.sh('ip', 'addr', 'add', a, 'dev', dev, ns=NS_DP)
            T.sh('ip', 'link', 'set', dev, 'up', ns=NS_DP)
        time.sleep(1)  # the route mirror follows the new addresses
        check('10.2.0.1' not in T.sh('ip', 'neigh', 'show', ns=NS_DP).stdout,
              'the host has no neighbour entry for 10.2.0.1 before the traffic')
        rx = subprocess.Popen(['ip', 'netns', 'exec', NS_B, '/usr/bin/python3', '-c', RECEIVER],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            rx.stdout.readline()
            s = subprocess.run(['ip', 'netns', 'exec', NS_A, '/usr/bin/python3', '-c', SENDER],
                               timeout=30, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
            check(s.returncode == 0, 'sender ran (%s)' % s.stdout[-300:])
            out = rx.communicate(timeout=20)[0]
        finally:
            if rx.poll() is None:
                rx.kill()
                rx.wait()
        try:
            got = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            print('receiver:', out[-800:])
        neigh = T.sh('ip', 'neigh', 'show', '10.2.0.1', ns=NS_DP).stdout
        bmac = T.sh('cat', '/sys/class/net/t1/address', ns=NS_B).stdout.strip()
    finally:
        d.stop(wait=20)
    check(p.returncode == 0, 'nftdp exits 0 on SIGTERM')
    print('received', got)
    print('host neighbour:', neigh.strip())
    check(got == list(range(N)), 'b got every datagram once and in order (%d of %d)' %
          (len(got or []), N))
    check('dev h1' in neigh and bmac in neigh,
          'the host resolved 10.2.0.1 on h1 to b\'s MAC %s (%s)' % (bmac, neigh.strip()))
    if not os.path.exists(sj):
        print(d.log()[-3000:])
        return
    s = json.load(open(sj))
    hs, drops = s.get('host', {}), s.get('drops', {})
    print('host', hs, 'neigh_unresolved', drops.get('neigh_unresolved'))
    check(1 <= hs.get('neigh_queued', 0) < N and hs.get('neigh_sent') == hs.get('neigh_queued'),
          'the first datagrams waited for the neighbour and were sent, the later went the '
          'fast way (queued %s, sent %s of %d)' % (hs.get('neigh_queued'), hs.get('neigh_sent'),
                                                  N))
    check(hs.get('neigh_asked') == 1 and not drops.get('neigh_unresolved'),
          'one resolution asked of the host (%s), none dropped unresolved (%s)' %
          (hs.get('neigh_asked'), drops.get('neigh_unresolved')))
    ctr = []
    for o in json.load(open(lj))['nftables']:
        if 'rule' in o and o['rule']['chain'] == "fw_fwd":
            ctr += [e['counter']['packets'] for e in o['rule']['expr'] if 'counter' in e]
    check(ctr == [1, N], 'the forward chain judged each datagram once; the dropped one was '
          'never queued (counters %s)' % ctr)


T.run_root_test('route-host', checks, main, cleanup)
