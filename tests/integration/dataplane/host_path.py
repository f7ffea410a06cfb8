#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The exception path, live (docs/dataplane.md, "The exception path").

usage: host_path.py BUILD_DIR

nftdp runs with --host-ports on two net_af_packet ports (dp0, dp1, --wire
0:1) in a scratch netns; its host interfaces h0, h1 are tap devices there,
h0 with 10.0.0.1/24. The kernel's own stack never sees dp0/dp1's frames (a
kernel netdev ingress chain drops them after AF_PACKET took its copy), so
whatever the box answers went through nftdp. A tester in a second netns
(t0 10.0.0.2/24, t1) checks:

- ARP: the tester resolves 10.0.0.1 (the host answers through nftdp);
- ping 10.0.0.1 is answered; so is ping fd00::1 after neighbour
  discovery (solicited-node multicast to the host, its advertisement out);
- a TCP connection to a listener on 10.0.0.1 echoes its data, with
  conntrack at input and output: `ct state` counters as the kernel's;
- `redirect to :8080` at prerouting turns a connection to 10.9.0.7:80
  into one to the host's 10.0.0.1:8080 (h0's primary address), the
  replies de-NATed (HP_IPTABLES=1: the same redirect as iptables'
  `-j REDIRECT --to-ports 8080`, loaded with iptables-nft-restore);
- arp-family input and output chains count the tester's requests and
  the host's replies;
- an input-chain rule drops and counts UDP to port 9999 (the listener gets
  nothing); an output-chain rule drops the host's UDP to port 7777;
- a flood at the box over --host-rate is limited (stats host.limited) while
  frames to a forwarded address all reach t1.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS_DP, NS_T = T.netns_name('hp'), T.netns_name('hp', 't')
checks = T.Checks()
check = checks.check
N_DROP, N_OUT, N_FLOOD, N_FWD, RATE = 5, 4, 3000, 200, 500
# HP_NO_CACHE=1: the same with --flow-cache 0
NO_CACHE = os.environ.get('HP_NO_CACHE') is not None
# HP_IPTABLES=1: the redirect from iptables-nft-restore (the REDIRECT target)
IPTABLES = os.environ.get('HP_IPTABLES') is not None

RULES = '''
table arp a {
	chain in {
		type filter hook input priority 0; policy accept;
		arp operation request counter
		arp operation reply counter
	}
	chain out {
		type filter hook output priority 0; policy accept;
		arp operation request counter
		arp operation reply counter
	}
}
%s
table inet f {
	chain in {
		type filter hook input priority 0; policy accept;
		meta nfproto ipv4 ct state established counter accept
		meta nfproto ipv4 ct state new counter
		udp dport 9999 counter drop
		icmp type echo-request counter accept
		icmpv6 type echo-request counter accept
		icmpv6 type nd-neighbor-solicit counter accept
	}
	chain out {
		type filter hook output priority 0; policy accept;
		udp dport 7777 counter drop
		tcp sport 8080 ct state established counter accept
	}
}
''' % ('' if IPTABLES else '''
table ip nat {
	chain pre {
		type nat hook prerouting priority -100; policy accept;
		ip daddr 10.9.0.7 tcp dport 80 redirect to :8080
	}
}''')

# the same redirect as an iptables-restore file
IPT_RULES = '''*nat
:PREROUTING ACCEPT [0:0]
-A PREROUTING -d 10.9.0.7/32 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080
COMMIT
'''

GUARD = '''
table netdev guard {
	chain a { type filter hook ingress device dp0 priority 0; policy drop; }
	chain b { type filter hook ingress device dp1 priority 0; policy drop; }
}
'''

# in NS_DP: the host's side (runs beside nftdp, over h0)
HOST = r'''
import socket, sys, time, json
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('10.0.0.1', 8080)); srv.listen(4); srv.settimeout(15)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('10.0.0.1', 9999)); u.settimeout(0.2)
print('ready', flush=True)
peers = []
for k in range(2):  # the direct connection, then the redirected one
    c, a = srv.accept(); c.settimeout(5)
    peers.append(a[0])
    data = b''
    while not data.endswith(b'END'):
        b = c.recv(4096)
        if not b:
            break
        data += b
    c.sendall(data.upper() + (' %%s:%%d' %% c.getsockname()).encode()); c.close()
got9999 = 0
try:
    while True:
        u.recv(100); got9999 += 1
except socket.timeout:
    pass
o = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(%d):
    o.sendto(b'x', ('10.0.0.2', 7777))
print(json.dumps({'echoed': len(data), 'got9999': got9999, 'peers': peers}), flush=True)
''' % N_OUT

