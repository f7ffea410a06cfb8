#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""No commit changes what it does not name (issue 12, part 1), live.

usage: commit_live.py BUILD_DIR

nftdp forwards between two net_af_packet ports (--wire 0:1) inside a
scratch netns with a stateful ruleset (policy drop, ct state
established,related accept, ct state invalid drop, tcp dport @allowed ct
state new accept). A tester in a second scratch netns opens one TCP
connection through it and holds it open. Then every kind of message nft
sends goes to the daemon, one batch at a time (tables, chains, rules, sets,
elements, objects, flowtables; flush set, chain, table, ruleset; reset
counters and quotas; table flags), and after each one the established
connection must carry data both ways. At the end conntrack must have seen
nothing invalid (--stats-json) and the ruleset's `ct state invalid` counter
must be 0. Bounded: nftdp runs under timeout 100.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_T = T.netns_name('cl'), T.netns_name('cl', 't')
checks = T.Checks(flush=True)
check = checks.check

RULES = '''
table inet fw {
	set allowed {
		type inet_service
		elements = { 80 }
	}
	chain filter {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		ct state invalid counter drop
		tcp dport @allowed ct state new accept
	}
}
'''

# one nft invocation each; every one must succeed
STEPS = [
    'add element inet fw allowed { 6000 }',
    'delete element inet fw allowed { 6000 }',
    'add table ip other',
    'add set ip other s { type ipv4_addr; }',
    'add element ip other s { 192.0.2.1 }',
    'add chain ip other c',
    'add rule ip other c counter',
    'add chain ip other base { type filter hook forward priority 10; policy accept; }',
    'add rule ip other base ip saddr @s counter',
    'flush chain ip other base',
    'add rule inet fw filter udp dport 9 counter',
    'add counter ip other cnt',
    'add quota ip other q { 100 mbytes }',
    'reset counters',
    'reset quotas',
    'delete counter ip other cnt',
    'flush set ip other s',
    'delete set ip other s',
    'add table ip other { flags dormant; }',
    'add table ip other',
    'flush table ip other',
    'delete chain ip other base',
    'delete table ip other',
    'add set inet fw other { type ipv4_addr; }',
    'flush set inet fw allowed',
    'add element inet fw allowed { 80 }',
    'delete set inet fw other',
    'add table ip other2',
    'add table ip6 six',
    'delete table ip6 six',
    'add flowtable inet fw ft { hook ingress priority 0 ; devices = { dp0, dp1 } ; }',
    'delete flowtable inet fw ft',
    'add flowtable ip other2 ft { hook ingress priority 10 ; devices = { dp1 } ; }',
    'delete table ip other2',
]

TESTER = r'''
import sys, time
from scapy.all import Ether, IP, TCP, Raw, AsyncSniffer, sendp, conf
conf.verb = 0
C = dict(src='02:00:00:00:00:c0', dst='02:00:00:00:00:d0')
S = dict(src='02:00:00:00:00:c1', dst='02:00:00:00:00:d1')
CLI, SRV, CP = '10.1.0.1', '10.2.0.1', 41000
got = {'t0': [], 't1': []}
sn = {i: AsyncSniffer(iface=i, store=False, prn=lambda p, i=i: got[i].append(p)) for i in got}
for s in sn.values():
    s.start()
time.sleep(0.5)
def expect(iface, match):
    end = time.time() + 1
    while time.time() < end:
        for p in got[iface]:
            if match(p):
                got[iface].remove(p)
                return p
        time.sleep(0.002)
    return None
seq = {'c': 1000, 's': 5000}
def tcp(side, flags, data=b''):
    if side == 'c':
        p = Ether(**C) / IP(src=CLI, dst=SRV) / TCP(sport=CP, dport=80, flags=flags, seq=seq['c'], ack=seq['s'])
    else:
        p = Ether(**S) / IP(src=SRV, dst=CLI) / TCP(sport=80, dport=CP, flags=flags, seq=seq['s'], ack=seq['c'])
    if data:
        p = p / Raw(data)
    sendp(p, iface='t0' if side == 'c' else 't1')
    seq[side] += len(data) + (1 if 'S' in flags else 0)
    want = 't1' if side == 'c' else 't0'
    return expect(want, lambda q: TCP in q and q[TCP].flags == flags and q[IP].src == (CLI if side == 'c' else SRV))
def say(s):
    print(s, flush=True)
ok = tcp('c', 'S') is not None and tcp('s', 'SA') is not None and tcp('c', 'A') is not None
say('ok' if ok else 'fail handshake')
for line in sys.stdin:
    a = tcp('c', 'PA', b'x' * 20)
    b = tcp('s', 'PA', b'y' * 30)
    say('ok' if a is not None and b is not None else 'fail %s %s' % (a is not None, b is not None))
'''


