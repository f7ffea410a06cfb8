#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""fib with live routes and no option (issue 15, part 2).

usage: fib_live.py BUILD_DIR

nftdp forwards between two net_af_packet ports (--wire 0:1) inside a
scratch netns whose kernel has 10.1.0.254/24 on dp0 and 10.2.0.254/24 on
dp1, WITHOUT --mirror-routes, with firewalld's rpfilter rule (`fib saddr
. iif oif missing drop`) and `fib daddr type local drop`. A tester sends
UDP probes into dp0 from a second netns and reads what comes out of dp1:
- a source routed out of dp0 passes, a spoofed one (dp1's subnet) and an
  unrouted one (10.7.0.1) are dropped;
- `ip route add 10.7.0.0/24 dev dp0` in nftdp's netns: 10.7.0.1 passes
  within 1 s; `ip route del`: dropped again within 1 s;
- `ip addr add 10.8.0.1/32 dev dp1`: traffic to 10.8.0.1 becomes
  `fib daddr type local` and is dropped within 1 s; `ip addr del`: passes;
- `ip -batch` of 251 routes shows within 1 s;
- with `ip rule add fwmark 1 table 100` a commit that brings fib into a
  ruleset goes through (the rules are mirrored); with `ip rule add tun_id
  5 table 100` (a selector nftdp does not evaluate) it fails with
  EOPNOTSUPP; after `ip rule del` it goes through.
Each change's latency (the change to the first probe that shows it) is
printed. Bounded: nftdp runs under timeout 60.
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_T = T.netns_name('fl'), T.netns_name('fl', 't')
checks = T.Checks(flush=True)
check = checks.check
BUDGET = 1.0  # seconds a change may take to show

RULES = '''
table inet fw {
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		fib saddr . iif oif missing counter drop
		fib daddr type local counter drop
	}
}
'''


def probe(src, dst, tag):
    """An Ethernet/IPv4/UDP frame from src to dst whose payload is tag."""
    payload = b'fiblive' + struct.pack('!I', tag)
    udp = struct.pack('!HHHH', 40000, 9, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), tag & 0xffff, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack('!H', T.inet_csum(ip)) + ip[12:]
    return b'\x02\0\0\0\0\xd0' + b'\x02\0\0\0\0\xc0' + b'\x08\x00' + ip + udp


class Wire:
    """Probes into dp0 (through t0), and what nftdp puts out on dp1 (t1)."""

    def __init__(self):
        self.tx = T.packet_socket(NS_T, 't0')
        self.rx = T.packet_socket(NS_T, 't1')
        self.rx.setblocking(False)
        self.tag = 0

    def drain(self):
        seen = set()
        while True:
            try:
                f = self.rx.recv(2048)
            except BlockingIOError:
                return seen
            i = f.find(b'fiblive')
            if i >= 0 and len(f) >= i + 11:
                seen.add(struct.unpack('!I', f[i + 7:i + 11])[0])

    def passes(self, src, dst, wait=0.15):
        """Whether one probe from src to dst comes out of dp1."""
        self.tag += 1
        tag = self.tag
        self.tx.send(probe(src, dst, tag))
        end = time.monotonic() + wait
        while time.monotonic() < end:
            if tag in self.drain():
                return True
            time.sleep(0.002)
        return False

    def until(self, src, dst, want, budget=BUDGET):
        """Probe every few ms until passes() == want; the seconds it took,
        None past the budget. Every probe waits 20 ms for its copy."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < budget:
            if self.passes(src, dst, wait=0.02) == want:
                return time.monotonic() - t0
        return None


def change(what, cmd, w, src, dst, want):
    t0 = time.monotonic()
    r = T.sh(*cmd, ns=NS_DP, check=False, merge=True)
    check(r.returncode == 0, '%s: the command succeeds (%s)' % (what, r.stdout.strip()[-200:]))
    lat = w.until(src, dst, want)
    # a probe counts as dropped after 20 ms: confirm with a patient one
    if lat is not None and not want and w.passes(src, dst, wait=0.3):
        lat = None
    if lat is not None:  # from the command's return to the first probe showing it
        print('%s: fib follows in %.1f ms' % (what, lat * 1000), flush=True)
    check(lat is not None, '%s: seen within %.0f ms (probe from %s to %s %s)' %
          (what, BUDGET * 1000, src, dst, 'passes' if want else 'dropped'))
    return time.monotonic() - t0


def cleanup():
    T.netns_del(NS_DP, NS_T)


def main(tmp):
    for ns in (NS_DP, NS_T):
        T.netns_add(ns, ipv6=False)
    for dp, t in (('dp0', 't0'), ('dp1', 't1')):
        T.veth(NS_DP, dp, t, peer_ns=NS_T)
    T.sh('ip', 'addr', 'add', '10.1.0.254/24', 'dev', 'dp0', ns=NS_DP)
    T.sh('ip', 'addr', 'add', '10.2.0.254/24', 'dev', 'dp1', ns=NS_DP)
    rules = os.path.join(tmp, 'r.nft')
    with open(rules, 'w') as f:
        f.write(RULES)
    sock = os.path.join(tmp, 'nl.sock')
    prefix = T.netns_name('fl')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     lcores=('--lcores', '0@0,1@1'))
    # no --mirror-routes: the commit that brings fib makes the mirror
    args = ['--socket', sock, '--wire', '0:1', '--ruleset', rules]
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=60)
    try:
        d.wait_started(sock=sock)
        w = Wire()
        time.sleep(0.2)
        w.drain()
        good = w.passes('10.1.0.1', '10.2.0.1', wait=0.5) or w.passes('10.1.0.1', '10.2.0.1')
        check(good, 'rpfilter: a source routed out of the receiving port passes')
        check(not w.passes('10.2.0.1', '10.2.0.2'), 'rpfilter: a spoofed source is dropped')
        check(not w.passes('10.7.0.1', '10.2.0.1'), 'rpfilter: an unrouted source is dropped')
        change('ip route add 10.7.0.0/24 dev dp0',
               ['ip', 'route', 'add', '10.7.0.0/24', 'dev', 'dp0'], w, '10.7.0.1', '10.2.0.1',
               True)
        change('ip route del 10.7.0.0/24', ['ip', 'route', 'del', '10.7.0.0/24', 'dev', 'dp0'],
               w, '10.7.0.1', '10.2.0.1', False)
        check(w.passes('10.1.0.1', '10.8.0.1'), 'traffic to 10.8.0.1 passes (not local)')
        change('ip addr add 10.8.0.1/32 dev dp1',
               ['ip', 'addr', 'add', '10.8.0.1/32', 'dev', 'dp1'], w, '10.1.0.1', '10.8.0.1',
               False)
        change('ip addr del 10.8.0.1/32 dev dp1',
               ['ip', 'addr', 'del', '10.8.0.1/32', 'dev', 'dp1'], w, '10.1.0.1', '10.8.0.1',
               True)
        # a burst: 300 routes in one go, then the last one answers
        batch = os.path.join(tmp, 'batch')
        with open(batch, 'w') as f:
            for i in range(250):
                f.write('route add 10.100.%d.0/24 dev dp1\n' % i)
            f.write('route add 10.7.0.0/24 dev dp0\n')
        change('ip -batch (251 routes)', ['ip', '-batch', batch], w, '10.7.0.1', '10.2.0.1',
               True)
        # policy routing is mirrored: a fib commit goes through with a
        # fwmark rule, and is refused only while a rule has a selector
        # nftdp does not evaluate (a tunnel id), accepted again after
        nft = T.nft_argv(BUILD, NS_DP)
        env = T.nft_env(sock)
        add = nft + ['add', 'rule', 'inet', 'fw', 'pre', 'fib', 'daddr', 'type', 'local',
                     'counter']
        flush = nft + ['flush', 'chain', 'inet', 'fw', 'pre']
        T.sh('ip', 'rule', 'add', 'fwmark', '1', 'table', '100', ns=NS_DP)
        time.sleep(0.1)
        r = T.sh(*flush, check=False, merge=True, env=env)
        check(r.returncode == 0, 'flush the fib rules (%s)' % r.stdout.strip()[-120:])
        r = T.sh(*add, check=False, merge=True, env=env)
        check(r.returncode == 0, 'ip rule fwmark 1 table 100: a fib commit goes through (%s)' %
              r.stdout.strip()[-120:])
        T.sh('ip', 'rule', 'del', 'fwmark', '1', 'table', '100', ns=NS_DP)
        T.sh('ip', 'rule', 'add', 'tun_id', '5', 'table', '100', ns=NS_DP)
        # the refusal goes by the mirror, which has the rule once its
        # notification is applied (logged); a loaded host may take a while
        until = time.monotonic() + 10
        while 'does not evaluate it' not in d.log() and time.monotonic() < until:
            time.sleep(0.05)
        r = T.sh(*flush, check=False, merge=True, env=env)
        check(r.returncode == 0, 'flush the fib rules (%s)' % r.stdout.strip()[-120:])
        r = T.sh(*add, check=False, merge=True, env=env)
        check(r.returncode != 0 and 'Operation not supported' in r.stdout,
              'ip rule tun_id 5 table 100: a fib commit fails with EOPNOTSUPP (%s)' %
              r.stdout.strip()[-120:])
        T.sh('ip', 'rule', 'del', 'tun_id', '5', 'table', '100', ns=NS_DP)
        # likewise: refused until the deletion's notification is applied
        until = time.monotonic() + 10
        while True:
            time.sleep(0.1)
            r = T.sh(*add, check=False, merge=True, env=env)
            if r.returncode == 0 or time.monotonic() > until:
                break
        check(r.returncode == 0, 'ip rule deleted: the fib commit goes through (%s)' %
              r.stdout.strip()[-120:])
    finally:
        rc = d.stop(wait=20)
        log = d.log()
        if checks.failures:
            print(log[-3000:])
    check(rc == 0, 'nftdp exits 0 on SIGTERM')
    check('mirrored' in log, 'the first fib commit made the mirror (log)')
    print(''.join(l + '\n' for l in log.splitlines() if 'routes' in l or 'mirror' in l)[-1500:],
          flush=True)


T.run_root_test('fib-live', checks, main, cleanup)