# in NS_T: the other end
TESTER = r'''
import json, socket, subprocess, sys, time
res = {}
def csum(b):
    s = sum(int.from_bytes(b[i:i + 2], 'big') for i in range(0, len(b), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
ic = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); ic.settimeout(2)
res['ping'] = 0
for seq in range(3):
    m = bytes([8, 0, 0, 0, 0x12, 0x34, 0, seq]) + b'exc'
    m = m[:2] + csum(m + b'\0').to_bytes(2, 'big') + m[4:]
    ic.sendto(m, ('10.0.0.1', 0))
    try:
        while True:
            r, a = ic.recvfrom(200)
            if r[20] == 0 and r[27] == seq:
                res['ping'] += 1
                break
    except socket.timeout:
        pass
n = open('/proc/net/arp').read()
res['arp'] = '10.0.0.1' in n and '00:00:00:00:00:00' not in n.split('10.0.0.1')[1].split('\n')[0]
c = socket.create_connection(('10.0.0.1', 8080), timeout=5)
c.sendall(b'hello exception path END')
c.settimeout(5)
r = b''
while True:
    b = c.recv(4096)
    if not b:
        break
    r += b
res['tcp'] = r.decode()
c = socket.create_connection(('10.9.0.7', 80), timeout=5)
res['redir_peer'] = '%%s:%%d' %% c.getpeername()
c.sendall(b'redirected END')
c.settimeout(5)
r = b''
while True:
    b = c.recv(4096)
    if not b:
        break
    r += b
res['redir'] = r.decode()
# IPv6: neighbour discovery through nftdp to the host, then echo
ic6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6); ic6.settimeout(2)
res['ping6'] = 0
for seq in range(3):
    ic6.sendto(bytes([128, 0, 0, 0, 0x43, 0x21, 0, seq]) + b'exc6', ('fd00::1', 0))
    try:
        while True:
            r, a = ic6.recvfrom(200)
            if r[0] == 129 and r[7] == seq:
                res['ping6'] += 1
                break
    except socket.timeout:
        pass
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
o = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); o.bind(('10.0.0.2', 7777)); o.settimeout(2)
for i in range(%d):
    u.sendto(b'd', ('10.0.0.1', 9999))
got = 0
try:
    while True:
        o.recv(10); got += 1
except socket.timeout:
    pass
res['got7777'] = got
print(json.dumps(res), flush=True)
''' % N_DROP

# in NS_T, with scapy: the flood at the box and forwarded frames beside it
FLOOD = r'''
import json, time
from scapy.all import Ether, IP, UDP, Raw, AsyncSniffer, sendp, conf, get_if_hwaddr
conf.verb = 0
mac = open('/tmp/hp_mac').read().strip() if False else None
import sys
dst = sys.argv[1]
got = []
sn = AsyncSniffer(iface='t1', store=False, prn=lambda p: got.append(p) if UDP in p and p[UDP].dport == 4444 else None)
sn.start(); time.sleep(0.5)
src = get_if_hwaddr('t0')
flood = Ether(src=src, dst=dst) / IP(src='10.0.0.2', dst='10.0.0.1') / UDP(sport=1, dport=5555) / Raw(b'f' * 20)
fwd = [Ether(src=src, dst=dst) / IP(src='10.0.0.2', dst='10.9.0.5') / UDP(sport=2, dport=4444) / Raw(b'%%04d' %% i) for i in range(%d)]
frames = []
per = %d // len(fwd)
for f in fwd:
    frames += [flood] * per + [f]
sendp(frames, iface='t0')
time.sleep(1)
sn.stop()
print(json.dumps({'fwd': len(got)}), flush=True)
''' % (N_FWD, N_FLOOD)


def cleanup():
    T.netns_del(NS_DP, NS_T)