def cleanup():
    T.netns_del(NS_DP, NS_T)


def main(tmp):
    for ns in (NS_DP, NS_T):
        T.netns_add(ns, ipv6=False)
    for dp, t in (('dp0', 't0'), ('dp1', 't1')):
        T.veth(NS_DP, dp, t, peer_ns=NS_T)
    rules, sj = os.path.join(tmp, 'r.nft'), os.path.join(tmp, 's.json')
    with open(rules, 'w') as f:
        f.write(RULES)
    sock = os.path.join(tmp, 'nl.sock')
    prefix = T.netns_name('cl')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     lcores=('--lcores', '0@0,1@1'))
    args = ['--socket', sock, '--wire', '0:1', '--ruleset', rules, '--stats-json', sj,
            # the reference kernel has no flowtable type: without this every
            # flowtable is ENOENT; ports are dp0 and dp1 (the default names)
            '--flowtables']
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=100)
    p = d.proc
    env = T.nft_env(sock)
    nft = T.nft_argv(BUILD, NS_DP)
    t = None
    invalid = None
    try:
        d.wait_started(sock=sock)
        t = subprocess.Popen(['ip', 'netns', 'exec', NS_T, '/usr/bin/python3', '-c', TESTER],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        line = t.stdout.readline().strip()
        while line.startswith('WARNING'):
            line = t.stdout.readline().strip()
        check(line == 'ok', 'connection established through nftdp (%s)' % line)
        if line != 'ok':
            return
        steps = STEPS + ['-f ' + rules.replace('r.nft', 'reload.nft')]
        with open(rules.replace('r.nft', 'reload.nft'), 'w') as f:
            f.write('flush ruleset\n' + RULES)
        for cmd in steps:
            r = subprocess.run(nft + cmd.split(), env=env, timeout=20, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            check(r.returncode == 0, 'nft %s (%s)' % (cmd, r.stdout.strip()[-200:]))
            t.stdin.write('probe\n')
            t.stdin.flush()
            line = t.stdout.readline().strip()
            check(line == 'ok', 'established flow still flows after: %s (%s)' % (cmd, line))
        r = subprocess.run(nft + ['-j', 'list', 'chain', 'inet', 'fw', 'filter'], env=env,
                           timeout=20, stdout=subprocess.PIPE, text=True)
        for o in json.loads(r.stdout)['nftables']:
            if 'rule' in o:
                for e in o['rule']['expr']:
                    if 'counter' in e:
                        invalid = e['counter']['packets']
                        break
                if invalid is not None:
                    break
    finally:
        if t and t.poll() is None:
            t.stdin.close()
            try:
                t.wait(timeout=10)
            except subprocess.TimeoutExpired:
                t.kill()
        d.stop(wait=20)
    check(invalid == 0, '`ct state invalid` counter stays 0 (got %s)' % invalid)
    check(p.returncode == 0, 'nftdp exits 0 on SIGTERM')
    if os.path.exists(sj):
        s = json.load(open(sj))
        check(s['conntrack']['invalid'] == 0, 'conntrack saw nothing invalid (%s)' %
              s['conntrack']['invalid'])
    else:
        check(False, 'stats json written')
        print(d.log()[-2000:])


T.run_root_test('commit-live', checks, main, cleanup)
