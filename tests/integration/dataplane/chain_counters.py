#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Base chain counters (NFTA_CHAIN_COUNTERS) through iptables-nft, against
the kernel (issue 17).

usage: chain_counters.py BUILD_DIR

A box netns and a tester netns joined by a veth (dp0, t0; dp1, t1 unused).
The box owns 10.0.0.1/24 and gets the same iptables-nft rules twice: first
on the kernel (the address on dp0), then on nftdp running --host-ports
over af_packet ports (the address on its host interface h0; a kernel
netdev ingress drop keeps the box's own stack off dp0). Each time, the
tester sends ICMP echo requests (INPUT's policy counts them, OUTPUT's the
replies) and UDP to port 9 (a rule drops those), and these must be equal
on both, policy lines included:

- `iptables-nft -L -n -v -x` and `iptables-nft-save -c` after the traffic;
- the same after `iptables-nft -Z` (the chains' counters zeroed by a chain
  update), and after more traffic;
- the same after `iptables-nft-restore -c` gives INPUT and OUTPUT counter
  values (`:INPUT ACCEPT [12:3456]`), and after more traffic on top;
- `nft list ruleset` (nft prints no chain counters) at the end.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_B, NS_T = T.netns_name('cc'), T.netns_name('cc', 't')
checks = T.Checks()
check = checks.check
MAC_B, MAC_T = '02:00:00:00:00:01', '02:00:00:00:00:02'
# CC_NO_CACHE=1: nftdp with --flow-cache 0
NO_CACHE = os.environ.get('CC_NO_CACHE') is not None

RULES = '''*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -p udp --dport 9 -j DROP
-A OUTPUT -p udp --dport 7777 -j DROP
COMMIT
'''

RESTORE = '''*filter
:INPUT ACCEPT [12:3456]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [7:700]
[5:500] -A INPUT -p udp --dport 9 -j DROP
-A OUTPUT -p udp --dport 7777 -j DROP
COMMIT
'''

GUARD = '''
table netdev guard {
	chain a { type filter hook ingress device dp0 priority 0; policy drop; }
	chain b { type filter hook ingress device dp1 priority 0; policy drop; }
}
'''

# in NS_T: N echo requests to 10.0.0.1 (waiting for each reply) and N UDP
# datagrams to its port 9; prints how many replies came back
TESTER = r'''
import socket, struct, sys, time
n = int(sys.argv[1])
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
icmp = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
icmp.settimeout(0.2)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
got = 0
for i in range(n):
    body = struct.pack('!BBHHH', 8, 0, 0, 0x77, i) + bytes(56)
    body = body[:2] + struct.pack('!H', csum(body)) + body[4:]
    for attempt in range(2):  # the first may wait on ARP
        icmp.sendto(body, ('10.0.0.1', 0))
        until = time.monotonic() + 2.0
        ok = False
        while time.monotonic() < until:
            try:
                b = icmp.recv(200)
            except socket.timeout:
                continue
            if b[20] == 0 and struct.unpack('!H', b[26:28])[0] == i:
                ok = True
                break
        if ok:
            got += 1
            break
    udp.sendto(b'x' * (10 + i), ('10.0.0.1', 9))
time.sleep(0.3)
print(got, flush=True)
'''


def cleanup():
    T.netns_del(NS_B, NS_T)


def setup():
    cleanup()
    for ns in (NS_B, NS_T):
        T.netns_add(ns, ipv6=False)
    T.veth(NS_B, 'dp0', 't0', peer_ns=NS_T, mac=MAC_B, peer_mac=MAC_T)
    T.veth(NS_B, 'dp1', 't1', peer_ns=NS_T)
    T.sh('ip', 'addr', 'add', '10.0.0.2/24', 'dev', 't0', ns=NS_T)


def traffic(n):
    t = subprocess.run(['ip', 'netns', 'exec', NS_T, '/usr/bin/python3', '-c', TESTER, str(n)],
                       timeout=60, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = t.stdout.strip().splitlines()
    return int(out[-1]) if t.returncode == 0 and out and out[-1].isdigit() else t.stdout[-800:]


def save_clean(s):
    # the generated/completed comment lines carry a date
    return '\n'.join(x for x in s.splitlines() if not x.startswith('#'))


def scenario(tool):
    """The steps on one side: what each listing showed, in order."""
    seen = []

    def look(what):
        seen.append((what + ': iptables -L -n -v -x',
                     tool('/usr/sbin/iptables-nft', '-L', '-n', '-v', '-x').stdout))
        seen.append((what + ': iptables-save -c',
                     save_clean(tool('/usr/sbin/iptables-nft-save', '-c').stdout)))

    tool('/usr/sbin/iptables-nft-restore', input=RULES)
    time.sleep(0.5)  # the generation reaches the workers
    seen.append(('replies to 4 pings', traffic(4)))
    look('after traffic')
    tool('/usr/sbin/iptables-nft', '-Z')
    look('after -Z')
    seen.append(('replies to 3 pings', traffic(3)))
    look('after -Z and traffic')
    tool('/usr/sbin/iptables-nft-restore', '-c', input=RESTORE)
    time.sleep(0.5)
    look('after restore -c')
    seen.append(('replies to 2 pings', traffic(2)))
    look('after restore -c and traffic')
    seen.append(('nft list ruleset', tool('/usr/sbin/nft', 'list', 'ruleset').stdout))
    return seen


def kernel_run():
    setup()
    T.sh('ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'dp0', ns=NS_B)

    def tool(*argv, input=None):
        return T.sh(*argv, input=input, ns=NS_B)

    try:
        return scenario(tool)
    finally:
        cleanup()


def nftdp_run(tmp):
    setup()
    T.sh('nft', '-f', '-', input=GUARD, ns=NS_B)
    sock, sj = os.path.join(tmp, 'nl.sock'), os.path.join(tmp, 's.json')
    prefix = T.netns_name('cc')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     mem=1024)
    args = ['--socket', sock, '--wire', '0:1', '--ifname', '0=dp0', '--ifname', '1=dp1',
            '--host-ports', '--host-ifname', '0=h0', '--host-ifname', '1=h1',
            '--stats-json', sj] + (['--flow-cache', '0'] if NO_CACHE else [])
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_B, limit=200)
    seen = None
    try:
        d.wait_started(timeout=60)  # a loaded host starts slowly
        T.sh('ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'h0', ns=NS_B)
        T.sh('ip', 'link', 'set', 'h0', 'up', ns=NS_B)
        env = T.nft_env(sock)

        def tool(*argv, input=None):
            e = dict(env, NFTDP_NFT=argv[0])
            return T.sh(os.path.join(BUILD, 'nftdp-nft'), *argv[1:], input=input, env=e)

        seen = scenario(tool)
    finally:
        d.stop(wait=20)
        if d.proc.returncode != 0 or seen is None or os.environ.get('CC_DEBUG'):
            print(d.logtail(40))
        cleanup()
    check(d.proc.returncode == 0, 'nftdp exits 0 on SIGTERM')
    return seen


def main(tmp):
    if not os.path.exists('/usr/sbin/iptables-nft-restore'):
        T.skip('SKIP: no iptables-nft')
    k = kernel_run()
    n = nftdp_run(tmp)
    # the kernel's own view first: the policies counted the pings
    kl = dict(k)
    check(kl.get('replies to 4 pings') == 4, 'the kernel answers the pings')
    check(re.search(r'policy ACCEPT 4 packets, 336 bytes', kl.get('after traffic: iptables -L '
                                                                  '-n -v -x', '')) is not None,
          'the kernel: INPUT\'s policy counted the 4 echo requests')
    for (what, kv), (_, nv) in zip(k, n):
        check(kv == nv, what + ': as the kernel')
        if kv != nv:
            print('kernel:\n%s\nnftdp:\n%s' % (kv, nv))
    check(len(k) == len(n), 'every step ran on nftdp')


T.run_root_test('chain-counters', checks, main, cleanup)
