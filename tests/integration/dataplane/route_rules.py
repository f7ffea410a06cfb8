#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""--route with `ip rule`s changed live (issue 15, policy routing).

usage: route_rules.py BUILD_DIR

nftdp runs with --route on three net_af_packet ports dp0, dp1, dp2 in a
scratch netns (10.N.0.254/24 and 2001:db8:N::254/64 on dpN-1, permanent
neighbours 10.N.0.1 / 2001:db8:N::1: the tester's tN-1 in a second netns).
Main routes 10.7.0.0/24 via dp1; table 100 routes it via dp2. The tester
sends UDP probes into dp0 while rules come and go, and each change must
show within BUDGET seconds:
- `ip rule add from 10.1.0.5 table 100`: probes from 10.1.0.5 leave dp2,
  from 10.1.0.1 still dp1; deleted: dp1 again;
- `ip rule add fwmark 7 table 100` with `meta mark set 7` at prerouting
  for 10.1.0.6: its probes leave dp2 (the mark after prerouting counts);
- `ip rule add ipproto udp sport 41000 table 100`: by source port;
- `ip rule add to 10.7.0.128/25 prohibit`, `unreachable`, `blackhole`:
  ICMP packet filtered, net unreachable (a rule's, not the host
  unreachable of an unreachable route), nothing;
- IPv6: `ip -6 rule add from 2001:db8:1::5 table 100`.
Bounded: nftdp runs under timeout 90.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402
from routewire import BUDGET, MAC, Wire  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_T = T.netns_name('rr'), T.netns_name('rr', 't')
checks = T.Checks(flush=True)
check = checks.check

RULES = '''
table inet fw {
	chain c_mark {
		type filter hook prerouting priority mangle; policy accept;
		ip saddr 10.1.0.6 meta mark set 7
	}
}
'''


def nsh(*a):
    return T.sh(*a, ns=NS_DP)


def leaves(w, dst, want, src='10.1.0.1', sport=40000, v6=False):
    """Probe until one leaves want (t1/t2); then one more must leave want only."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < BUDGET:
        tag = w.send6(dst, src=src) if v6 else w.send(dst, src=src, sport=sport)
        devs, _ = w.where(tag, wait=0.005)
        if want in devs:
            break
    tag = w.send6(dst, src=src) if v6 else w.send(dst, src=src, sport=sport)
    devs, _ = w.where(tag)
    return devs == [want], devs, time.monotonic() - t0


def step(w, what, dst, want, **kw):
    ok, devs, lat = leaves(w, dst, want, **kw)
    check(ok, '%s: %s leaves %s (%s, %.0f ms)' % (what, dst, want, devs, lat * 1000))


def main(tmp):
    T.netns_add(NS_DP)
    T.netns_add(NS_T, ipv6=False)
    for i in range(3):
        dp, t = 'dp%d' % i, 't%d' % i
        T.veth(NS_DP, dp, t, peer_ns=NS_T, mac=MAC[dp], peer_mac=MAC[t])
        nsh('ip', 'addr', 'add', '10.%d.0.254/24' % (i + 1), 'dev', dp)
        nsh('ip', 'addr', 'add', '2001:db8:%d::254/64' % (i + 1), 'dev', dp, 'nodad')
    rules = os.path.join(tmp, 'r.nft')
    with open(rules, 'w') as f:
        f.write(RULES)
    sock = os.path.join(tmp, 'nl.sock')
    prefix = T.netns_name('rr')
    eal = T.eal_args(prefix, ['net_af_packet%d,iface=dp%d' % (i, i) for i in range(3)],
                     lcores=('--lcores', '0@0,1@1'))
    args = ['--socket', sock, '--route', '--ruleset', rules]
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=90)
    w = None
    try:
        d.wait_started(sock=sock)
        for i in range(3):
            nsh('ip', 'neigh', 'replace', '10.%d.0.1' % (i + 1), 'lladdr', MAC['t%d' % i], 'dev',
                'dp%d' % i, 'nud', 'permanent')
            nsh('ip', '-6', 'neigh', 'replace', '2001:db8:%d::1' % (i + 1), 'lladdr',
                MAC['t%d' % i], 'dev', 'dp%d' % i, 'nud', 'permanent')
        nsh('ip', 'route', 'add', '10.7.0.0/24', 'via', '10.2.0.1', 'dev', 'dp1')
        nsh('ip', 'route', 'add', '10.7.0.0/24', 'via', '10.3.0.1', 'dev', 'dp2', 'table', '100')
        nsh('ip', '-6', 'route', 'add', '2001:db8:7::/64', 'via', '2001:db8:2::1', 'dev', 'dp1')
        nsh('ip', '-6', 'route', 'add', '2001:db8:7::/64', 'via', '2001:db8:3::1', 'dev', 'dp2',
            'table', '100')
        w = Wire(NS_T)
        time.sleep(0.2)
        step(w, 'main', '10.7.0.1', 't1')

        # source-based
        nsh('ip', 'rule', 'add', 'from', '10.1.0.5', 'table', '100', 'pref', '100')
        step(w, 'ip rule add from 10.1.0.5 table 100', '10.7.0.1', 't2', src='10.1.0.5')
        step(w, 'another source, same rules', '10.7.0.1', 't1')
        nsh('ip', 'rule', 'del', 'from', '10.1.0.5', 'table', '100', 'pref', '100')
        step(w, 'ip rule del: main again', '10.7.0.1', 't1', src='10.1.0.5')

        # mark-based: the mark set at prerouting
        step(w, 'marked, no rule yet', '10.7.0.1', 't1', src='10.1.0.6')
        nsh('ip', 'rule', 'add', 'fwmark', '7', 'table', '100', 'pref', '100')
        step(w, 'ip rule add fwmark 7 table 100', '10.7.0.1', 't2', src='10.1.0.6')
        step(w, 'unmarked, same rules', '10.7.0.1', 't1', src='10.1.0.7')
        nsh('ip', 'rule', 'del', 'fwmark', '7', 'table', '100', 'pref', '100')

        # by protocol and source port
        nsh('ip', 'rule', 'add', 'ipproto', 'udp', 'sport', '41000', 'table', '100', 'pref', '90')
        step(w, 'ip rule add ipproto udp sport 41000 table 100', '10.7.0.1', 't2', sport=41000)
        step(w, 'another sport, same rules', '10.7.0.1', 't1', sport=40000)
        nsh('ip', 'rule', 'del', 'pref', '90')

        # the rule actions; main still routes 10.7.0.0/24
        for kind, code in (('prohibit', 13), ('unreachable', 0), ('blackhole', None)):
            nsh('ip', 'rule', 'add', 'to', '10.7.0.128/25', kind, 'pref', '50')
            # until the rule shows: an ICMP error (or, for blackhole, a
            # probe that goes nowhere)
            t0 = time.monotonic()
            f, devs = None, ['?']
            while time.monotonic() - t0 < BUDGET:
                tag = w.send('10.7.0.200')
                if code is None:
                    devs, _ = w.where(tag, wait=0.15)
                    if not devs:
                        break
                else:
                    f = w.icmp_for(tag, wait=0.05)
                    if f is not None:
                        devs, _ = w.where(tag, wait=0.05)
                        break
            check(devs == [], 'rule %s: nothing forwarded (%s)' % (kind, devs))
            if code is None:
                tag = w.send('10.7.0.200')
                check(w.icmp_for(tag, wait=0.3) is None, 'rule blackhole: no ICMP error')
            else:
                check(f is not None and f[34] == 3 and f[35] == code,
                      'rule %s: ICMP destination unreachable code %d (%s)' %
                      (kind, code, f[34:36].hex() if f else None))
            step(w, 'rule %s: the rest of 10.7.0.0/24 still by main' % kind, '10.7.0.1', 't1')
            nsh('ip', 'rule', 'del', 'pref', '50')
        step(w, 'prohibit/unreachable/blackhole rules gone', '10.7.0.200', 't1')

        # IPv6, source-based
        step(w, 'IPv6 main', '2001:db8:7::1', 't1', src='2001:db8:1::5', v6=True)
        nsh('ip', '-6', 'rule', 'add', 'from', '2001:db8:1::5', 'table', '100', 'pref', '100')
        step(w, 'ip -6 rule add from 2001:db8:1::5 table 100', '2001:db8:7::1', 't2',
             src='2001:db8:1::5', v6=True)
        step(w, 'IPv6: another source, same rules', '2001:db8:7::1', 't1', src='2001:db8:1::1',
             v6=True)
    finally:
        if w:
            w.close()
        rc = d.stop(wait=20)
        log = d.log()
        if checks.failures:
            print(log[-3000:])
    check(rc == 0, 'nftdp exits 0 on SIGTERM')
    check('not evaluate' not in log, 'no rule reported as not evaluated')


T.run_root_test('route-rules', checks, main, lambda: T.netns_del(NS_DP, NS_T))
