#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""--route with a routing daemon: bird2 learns a prefix over BGP (issue 15, part 2).

usage: route_bird.py BUILD_DIR

Three scratch netns: nftdp's (ports dp0 and dp1 over net_af_packet, the
kernel has 10.1.0.254/24 and 10.2.0.254/24 on them, and an unmodified
bird2 peers over dp1 with AS 65001 at 10.2.0.1), the peer's (b1, bird2
announcing 10.50.0.0/24 from a static protocol, next hop itself) and the
tester's (t0, the other end of dp0). Once the kernel in nftdp's netns has
the BGP route 10.50.0.0/24 via 10.2.0.1 dev dp1 (and the neighbour the
BGP session resolved), a probe from t0 to 10.50.0.1 comes out of b1 with
dp1's MAC as source and b1's as destination. `birdc disable` of the
static protocol withdraws the prefix: the probe then gets ICMP net
unreachable back on t0. Skipped without bird. Bounded: every daemon runs
under timeout 90 and is ended by its pid.
"""
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_T, NS_B = (T.netns_name('rb'), T.netns_name('rb', 't'), T.netns_name('rb', 'b'))
checks = T.Checks(flush=True)
check = checks.check
MAC = {'dp0': '02:00:00:00:d0:00', 'dp1': '02:00:00:00:d0:01', 't0': '02:00:00:00:e0:00',
       'b1': '02:00:00:00:e0:01'}

BIRD_DP = '''
router id 10.2.0.254;
protocol device { scan time 1; }
protocol kernel { ipv4 { export all; import none; }; }
protocol bgp peer {
	local 10.2.0.254 as 65000;
	neighbor 10.2.0.1 as 65001;
	connect delay time 1; connect retry time 1; error wait time 1, 2;
	ipv4 { import all; export none; };
}
'''
BIRD_B = '''
router id 10.2.0.1;
protocol device { scan time 1; }
protocol static st { ipv4; route 10.50.0.0/24 blackhole; }
protocol bgp peer {
	local 10.2.0.1 as 65001;
	neighbor 10.2.0.254 as 65000;
	connect delay time 1; connect retry time 1; error wait time 1, 2;
	ipv4 { import none; export where proto = "st"; };
}
'''


def probe(dst, tag):
    payload = b'rtbird' + struct.pack('!I', tag)
    udp = struct.pack('!HHHH', 40000, 9, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), tag, 0, 64, 17, 0,
                     socket.inet_aton('10.1.0.1'), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack('!H', T.inet_csum(ip)) + ip[12:]
    return T.mac_bytes(MAC['dp0']) + T.mac_bytes(MAC['t0']) + b'\x08\x00' + ip + udp


class Bird:
    """bird -f in netns ns with config text, ended by its pid."""

    def __init__(self, ns, tmp, name, conf):
        self.conf = os.path.join(tmp, name + '.conf')
        self.sock = os.path.join(tmp, name + '.ctl')
        self.pidf = os.path.join(tmp, name + '.pid')
        self.log = os.path.join(tmp, name + '.log')
        with open(self.conf, 'w') as f:
            f.write(conf)
        self.ns = ns
        with open(self.log, 'w') as log:
            self.p = subprocess.Popen(
                T.in_ns(ns) + ['sh', '-c', 'echo $$ >"$0"; exec "$@"', self.pidf, 'timeout',
                               '90', 'bird', '-f', '-c', self.conf, '-s', self.sock],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def birdc(self, *cmd):
        return T.sh('birdc', '-s', self.sock, *cmd, ns=self.ns, check=False, merge=True).stdout

    def stop(self):
        if self.p.poll() is None:
            try:
                with open(self.pidf) as f:
                    os.kill(int(f.read()), signal.SIGTERM)  # timeout passes it to bird
            except (OSError, ValueError):
                self.p.terminate()
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def text(self):
        with open(self.log, errors='replace') as f:
            return f.read()


def recv_tag(s, tag, wait):
    """The frame of probe tag read from packet socket s within wait seconds."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        s.settimeout(max(0.001, end - time.monotonic()))
        try:
            f, addr = s.recvfrom(4096)
        except socket.timeout:
            return None
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        i = f.find(b'rtbird')
        if i == 42 and struct.unpack('!I', f[i + 6:i + 10])[0] == tag:
            return f
    return None


