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
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_T = T.netns_name('rr'), T.netns_name('rr', 't')
checks = T.Checks(flush=True)
check = checks.check
# as route_live.py: milliseconds on an idle host, more on a loaded one
BUDGET = 3.0
MAC = {n: '02:00:00:00:%02x:%02x' % (0xd0 + i // 3 * 0x10, i % 3) for i, n in
       enumerate(('dp0', 'dp1', 'dp2', 't0', 't1', 't2'))}

RULES = '''
table inet fw {
	chain c_mark {
		type filter hook prerouting priority mangle; policy accept;
		ip saddr 10.1.0.6 meta mark set 7
	}
}
'''


def mac(s):
    return bytes(int(x, 16) for x in s.split(':'))


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def probe6(src, dst, tag):
    payload = b'rtlive' + struct.pack('!I', tag)
    ulen = 8 + len(payload)
    s6, d6 = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
    udp = struct.pack('!HHHH', 40000, 9, ulen, 0) + payload
    ph = s6 + d6 + struct.pack('!IxxxB', ulen, 17)
    udp = udp[:6] + struct.pack('!H', csum(ph + udp) or 0xffff) + udp[8:]
    ip = struct.pack('!IHBB', 0x60000000, ulen, 17, 64) + s6 + d6
    return mac(MAC['dp0']) + mac(MAC['t0']) + b'\x86\xdd' + ip + udp


def probe(src, dst, tag, sport=40000):
    payload = b'rtlive' + struct.pack('!I', tag)
    udp = struct.pack('!HHHH', sport, 9, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), tag & 0xffff, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return mac(MAC['dp0']) + mac(MAC['t0']) + b'\x08\x00' + ip + udp


class Wire:
    """Probes into dp0 through t0; what comes out on t0, t1, t2, read by a thread."""

    def __init__(self):
        self.tx = T.packet_socket(NS_T, 't0')
        self.rx = {d: T.packet_socket(NS_T, d) for d in ('t0', 't1', 't2')}
        for s in self.rx.values():
            # a lagging reader thread must not lose what nftdp sent
            s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
            s.settimeout(0.01)
        self.lock = threading.Lock()
        self.seen = []  # (when, dev, tag, frame)
        self.icmp = []  # (when, frame) ICMP into t0
        self.icmp6 = []  # (when, frame) ICMPv6 into t0
        self.icmp_other = []  # (when, dev, frame) ICMP out of t1, t2
        self.stop = False
        self.th = threading.Thread(target=self.loop, daemon=True)
        self.th.start()
        self.tag = 0

    def loop(self):
        while not self.stop:
            for d, s in self.rx.items():
                while True:
                    try:
                        f, addr = s.recvfrom(4096)
                    except (socket.timeout, BlockingIOError):
                        break
                    if addr[2] == socket.PACKET_OUTGOING:
                        continue
                    now = time.monotonic()
                    i = f.find(b'rtlive')
                    with self.lock:
                        if len(f) > 34 and f[12:14] == b'\x08\x00' and f[23] == 1:
                            if d == 't0':
                                self.icmp.append((now, f))
                            else:
                                self.icmp_other.append((now, d, f))
                        elif d == 't0' and len(f) > 62 and f[12:14] == b'\x86\xdd' and \
                                f[20] == 58:
                            self.icmp6.append((now, f))
                        elif i == 62 and f[12:14] == b'\x86\xdd' and f[20] == 17 and \
                                len(f) >= 72:
                            self.seen.append((now, d, struct.unpack('!I', f[68:72])[0], f))
                        elif i >= 0 and len(f) >= i + 10 and f[12:14] == b'\x08\x00' and \
                                f[23] == 17 and i == 42:
                            self.seen.append((now, d, struct.unpack('!I', f[i + 6:i + 10])[0],
                                              f))
                    s.settimeout(0)
                s.settimeout(0.002)

    def close(self):
        self.stop = True
        self.th.join(2)

    def send(self, dst, src='10.1.0.1', sport=40000):
        self.tag += 1
        self.tx.send(probe(src, dst, self.tag, sport))
        return self.tag

    def until6(self, dst, want_dev, budget=BUDGET):
        t0 = time.monotonic()
        while time.monotonic() - t0 < budget:
            devs, _ = self.where(self.send6(dst), wait=0.005)
            if want_dev in devs:
                return time.monotonic() - t0
        return None

    def icmp_on(self, dev, tag):
        """An ICMP error quoting probe tag that came out on dev, None yet."""
        with self.lock:
            for _, d, f in self.icmp_other:
                if d == dev and len(f) >= 48 and struct.unpack('!H', f[46:48])[0] == tag & 0xffff:
                    return f
        return None

    def send6(self, dst, src='2001:db8:1::1'):
        self.tag += 1
        self.tx.send(probe6(src, dst, self.tag))
        return self.tag

    def icmp6_for(self, tag, wait=0.15):
        """An ICMPv6 error quoting probe tag that came back to t0."""
        end = time.monotonic() + wait
        while True:
            with self.lock:
                for _, f in self.icmp6:
                    # eth 14 + ip6 40 + icmp6 8 + quoted ip6 40 + udp 8: 'rtlive' + tag
                    if len(f) >= 120 and f[110:116] == b'rtlive' and \
                            struct.unpack('!I', f[116:120])[0] == tag:
                        return f
            if time.monotonic() >= end:
                return None
            time.sleep(0.002)

    def where(self, tag, wait=0.15):
        """The devices tag came out of (after up to wait seconds) and one frame."""
        end = time.monotonic() + wait
        while True:
            with self.lock:
                hits = [(d, f) for _, d, t, f in self.seen if t == tag]
            if hits or time.monotonic() >= end:
                return [d for d, _ in hits], hits[0][1] if hits else None
            time.sleep(0.002)

    def icmp_for(self, tag, wait=0.15):
        """An ICMP error quoting probe tag (its IP id) that came back to t0."""
        end = time.monotonic() + wait
        while True:
            with self.lock:
                for _, f in self.icmp:
                    # eth 14 + ip 20 + icmp 8 + quoted ip: id at 4
                    if len(f) >= 48 and struct.unpack('!H', f[46:48])[0] == tag & 0xffff:
                        return f
            if time.monotonic() >= end:
                return None
            time.sleep(0.002)

    def until(self, dst, want_dev, budget=BUDGET):
        """Probe until a probe to dst comes out of want_dev; the seconds it took."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < budget:
            tag = self.send(dst)
            devs, _ = self.where(tag, wait=0.005)
            if want_dev in devs:
                return time.monotonic() - t0
        return None



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
        w = Wire()
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
