#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""arptables-nft and the arp family with --host-ports, against the kernel.

usage: arp_mangle.py BUILD_DIR

A box netns and a tester netns joined by a veth (dp0 02:00:00:00:00:01,
t0 02:00:00:00:00:02). The box owns 10.0.0.1/24 and has the same rules
twice: first on the kernel (the address on dp0, the rules loaded with
arptables-nft-restore and nft in the box netns), then on nftdp running
--host-ports over an af_packet port on dp0 (the address on its host
interface h0, which has dp0's MAC; the rules through the shim; a kernel
netdev ingress drop keeps the box's own stack off dp0). Each time the
tester sends the same ARP requests for 10.0.0.1 from several sender
addresses and captures the ARP frames that come back:

- OUTPUT mangle rules rewrite the host's replies (sender hardware and IP
  address with ACCEPT, target hardware and IP address with CONTINUE and a
  later rule that matches the rewritten address, DROP);
- an INPUT mangle rewrites a request's sender IP before the host answers;
- INPUT -s ... -j DROP and -i dp0 --opcode counters, OUTPUT -o dp0; a truncated request and one
  with 16-byte protocol addresses, which arp_rcv drops before NF_ARP_IN;
- a native arp table (arp operation, arp saddr/daddr ip, meta length)
  counts after them, and a payload write (`arp daddr ip set`) rewrites
  one reply.