def recv_icmp(s, tag, wait):
    """An ICMP error quoting probe tag (its IP id) read from s within wait seconds."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        s.settimeout(max(0.001, end - time.monotonic()))
        try:
            f, addr = s.recvfrom(4096)
        except socket.timeout:
            return None
        if addr[2] == socket.PACKET_OUTGOING or len(f) < 48 or f[23] != 1:
            continue
        if struct.unpack('!H', f[46:48])[0] == tag:
            return f
    return None


def wait_route(present, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        out = T.sh('ip', 'route', 'show', '10.50.0.0/24', ns=NS_DP).stdout
        if bool(out.strip()) == present:
            return out.strip()
        time.sleep(0.1)
    return None


def main(tmp):
    if not shutil.which('bird') or not shutil.which('birdc'):
        T.skip('SKIP: bird2 is not installed (tools/deps.sh)')
    for ns in (NS_DP, NS_T, NS_B):
        T.netns_add(ns, ipv6=False)
    T.veth(NS_DP, 'dp0', 't0', peer_ns=NS_T, mac=MAC['dp0'], peer_mac=MAC['t0'])
    T.veth(NS_DP, 'dp1', 'b1', peer_ns=NS_B, mac=MAC['dp1'], peer_mac=MAC['b1'])
    T.sh('ip', 'addr', 'add', '10.1.0.254/24', 'dev', 'dp0', ns=NS_DP)
    T.sh('ip', 'addr', 'add', '10.2.0.254/24', 'dev', 'dp1', ns=NS_DP)
    T.sh('ip', 'addr', 'add', '10.2.0.1/24', 'dev', 'b1', ns=NS_B)
    T.sh('ip', 'link', 'set', 'lo', 'up', ns=NS_B)
    T.sh('ip', 'link', 'set', 'lo', 'up', ns=NS_DP)
    sock = os.path.join(tmp, 'nl.sock')
    prefix = T.netns_name('rb')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     lcores=('--lcores', '0@0,1@1'))
    d = T.Daemon(BUILD, eal, ['--socket', sock, '--route'], prefix,
                 os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=90)
    birds = []
    try:
        d.wait_started(sock=sock)
        # after the ports are up (their setup flushes neighbours): the
        # tester's address for the ICMP errors
        T.sh('ip', 'neigh', 'replace', '10.1.0.1', 'lladdr', MAC['t0'], 'dev', 'dp0', 'nud',
             'permanent', ns=NS_DP)
        birds.append(Bird(NS_B, tmp, 'peer', BIRD_B))
        birds.append(Bird(NS_DP, tmp, 'dut', BIRD_DP))
        rt = wait_route(True)
        check(rt is not None and 'via 10.2.0.1 dev dp1' in rt and 'bird' in rt,
              'bird2 installs the BGP route in nftdp\'s netns (%s)' % rt)
        tx = T.packet_socket(NS_T, 't0')
        rx = T.packet_socket(NS_B, 'b1')
        f = None
        for tag in range(1, 60):  # the neighbour mirror follows the session's ARP
            tx.send(probe('10.50.0.1', tag))
            f = recv_tag(rx, tag, 0.1)
            if f:
                break
        check(f is not None, 'a probe to 10.50.0.1 leaves dp1 towards the BGP peer')
        if f:
            check(f[0:6] == T.mac_bytes(MAC['b1']),
                  'destination MAC: the peer\'s (%s)' % f[0:6].hex(':'))
            check(f[6:12] == T.mac_bytes(MAC['dp1']), 'source MAC: dp1 (%s)' % f[6:12].hex(':'))
            check(f[22] == 63, 'TTL decremented (%d)' % f[22])
        out = birds[0].birdc('disable', 'st')
        check('disabled' in out, 'birdc disable st (%s)' % out.strip()[-80:])
        check(wait_route(False) is not None, 'the withdrawal removes the kernel route')
        time.sleep(0.1)
        tx.send(probe('10.50.0.1', 100))
        icmp = recv_icmp(tx, 100, 0.5)
        check(icmp is not None and icmp[34] == 3 and icmp[35] == 0,
              'withdrawn: ICMP net unreachable back to the sender (%s)' %
              (icmp[34:36].hex() if icmp else None))
        check(recv_tag(rx, 100, 0.1) is None, 'withdrawn: nothing forwarded to the peer')
    finally:
        for b in birds:
            b.stop()
        rc = d.stop(wait=20)
        if checks.failures:
            print(d.log()[-2000:])
            for b in birds:
                print(b.text()[-1000:])
    check(rc == 0, 'nftdp exits 0 on SIGTERM')


T.run_root_test('route-bird', checks, main, lambda: T.netns_del(NS_DP, NS_T, NS_B))
