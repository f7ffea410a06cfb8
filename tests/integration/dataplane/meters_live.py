#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Meters keep their per-element state across commits (issue 14, part 3), live.

usage: meters_live.py BUILD_DIR

nftdp forwards between two net_af_packet ports (--wire 0:1) inside a
scratch netns with a ruleset whose dynsets give each source address a
counter (the set's own `counter`) and a quota (the dynset's). A tester in a
second scratch netns sends UDP packets through it; then commits that do not
touch the sets (a chain, a rule, another table) and one that adds another
element to a set; the elements must keep their counters and quotas, and go
on counting from there. Bounded: nftdp runs under timeout 60.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_T = T.netns_name('ml'), T.netns_name('ml', 't')
checks = T.Checks(flush=True)
check = checks.check

RULES = '''
table ip m {
	set s {
		type ipv4_addr
		flags dynamic
		counter
	}
	set q {
		type ipv4_addr
		flags dynamic
	}
	chain f {
		type filter hook forward priority 0; policy accept;
		add @s { ip saddr }
		add @q { ip saddr quota 1000000 bytes }
	}
}
'''

STEPS = [
    'add chain ip m other',
    'add rule ip m other counter',
    'add table ip x',
    'add chain ip x c { type filter hook forward priority 10; policy accept; }',
    'delete table ip x',
    'add element ip m s { 10.9.9.9 }',
    'add element ip m q { 10.9.9.9 }',
]

# n UDP packets of 128 bytes at the IP layer from 10.1.0.1, into dp0
SENDER = r'''
import sys
from scapy.all import Ether, IP, UDP, Raw, sendp, conf
conf.verb = 0
n = int(sys.argv[1])
p = Ether(src='02:00:00:00:00:c0', dst='02:00:00:00:00:d0') / IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=7, dport=9) / Raw(b'm' * 100)
for i in range(n):
    sendp(p, iface='t0')
'''


def cleanup():
    T.netns_del(NS_DP, NS_T)


def element_state(nft, env):
    """{set: (packets, bytes, quota used)} of 10.1.0.1, or None."""
    r = subprocess.run(nft + ['-j', 'list', 'table', 'ip', 'm'], env=env, timeout=20,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return None
    out = {}
    for o in json.loads(r.stdout)['nftables']:
        s = o.get('set')
        if not s:
            continue
        for e in s.get('elem', []):
            e = e.get('elem', {}) if isinstance(e, dict) else {}
            if e.get('val') != '10.1.0.1':
                continue
            if 'counter' in e:
                out[s['name']] = (e['counter']['packets'], e['counter']['bytes'])
            if 'quota' in e:
                unit = {'bytes': 1, 'kbytes': 1 << 10, 'mbytes': 1 << 20}
                out[s['name']] = e['quota'].get('used', 0) * \
                    unit[e['quota'].get('used_unit', 'bytes')]
    return out


def send(n):
    subprocess.run(['ip', 'netns', 'exec', NS_T, '/usr/bin/python3', '-c', SENDER, str(n)],
                   timeout=30, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def wait_for(nft, env, want):
    got = None
    end = time.time() + 5
    while time.time() < end:
        got = element_state(nft, env)
        if got == want:
            break
        time.sleep(0.1)
    return got


def main(tmp):
    for ns in (NS_DP, NS_T):
        T.netns_add(ns, ipv6=False)
    for dp, t in (('dp0', 't0'), ('dp1', 't1')):
        T.veth(NS_DP, dp, t, peer_ns=NS_T)
    rules = os.path.join(tmp, 'r.nft')
    with open(rules, 'w') as f:
        f.write(RULES)
    sock = os.path.join(tmp, 'nl.sock')
    prefix = T.netns_name('ml')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     lcores=('--lcores', '0@0,1@1'))
    args = ['--socket', sock, '--wire', '0:1', '--ruleset', rules]
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=60)
    p = d.proc
    env = T.nft_env(sock)
    nft = T.nft_argv(BUILD, NS_DP)
    try:
        d.wait_started(sock=sock)
        send(5)
        want = {'s': (5, 640), 'q': 640}
        got = wait_for(nft, env, want)
        check(got == want, 'per-element state after 5 packets: %s' % got)
        for cmd in STEPS:
            r = subprocess.run(nft + cmd.split(), env=env, timeout=20, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            check(r.returncode == 0, 'nft %s (%s)' % (cmd, r.stdout.strip()[-200:]))
            got = element_state(nft, env)
            check(got == want, 'state kept after: %s (%s)' % (cmd, got))
        send(3)
        want = {'s': (8, 1024), 'q': 1024}
        got = wait_for(nft, env, want)
        check(got == want, 'and counts on from there: %s' % got)
        # get element finds an element the packet path added
        r = subprocess.run(nft + ['get', 'element', 'ip', 'm', 's', '{ 10.1.0.1 }'], env=env,
                           timeout=20, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        check(r.returncode == 0 and '10.1.0.1 counter packets 8 bytes 1024' in r.stdout,
              'get element of a dynset element: %s' % r.stdout.strip().replace('\n', ' '))
    finally:
        d.stop(wait=20)
    check(p.returncode == 0, 'nftdp exits 0 on SIGTERM')
    if checks.failures:
        print(d.log()[-2000:])


T.run_root_test('meters-live', checks, main, cleanup)