The captured frames must be equal byte for byte, and so must
`arptables-nft -L -n -v -x` (policy counters included) and `nft list
table arp native` and `... filter`
(arptables-nft's rules as nft lists them, with their counters).
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_B, NS_T = T.netns_name('am'), T.netns_name('am', 't')
checks = T.Checks()
check = checks.check
MAC_B, MAC_T = '02:00:00:00:00:01', '02:00:00:00:00:02'
# AM_NO_CACHE=1: nftdp with --flow-cache 0
NO_CACHE = os.environ.get('AM_NO_CACHE') is not None

ARPT = '''*filter
:INPUT ACCEPT
:OUTPUT ACCEPT
-A INPUT -s 10.0.0.6 -j DROP
-A INPUT -s 10.0.0.9 -j mangle --mangle-ip-s 10.0.0.19
-A INPUT -i dp0 --opcode 1 -j ACCEPT
-A OUTPUT -d 10.0.0.2 -j mangle --mangle-ip-s 10.0.0.99 --mangle-mac-s 02:00:00:00:99:01
-A OUTPUT -d 10.0.0.3 -j mangle --mangle-mac-d 02:00:00:00:99:03 --mangle-ip-d 10.0.0.33 --mangle-target CONTINUE
-A OUTPUT -d 10.0.0.33 -j ACCEPT
-A OUTPUT -d 10.0.0.4 -j mangle --mangle-ip-s 10.0.0.1 --mangle-target DROP
-A OUTPUT -o dp0 -d 10.0.0.19 -j ACCEPT
'''

NATIVE = '''
table arp native {
	chain in {
		type filter hook input priority 10; policy accept;
		arp operation request counter
		arp saddr ip 10.0.0.19 counter
		meta length 28 counter
	}
	chain out {
		type filter hook output priority 10; policy accept;
		arp operation reply counter
		arp saddr ip 10.0.0.99 counter
		arp daddr ip 10.0.0.33 arp daddr ether 02:00:00:00:99:03 counter
		arp daddr ip 10.0.0.8 arp daddr ip set 10.0.0.18 counter
		meta length 42 counter
	}
}
'''

GUARD = '''
table netdev guard {
	chain a { type filter hook ingress device dp0 priority 0; policy drop; }
	chain b { type filter hook ingress device dp1 priority 0; policy drop; }
}
'''

# in NS_T: the requests, and every ARP frame that comes back (hex)
TESTER = r'''
import json, socket, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
s.bind(('t0', 0x0806)); s.settimeout(0.1)
mac = bytes.fromhex('%s'.replace(':', ''))
def req(sip):
    return (b'\xff' * 6 + mac + b'\x08\x06' + bytes([0, 1, 8, 0, 6, 4, 0, 1]) + mac +
            bytes(sip) + bytes(6) + bytes([10, 0, 0, 1]))
got = []
def drain(until):
    while time.monotonic() < until:
        try:
            b, a = s.recvfrom(200)
        except socket.timeout:
            continue
        if a[2] != socket.PACKET_OUTGOING:
            got.append(b.hex())
for last in (2, 3, 4, 6, 8, 9):
    s.send(req([10, 0, 0, last]))
    drain(time.monotonic() + 0.3)
# what arp_rcv drops before NF_ARP_IN: short of both address pairs, and
# 16-byte protocol addresses (no chain counts them, nothing answers)
s.send(req([10, 0, 0, 2])[:34])
s.send(b'\xff' * 6 + mac + b'\x08\x06' + bytes([0, 1, 8, 0, 6, 16, 0, 1]) + mac +
       bytes(16) + bytes(6) + bytes(15) + b'\x01')
drain(time.monotonic() + 2.0)
print(json.dumps(got), flush=True)
''' % MAC_T


def cleanup():
    T.netns_del(NS_B, NS_T)


def setup():
    cleanup()
    for ns in (NS_B, NS_T):
        T.netns_add(ns, ipv6=False)
    T.veth(NS_B, 'dp0', 't0', peer_ns=NS_T, mac=MAC_B, peer_mac=MAC_T)
    T.veth(NS_B, 'dp1', 't1', peer_ns=NS_T)


def tester():
    t = subprocess.run(['ip', 'netns', 'exec', NS_T, '/usr/bin/python3', '-c', TESTER],
                       timeout=30, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = t.stdout.strip().splitlines()
    if t.returncode != 0 or not out:
        print('tester:', t.stdout[-1500:])
        return None
    return json.loads(out[-1])


def kernel_run():
    """The kernel's frames and listings."""
    setup()
    T.sh('ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'dp0', ns=NS_B)
    T.sh('arptables-nft-restore', input=ARPT, ns=NS_B)
    T.sh('nft', '-f', '-', input=NATIVE, ns=NS_B)
    frames = tester()
    lst = T.sh('arptables-nft', '-L', '-n', '-v', '-x', ns=NS_B).stdout
    nat = T.sh('nft', 'list', 'table', 'arp', 'native', ns=NS_B).stdout
    nat += T.sh('nft', 'list', 'table', 'arp', 'filter', ns=NS_B).stdout
    cleanup()
    return frames, lst, nat


def nftdp_run(tmp):
    """nftdp's, with --host-ports."""
    setup()
    T.sh('nft', '-f', '-', input=GUARD, ns=NS_B)
    sock, sj = os.path.join(tmp, 'nl.sock'), os.path.join(tmp, 's.json')
    prefix = T.netns_name('am')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     mem=1024)
    args = ['--socket', sock, '--wire', '0:1', '--ifname', '0=dp0', '--ifname', '1=dp1',
            '--host-ports', '--host-ifname', '0=h0', '--host-ifname', '1=h1',
            '--stats-json', sj] + (['--flow-cache', '0'] if NO_CACHE else [])
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_B, limit=150)
    frames = lst = nat = None
    try:
        d.wait_started(timeout=60)  # a loaded host starts slowly
        T.sh('ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'h0', ns=NS_B)
        T.sh('ip', 'link', 'set', 'h0', 'up', ns=NS_B)
        env = T.nft_env(sock)

        def tool(*argv, input=None):
            e = dict(env, NFTDP_NFT=argv[0])
            return T.sh(os.path.join(BUILD, 'nftdp-nft'), *argv[1:], input=input, env=e)

        tool('/usr/sbin/arptables-nft-restore', input=ARPT)
        tool('/usr/sbin/nft', '-f', '-', input=NATIVE)
        time.sleep(0.5)  # the generation reaches the workers; h0 is up
        frames = tester()
        lst = tool('/usr/sbin/arptables-nft', '-L', '-n', '-v', '-x').stdout
        nat = tool('/usr/sbin/nft', 'list', 'table', 'arp', 'native').stdout
        nat += tool('/usr/sbin/nft', 'list', 'table', 'arp', 'filter').stdout
    finally:
        d.stop(wait=20)
        if d.proc.returncode != 0 or frames is None or os.environ.get('AM_DEBUG'):
            print(d.logtail(40))
    check(d.proc.returncode == 0, 'nftdp exits 0 on SIGTERM')
    cleanup()
    return frames, lst, nat


def arp_fields(h):
    b = bytes.fromhex(h)
    return '%s op %d sha %s spa %s tha %s tpa %s' % (
        b[6:12].hex(':'), b[21], b[22:28].hex(':'), '.'.join(map(str, b[28:32])),
        b[32:38].hex(':'), '.'.join(map(str, b[38:42])))


def main(tmp):
    if not os.path.exists('/usr/sbin/arptables-nft-restore'):
        T.skip('SKIP: no arptables-nft')
    kf, kl, kn = kernel_run()
    nf, nl, nn = nftdp_run(tmp)
    print('kernel frames:\n  ' + '\n  '.join(arp_fields(h) for h in kf or []))
    print('nftdp frames:\n  ' + '\n  '.join(arp_fields(h) for h in nf or []))
    # the kernel's own view first: what the rules must have done there
    k = [arp_fields(h) for h in kf or []]
    check(kf is not None and len(kf) == 4 and
          'spa 10.0.0.99' in k[0] and 'sha 02:00:00:00:99:01' in k[0] and
          'tha 02:00:00:00:99:03 tpa 10.0.0.33' in k[1] and 'tpa 10.0.0.18' in k[2] and
          'tpa 10.0.0.19' in k[3],
          'the kernel: 4 replies, mangled by OUTPUT (2, 3) and INPUT (9), none for 4 '
          '(mangle DROP) and 6 (INPUT DROP), 8 rewritten by arp daddr ip set')
    check(nf == kf, 'nftdp sends the kernel\'s ARP frames, byte for byte')
    # every rule's counter and each base chain's policy counter exactly
    check(kl and nl == kl, 'arptables-nft -L -n -v -x: the same rule and policy counters')
    if nl != kl:
        print('kernel:\n%s\nnftdp:\n%s' % (kl, nl))
    check(kn and nn == kn, 'nft list table arp native, arp filter: the same counters')
    if nn != kn:
        print('kernel:\n%s\nnftdp:\n%s' % (kn, nn))


T.run_root_test('arp-mangle', checks, main, cleanup)
