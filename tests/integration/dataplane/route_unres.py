#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""--route with --host-ports: a next hop that never resolves (issue 15).

usage: route_unres.py BUILD_DIR

A router between tester a (t0 10.1.0.1, 10.3.0.0/24 via 10.1.0.254) and
tester b (t1 10.2.0.1) routes 10.3.0.0/24 via 10.2.0.77, which nobody
answers. a sends one UDP datagram to 10.3.0.5 from a connected socket and
waits for the error the router reports (EHOSTUNREACH: ICMP host
unreachable) and how long it took. The router is first the kernel itself
(dp0 10.1.0.254/24, dp1 10.2.0.254/24, forwarding on), then nftdp --route
--host-ports in the same namespace (the addresses on its host interfaces
h0/h1, dp0/dp1 guarded from the kernel's stack as in route_host.py):
- both report EHOSTUNREACH (neigh_invalidate -> arp_error_report ->
  ICMP_HOST_UNREACH);
- both after about three seconds (three ARP probes a second apart: the
  kernel's own time is measured and nftdp's must be within 1.5 s of it);
- nftdp counts the datagram queued, then dropped unresolved, and a reply.
Bounded: nftdp runs under timeout 60; each wait is 10 s at most.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_A, NS_B = T.netns_name('ru'), T.netns_name('ru', 'a'), T.netns_name('ru', 'b')
checks = T.Checks(flush=True)
check = checks.check

RULES = '''
table inet fw {
	chain fw_fwd {
		type filter hook forward priority 0; policy accept;
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

# one datagram from a connected socket with IP_RECVERR: the ICMP error
# comes back as the socket's error (EHOSTUNREACH for host unreachable)
PROBE = r'''
import errno, json, socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_IP, 11, 1)  # IP_RECVERR: host unreachable is no hard error
s.connect(('10.3.0.5', 5000))
s.settimeout(10)
t0 = time.monotonic()
s.send(b'unres')
try:
    s.recv(100)
    err = 'none'
except socket.timeout:
    err = 'timeout'
except OSError as e:
    err = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps([err, time.monotonic() - t0]), flush=True)
'''


def probe():
    r = subprocess.run(['ip', 'netns', 'exec', NS_A, '/usr/bin/python3', '-c', PROBE],
                       timeout=20, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print('probe:', r.stdout[-500:])
        return [None, None]


def main(tmp):
    T.netns_add(NS_DP, ipv6=False)
    for ns in (NS_A, NS_B):
        T.netns_add(ns, ipv6=False)
    T.veth(NS_DP, 'dp0', 't0', peer_ns=NS_A)
    T.veth(NS_DP, 'dp1', 't1', peer_ns=NS_B)
    T.sh('ip', 'addr', 'add', '10.1.0.1/24', 'dev', 't0', ns=NS_A)
    T.sh('ip', 'route', 'add', '10.3.0.0/24', 'via', '10.1.0.254', ns=NS_A)
    T.sh('ip', 'addr', 'add', '10.2.0.1/24', 'dev', 't1', ns=NS_B)
    T.sh('sysctl', '-q', '-w', 'net.ipv4.ip_forward=1', 'net.ipv4.icmp_ratelimit=0', ns=NS_DP)

    # the kernel as the router
    T.sh('ip', 'addr', 'add', '10.1.0.254/24', 'dev', 'dp0', ns=NS_DP)
    T.sh('ip', 'addr', 'add', '10.2.0.254/24', 'dev', 'dp1', ns=NS_DP)
    T.sh('ip', 'route', 'add', '10.3.0.0/24', 'via', '10.2.0.77', 'dev', 'dp1', ns=NS_DP)
    kerr, kt = probe()
    print('kernel: %s after %s s' % (kerr, kt), flush=True)
    check(kerr == 'EHOSTUNREACH', 'kernel: host unreachable for a next hop that never '
          'resolves (%s)' % kerr)
    T.sh('ip', 'addr', 'flush', 'dev', 'dp0', ns=NS_DP)
    T.sh('ip', 'addr', 'flush', 'dev', 'dp1', ns=NS_DP)
    T.sh('ip', 'neigh', 'flush', 'all', ns=NS_DP)
    T.sh('ip', 'neigh', 'flush', 'all', ns=NS_A)

    # nftdp as the router
    for ns, dev in ((NS_A, 't0'), (NS_B, 't1')):
        T.sh('ethtool', '-K', dev, 'tx', 'off', ns=ns)
    T.sh('nft', '-f', '-', input=GUARD, ns=NS_DP)
    rules, sj = os.path.join(tmp, 'r.nft'), os.path.join(tmp, 's.json')
    with open(rules, 'w') as f:
        f.write(RULES)
    prefix = T.netns_name('ru')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     mem=1024)
    args = ['--socket', os.path.join(tmp, 'nl.sock'), '--route', '--host-ports', '--ruleset',
            rules, '--ifname', '0=h0', '--ifname', '1=h1', '--stats-json', sj]
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=60)
    p = d.proc
    nerr = nt = None
    try:
        d.wait_started(timeout=30)
        for dev, a in (('h0', '10.1.0.254/24'), ('h1', '10.2.0.254/24')):
            T.sh('ip', 'addr', 'add', a, 'dev', dev, ns=NS_DP)
            T.sh('ip', 'link', 'set', dev, 'up', ns=NS_DP)
        T.sh('ip', 'route', 'add', '10.3.0.0/24', 'via', '10.2.0.77', 'dev', 'h1', ns=NS_DP)
        time.sleep(1)  # the route mirror follows
        nerr, nt = probe()
        print('nftdp: %s after %s s' % (nerr, nt), flush=True)
    finally:
        d.stop(wait=20)
        if checks.failures or nerr != 'EHOSTUNREACH':
            print(d.log()[-3000:])
    check(p.returncode == 0, 'nftdp exits 0 on SIGTERM')
    check(nerr == 'EHOSTUNREACH', 'nftdp: host unreachable for a next hop that never '
          'resolves (%s)' % nerr)
    check(kt is not None and nt is not None and 2.0 <= nt <= 6.0 and abs(nt - kt) <= 1.5,
          'nftdp reports it when the kernel does (kernel %s s, nftdp %s s)' % (kt, nt))
    try:
        with open(sj) as f:
            st = json.load(f)
    except (OSError, ValueError):
        st = {}
    drops = st.get('drops', {})
    print('drops: %s' % {k: v for k, v in drops.items() if v}, flush=True)
    check(drops.get('neigh_unresolved', 0) >= 1, 'stats: the datagram dropped unresolved (%s)' %
          drops.get('neigh_unresolved'))


T.run_root_test('route-unres', checks, main, lambda: T.netns_del(NS_DP, NS_A, NS_B))