def ns_run(ns, code, *args, timeout=40):
    return subprocess.run(['ip', 'netns', 'exec', ns, '/usr/bin/python3', '-c', code] + list(args),
                          timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def main(tmp):
    for ns in (NS_DP, NS_T):
        T.netns_add(ns, ipv6=False)
    for dp, t in (('dp0', 't0'), ('dp1', 't1')):
        T.veth(NS_DP, dp, t, peer_ns=NS_T)
    T.sh('ip', 'addr', 'add', '10.0.0.2/24', 'dev', 't0', ns=NS_T)
    # a veth's checksum offload leaves AF_PACKET partial checksums, which
    # conntrack (and the host) would find bad: full checksums on the wire
    T.sh('ethtool', '-K', 't0', 'tx', 'off', ns=NS_T)
    # IPv6 on the test link only (the namespaces have it off elsewhere)
    T.sh('sysctl', '-qw', 'net.ipv6.conf.t0.disable_ipv6=0', ns=NS_T)
    T.sh('ip', 'addr', 'add', 'fd00::2/64', 'dev', 't0', 'nodad', ns=NS_T)
    T.sh('ip', 'route', 'add', '10.9.0.0/24', 'via', '10.0.0.1', ns=NS_T)
    T.sh('nft', '-f', '-', input=GUARD, ns=NS_DP)
    rules, sj, lj = (os.path.join(tmp, x) for x in ('r.nft', 's.json', 'l.json'))
    with open(rules, 'w') as f:
        f.write(RULES)
    ipt = []
    if IPTABLES:
        ipt = ['--iptables-restore', os.path.join(tmp, 'r.v4')]
        with open(ipt[1], 'w') as f:
            f.write(IPT_RULES)
    prefix = T.netns_name('hp')
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'],
                     mem=1024)
    args = ['--socket', os.path.join(tmp, 'nl.sock'), '--wire', '0:1', '--ruleset', rules,
            '--ifname', '0=dp0', '--ifname', '1=dp1', '--host-ports', '--host-ifname', '0=h0',
            '--host-ifname', '1=h1', '--host-rate', str(RATE), '--stats-json', sj,
            '--listing-json', lj] + (['--flow-cache', '0'] if NO_CACHE else []) + ipt
    d = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, 'nftdp.log'), ns=NS_DP, limit=80)
    p = d.proc
    res, fwd = {}, None
    try:
        d.wait_started(timeout=30)
        T.sh('ip', 'addr', 'add', '10.0.0.1/24', 'dev', 'h0', ns=NS_DP)
        T.sh('ip', 'link', 'set', 'h0', 'up', ns=NS_DP)
        T.sh('sysctl', '-qw', 'net.ipv6.conf.h0.disable_ipv6=0', ns=NS_DP)
        T.sh('ip', 'addr', 'add', 'fd00::1/64', 'dev', 'h0', 'nodad', ns=NS_DP)
        time.sleep(0.5)  # the route mirror follows the new address
        host = subprocess.Popen(['ip', 'netns', 'exec', NS_DP, '/usr/bin/python3', '-c', HOST],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            host.stdout.readline()
            t = ns_run(NS_T, TESTER)
            hout = host.communicate(timeout=20)[0]
        finally:
            if host.poll() is None:
                host.kill()
                host.wait()
        out = t.stdout.strip().splitlines()
        check(t.returncode == 0, 'tester ran (%s)' % (out[-1] if out else ''))
        res = json.loads(out[-1]) if t.returncode == 0 else {}
        try:
            h = json.loads(hout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            h = {}
            print('host side:', hout[-1500:])
        check(res.get('arp'), 'ARP: the tester resolved 10.0.0.1 (answered by the host)')
        check(res.get('ping') == 3, 'ping 10.0.0.1: 3 echo replies (got %s)' % res.get('ping'))
        check(res.get('ping6') == 3, 'ping fd00::1 after neighbour discovery through nftdp: '
              '3 echo replies (got %s)' % res.get('ping6'))
        check(res.get('tcp') == 'HELLO EXCEPTION PATH END 10.0.0.1:8080',
              'TCP to a listener on the host interface echoes (%r)' % res.get('tcp'))
        check(res.get('redir') == 'REDIRECTED END 10.0.0.1:8080' and
              res.get('redir_peer') == '10.9.0.7:80' and h.get('peers') == ['10.0.0.2'] * 2,
              'redirect: a connection to 10.9.0.7:80 reaches the host\'s 10.0.0.1:8080 '
              '(the primary address of h0) and its replies come from 10.9.0.7:80 (%r, %r, %r)'
              % (res.get('redir'), res.get('redir_peer'), h.get('peers')))
        check(h.get('got9999') == 0, 'the input chain dropped UDP to 9999 (host got %s)' %
              h.get('got9999'))
        check(res.get('got7777') == 0, 'the output chain dropped the host\'s UDP to 7777 '
              '(tester got %s)' % res.get('got7777'))
        mac = T.sh('cat', '/sys/class/net/dp0/address', ns=NS_DP).stdout.strip()
        f = ns_run(NS_T, FLOOD, mac, timeout=60)
        fo = f.stdout.strip().splitlines()
        check(f.returncode == 0, 'flood ran (%s)' % (fo[-1] if fo else ''))
        fl = json.loads(fo[-1]) if f.returncode == 0 else {}
        fwd = fl.get('fwd')
    finally:
        d.stop(wait=20)
    check(p.returncode == 0, 'nftdp exits 0 on SIGTERM')
    if p.returncode != 0 or not res or os.environ.get('HP_DEBUG'):
        print(d.log()[-3000:])
        if os.path.exists(sj):
            print(open(sj).read()[:2500])
        if not res:
            return
    s = json.load(open(sj))
    # frames the af_packet ring of dp0 lost before nftdp read them (a busy
    # machine: the tester and nftdp share its CPUs) are no loss of nftdp's
    missed = s['ports'][0]['rx_missed']
    check(fwd is not None and N_FWD - missed <= fwd <= N_FWD,
          'forwarding went on through the flood: %s of %d frames reached t1 (%d lost '
          'before nftdp)' % (fwd, N_FWD, missed))
    ctr, arp = {}, {}
    for o in json.load(open(lj))['nftables']:
        if 'rule' in o and o['rule']['table'] == 'a':
            r = o['rule']
            arp.setdefault(r['chain'], []).extend(
                e['counter']['packets'] for e in r['expr'] if 'counter' in e)
        if 'rule' in o and o['rule']['table'] == 'f':
            r = o['rule']
            ctr.setdefault(r['chain'], []).extend(
                e['counter']['packets'] for e in r['expr'] if 'counter' in e)
    print('counters', ctr, 'host', s.get('host'), 'drops', s['drops'].get('host_limit'))
    # what the kernel counts for the same traffic: 3 echo requests (new), the
    # TCP client's packets after the SYN established, N_DROP UDP new
    cin = ctr.get('in', [])
    # the kernel's counts for this traffic: the first echo request is new,
    # the later ones established (the host answered); the SYN is new; each
    # UDP datagram to 9999 is dropped before confirm, so each is new; the
    # flood's connection sees no reply, so each of its packets is new
    # (IP_CT_NEW until a reply), as the conntrack stats' one insert says
    n_new = 1 + 2 + N_DROP + N_FLOOD
    check(len(cin) == 6 and n_new - missed <= cin[1] <= n_new and cin[2] == N_DROP and cin[3] == 1 and
          cin[4] == 3 and cin[5] >= 1,
          'input counters: ct state new %d, udp 9999 dropped %d, echo requests 1, ICMPv6 '
          'echo requests 3, neighbour solicitations (got %s)' %
          (n_new, N_DROP, cin))
    check(len(cin) == 6 and cin[0] >= 2 + 6,
          'ct state established at input: echo requests, the TCP client (%s)' % cin)
    ctr = {k: v for k, v in ctr.items()}
    cout = ctr.get('out', [])
    check(len(cout) == 2 and cout[0] == N_OUT and cout[1] >= 2,
          'output counters: the host\'s udp 7777 dropped %d, TCP replies established (got %s)'
          % (N_OUT, cout))
    # the tester's request for 10.0.0.1 and the host's reply ran the arp
    # family's input and output chains (how many more depends on timers)
    check(len(arp.get('in', [])) == 2 and arp['in'][0] >= 1 and
          len(arp.get('out', [])) == 2 and arp['out'][1] >= 1,
          'arp chains: requests in, replies out (in %s, out %s)' % (arp.get('in'),
                                                                    arp.get('out')))
    hs = s.get('host', {})
    check(hs.get('limited', 0) > 0 and hs.get('to_host', 0) < N_FLOOD,
          'the flood was rate-limited at %d/s: %s' % (RATE, hs))


T.run_root_test('host-path', checks, main, cleanup)
