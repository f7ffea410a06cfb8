#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`tcpdump -i nflog:4` (libpcap's nflog capture) against nftdp and the kernel.

usage: nflog_tcpdump.py BUILD_DIR

The same ruleset (`log group 4` at netdev ingress of dp0, with a prefix
and, for UDP, a snaplen) on each side: the kernel in a scratch netns whose
dp0 is a veth from a tester netns, and nftdp on net_af_packet ports in
another scratch netns, with the stock tcpdump run through the shim
(LD_PRELOAD, NFTDP_SOCKET). The tester sends the same frames to each; the
tcpdump captures (DLT_NFLOG) must print the same under `tcpdump -r -n -t
-v`, and hold the same packets. Skipped (77) without root or tcpdump.
Every step is bounded; the namespaces and nftdp go on any exit.
"""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_K, NS_D, NS_T = T.netns_name('nfk'), T.netns_name('nfd'), T.netns_name('nfl', 't')
checks = T.Checks(flush=True)
check = checks.check

RULES = '''
table netdev n {
	chain ing {
		type filter hook ingress device "dp0" priority filter; policy accept;
		udp dport 9 log group 4 snaplen 40 prefix "udp9 "
		tcp dport 80 log group 4 prefix "web "
		icmp type echo-request log group 4
	}
}
'''
N = 4  # frames logged (one more, to port 10, is not)

SENDER = r'''
from scapy.all import Ether, IP, TCP, UDP, ICMP, Raw, sendp, conf
conf.verb = 0
e = Ether(src='02:00:00:00:00:c0', dst='02:00:00:00:00:d0')
a = dict(src='10.1.0.1', dst='10.2.0.1')
for p in (IP(**a) / UDP(sport=7, dport=9) / Raw(b'u' * 100),
          IP(**a) / UDP(sport=7, dport=10) / Raw(b'not logged'),
          IP(**a) / TCP(sport=1000, dport=80, flags='S', seq=1),
          IP(**a) / ICMP(type=8, id=3, seq=1) / Raw(b'ping'),
          IP(**a) / UDP(sport=8, dport=9) / Raw(b'short')):
    sendp(e / p, iface='t0')
'''


def cleanup():
    T.netns_del(NS_K, NS_D, NS_T)


def send():
    subprocess.run(['ip', 'netns', 'exec', NS_T, '/usr/bin/python3', '-c', SENDER], timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def tcpdump_start(ns, env, out, err):
    """tcpdump -i nflog:4 -c N -w OUT in ns; returns once it listens."""
    f = open(err, 'w')
    p = subprocess.Popen(['ip', 'netns', 'exec', ns, 'timeout', '30', 'tcpdump', '-Z', 'root',
                          '-i', 'nflog:4', '-c', str(N), '-U', '-w', out], env=env,
                         stdout=subprocess.DEVNULL, stderr=f, start_new_session=True)
    end = time.time() + 10
    while time.time() < end:
        with open(err) as g:
            if 'listening on' in g.read():
                return p
        if p.poll() is not None:
            break
        time.sleep(0.05)
    with open(err) as g:
        check(False, 'tcpdump listens (%s)' % g.read().strip()[-300:])
    T.kill_group(p)
    return None


def tcpdump_wait(p, err):
    try:
        rc = p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        T.kill_group(p)
        rc = -1
    with open(err) as g:
        check(rc == 0, 'tcpdump got %d packets and exits 0 (rc %d: %s)' %
              (N, rc, g.read().strip().replace('\n', ' ')[-300:]))


def decode(path):
    r = subprocess.run(['tcpdump', '-r', path, '-n', '-t', '-v'], timeout=20,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return r.stdout.splitlines()


def kernel_side(tmp, rules):
    T.netns_add(NS_K, ipv6=False)
    T.netns_add(NS_T, ipv6=False)
    T.veth(NS_K, 'dp0', 't0', peer_ns=NS_T)
    r = subprocess.run(['ip', 'netns', 'exec', NS_K, 'nft', '-f', rules], timeout=20,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(r.returncode == 0, 'kernel loads the ruleset (%s)' % r.stdout.strip())
    out, err = os.path.join(tmp, 'kernel.pcap'), os.path.join(tmp, 'kernel.err')
    p = tcpdump_start(NS_K, None, out, err)
    if p:
        send()
        tcpdump_wait(p, err)
    T.netns_del(NS_K, NS_T)
    return decode(out) if os.path.exists(out) else []


def nftdp_side(tmp, rules):
    T.netns_add(NS_D, ipv6=False)
    T.netns_add(NS_T, ipv6=False)
    for dp, t in (('dp0', 't0'), ('dp1', 't1')):
        T.veth(NS_D, dp, t, peer_ns=NS_T)
    sock = os.path.join(tmp, 'nl.sock')
    prefix = T.netns_name('nfd')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     lcores=('--lcores', '0@0,1@1'))
    d = T.Daemon(BUILD, eal, ['--socket', sock, '--wire', '0:1', '--ruleset', rules,
                              '--ifname', '0=dp0', '--ifname', '1=dp1'],
                 prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_D, limit=60)
    lines = []
    try:
        d.wait_started(sock=sock)
        out, err = os.path.join(tmp, 'nftdp.pcap'), os.path.join(tmp, 'nftdp.err')
        p = tcpdump_start(NS_D, T.nft_env(sock, shim=T.shim_path(BUILD)), out, err)
        if p:
            send()
            tcpdump_wait(p, err)
            lines = decode(out) if os.path.exists(out) else []
    finally:
        d.stop(wait=20)
    check(d.proc.returncode == 0, 'nftdp exits 0 on SIGTERM')
    if checks.failures:
        print(d.log()[-2000:])
    return lines


def main(tmp):
    if not shutil.which('tcpdump'):
        print('SKIP: no tcpdump')
        sys.exit(77)
    rules = os.path.join(tmp, 'r.nft')
    with open(rules, 'w') as f:
        f.write(RULES)
    k = kernel_side(tmp, rules)
    n = nftdp_side(tmp, rules)
    check(len(k) >= N, 'the kernel side decodes %d packets: %s' % (N, k))
    check(k == n, 'tcpdump prints the same for nftdp:\n  kernel: %s\n  nftdp:  %s' %
          ('\n          '.join(k), '\n          '.join(n)))


T.run_root_test('nflog-tcpdump', checks, main, cleanup)
