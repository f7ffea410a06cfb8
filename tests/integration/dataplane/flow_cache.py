#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The per-flow verdict cache changes no result (docs/dataplane.md,
"Per-flow verdict cache").

usage: flow_cache.py BUILD_DIR

A capture of 200 packets in 10 flows (TCP and UDP, IPv4 and IPv6, both
directions, interleaved; fixed seed) is replayed offline over two wired
ports (one capture per port, merged by capture time) through a ruleset
with rule counters, a named counter, an anonymous set, a verdict map, a
jump and drop rules, at prerouting, forward and postrouting: with the
default cache, with --flow-cache 0, and with --flow-cache-verify (every
hit also runs the chains). The listings with their counters (--listing),
each port's tx count and frames, and the hook verdicts must be identical,
and as the model says (which flows are dropped); with the cache on
flow_cache.hits must be > 0 (each worker's summing to the total), with it
off 0, and verify mode must count no mismatch.

Then the same flows as real TCP connections (sequence numbers that
conntrack's window tracking accepts) through a stateful ruleset with
conntrack first (the tracked pass, whose established packets are judged
by the result their connection carries: docs/dataplane.md): with the
cache, without it and in verify mode the listings, each port's frames
and the hook verdicts must be identical, and with the cache
flow_cache.carried must be > 0. Then again with NAT (source and
destination, IPv4 and IPv6, TCP and UDP): the established packets of
NATed connections take the established pass too (flow_cache.carried >
0), the three runs agree, and every packet of a NATed flow leaves
exactly as the model rewrites it (addresses, ports, checksums). Last,
one-way UDP flows (new until the end) through rules that read ip ttl,
ip6 hoplimit and ip frag-off before ct state new accept, some packets
with ttl 1: their results are carried with those bytes as the guard
(flow_cache.carried >= 100), the three runs agree, and exactly the
ttl 1 packets are dropped. Exit 0 when all hold, 1 otherwise, 77 when
not root.
"""
import json
import os
import random
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
checks = T.Checks()
check = checks.check

# At most five counters on any path through one hook: what a cache entry
# holds (fc_spec: rule, named and base chain counters).
RULESET = '''flush ruleset
table inet filter {
	counter dns { }
	set blocked4 {
		type ipv4_addr
		elements = { 10.0.0.66 }
	}
	chain prerouting {
		type filter hook prerouting priority -10; policy accept;
		meta l4proto udp counter
		ip6 nexthdr tcp counter
	}
	chain forward {
		type filter hook forward priority 0; policy accept;
		counter
		tcp dport 22 counter drop
		tcp sport 22 counter drop
		ip saddr @blocked4 counter drop
		udp dport 53 counter name "dns"
		meta l4proto udp meta length > 200 counter
		tcp flags & (syn | ack) == syn counter
		tcp dport { 80, 443 } counter
		jump more
	}
	chain more {
		ip6 daddr 2001:db8:1::/64 counter
		meta l4proto vmap { udp : jump udp_in }
		counter
	}
	chain udp_in {
		udp sport 42001 counter
	}
}
table ip t4 {
	chain postrouting {
		type filter hook postrouting priority 0; policy accept;
		ip daddr 192.0.2.10 counter
	}
}
'''

# conntrack first, one base chain a hook: established packets carry
# their connection's result (the first rule reads only ct state); the
# prerouting chain runs after conntrack's step, in a window of the hook
# that holds all of it (cached like a whole hook: else nothing carries)
TRACKED = '''flush ruleset
table inet filter {
	counter est { }
	set blocked4 {
		type ipv4_addr
		elements = { 10.0.0.66 }
	}
	chain prerouting {
		type filter hook prerouting priority filter; policy accept;
		ip saddr 192.168.0.0/16 counter drop
		tcp dport { 23, 25 } counter drop
	}
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related counter name "est" accept
		ct state invalid counter drop
		tcp dport 22 counter drop
		ip saddr @blocked4 counter drop
		meta l4proto udp meta length > 200 counter
		ct state new counter accept
	}
	chain postrouting {
		type filter hook postrouting priority 0; policy accept;
		ct direction reply counter
		ip6 nexthdr tcp counter
	}
}
'''

# TRACKED with NAT: the flows of NAT_FLOWS translated (nat-type chains at
# dstnat and srcnat, the filter chains between them), so that the
# established packets of NATed connections take the established pass
NAT_CHAINS = '''
table ip nat4 {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr 192.0.2.10 tcp dport 443 dnat to 192.0.2.20:8443
		ip daddr 192.0.2.10 tcp dport 8080 dnat to 192.0.2.30:80
		ip saddr 10.0.0.7 udp dport 53 dnat to 192.0.2.54
	}
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		ip saddr { 10.0.0.1, 10.0.0.4, 10.0.0.8 } snat to 198.51.100.1
	}
}
table ip6 nat6 {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		ip6 daddr 2001:db8:1::123 udp dport 123 dnat to [2001:db8:1::124]:1123
	}
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		ip6 saddr 2001:db8::1 snat to 2001:db8:ff::1
	}
}
'''
NAT_TRACKED = TRACKED + NAT_CHAINS

# flows() index: (client, sport, server, dport) as the server sees them
NAT_FLOWS = {
    0: ('198.51.100.1', 40000, '192.0.2.10', 80),     # TCP, source NAT
    1: ('10.0.0.2', 40001, '192.0.2.20', 8443),       # TCP, destination NAT
    3: ('198.51.100.1', 40003, '192.0.2.30', 80),     # TCP, both
    4: ('2001:db8:ff::1', 41000, '2001:db8:1::10', 80),  # TCP6, source NAT
    6: ('10.0.0.7', 42000, '192.0.2.54', 53),         # UDP, destination NAT
    7: ('198.51.100.1', 42000, '192.0.2.53', 53),     # UDP, source NAT
    9: ('2001:db8::9', 43000, '2001:db8:1::124', 1123),  # UDP6, destination NAT
}

MAC = {0: '02:00:00:00:00:01', 1: '02:00:00:00:00:02'}


def flows():
    """(proto, family, client, server, sport, dport, dropped) of each flow;
    the client sends on port 0, the server answers on port 1. dropped: 2
    both ways (port 22), 1 the client's packets (a blocked source)."""
    f = []
    for i, dport in enumerate((80, 443, 22, 8080)):
        f.append(('tcp', 4, '10.0.0.%d' % (i + 1), '192.0.2.10', 40000 + i, dport,
                  2 if dport == 22 else 0))
    for i, dport in enumerate((80, 22)):
        f.append(('tcp', 6, '2001:db8::%d' % (i + 1), '2001:db8:1::10', 41000 + i, dport,
                  2 if dport == 22 else 0))
    for src in ('10.0.0.7', '10.0.0.8', '10.0.0.66'):
        f.append(('udp', 4, src, '192.0.2.53', 42000, 53, 1 if src == '10.0.0.66' else 0))
    f.append(('udp', 6, '2001:db8::9', '2001:db8:1::123', 43000, 123, 0))
    return f


def tracked_capture(nat=None):
    """The flows as conntrack accepts them: TCP with a handshake,
    sequence and acknowledgement numbers that follow the data both ways,
    FIN at the end; 20 packets a flow, interleaved (fixed seed).
    nat: {flow index: (client, sport, server, dport) as NAT makes them}:
    the server answers those, and each packet leaves as NAT rewrites it.
    Returns [(port, frame, frame as it leaves)] in capture order."""
    from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw
    rnd = random.Random(17)
    per_flow = []
    for n, (proto, fam, cli, srv, sport, dport, _) in enumerate(flows()):
        pkts = []
        nxt = {0: 1000, 1: 5000}  # next sequence number of each side
        # the ends as the client sends them and as the server sees them
        ncli, nsport, nsrv, ndport = (nat or {}).get(n, (cli, sport, srv, dport))
        for k in range(20):
            reply = k % 2 == 1
            port = 1 if reply else 0
            ends = []
            for c, cp, v, vp in ((cli, sport, srv, dport), (ncli, nsport, nsrv, ndport)):
                ends.append((v, c, vp, cp) if reply else (c, v, cp, vp))
            if proto == 'tcp':
                me, peer = (1, 0) if reply else (0, 1)
                flags = 'S' if k == 0 else 'SA' if k == 1 else 'FA' if k >= 18 else \
                    'A' if k == 2 else 'PA'
                data = b'' if k < 3 or k >= 18 else b'd' * rnd.choice((10, 300, 1200))
                ack = 0 if k == 0 else nxt[peer]
                seq = nxt[me]
                nxt[me] += len(data) + (1 if 'S' in flags or 'F' in flags else 0)
            else:
                data = b'q' * rnd.choice((20, 250))
            frames = []
            for src, dst, sp, dp in ends:
                l3 = IP(src=src, dst=dst) if fam == 4 else IPv6(src=src, dst=dst)
                if proto == 'tcp':
                    l4 = TCP(sport=sp, dport=dp, flags=flags, seq=seq, ack=ack, window=65535)
                else:
                    l4 = UDP(sport=sp, dport=dp)
                p = Ether(src=MAC[port], dst=MAC[1 - port]) / l3 / l4
                if data:
                    p = p / Raw(data)
                frames.append(bytes(p))
            # the client's packets leave translated, the server's back
            inner, outer = frames
            pkts.append((port, outer, inner) if reply else (port, inner, outer))
        per_flow.append(pkts)
    out = []
    while any(per_flow):
        f = rnd.choice([x for x in per_flow if x])
        out.append(f.pop(0))
    return out


def write_ports(tmp, pkts):
    """one capture per port, stamped in the capture's order (merged by time)"""
    for port in (0, 1):
        idx = [i for i, p in enumerate(pkts) if p[0] == port]
        T.write_pcap(os.path.join(tmp, 'in%d.pcap' % port), [pkts[i][1] for i in idx],
                     stamp=lambda k, idx=idx: (1700000000 + idx[k] // 1000,
                                               (idx[k] % 1000) * 1000))


def tracked(tmp):
    """The stateful ruleset: the carried results change nothing."""
    with open(os.path.join(tmp, 'rules.nft'), 'w') as f:
        f.write(TRACKED)
    write_ports(tmp, tracked_capture())
    on = run(tmp, 't-cache', [])
    off = run(tmp, 't-nocache', ['--flow-cache', '0'])
    ver = run(tmp, 't-verify', ['--flow-cache-verify'])
    if on is None or off is None or ver is None:
        return
    fc_on = on['stats'].get('flow_cache', {})
    print('   tracked, cache on: %s' % fc_on)
    check(on['listing'] == off['listing'] == ver['listing'],
          'tracked: listings with counters are identical')
    if on['listing'] != off['listing']:
        import difflib
        print(''.join(difflib.unified_diff(off['listing'].splitlines(True),
                                           on['listing'].splitlines(True),
                                           'nocache', 'cache')))
    check(on['tx'] == off['tx'] == ver['tx'], 'tracked: each port sends the same frames')
    check(on['stats']['hooks'] == off['stats']['hooks'] == ver['stats']['hooks'],
          'tracked: hook verdicts are identical')
    est = re.search(r'counter est \{\s*packets (\d+)', on['listing'])
    check(est is not None and int(est.group(1)) >= 100,
          'tracked: established packets counted (%s)' % (est.group(1) if est else None))
    check(fc_on.get('carried', 0) > 0,
          'tracked: connections carried results (%s packets)' % fc_on.get('carried'))
    check(ver['stats'].get('flow_cache', {}).get('carried', -1) == 0,
          'tracked: verify mode carries nothing')


def nat_tracked(tmp):
    """The stateful ruleset with NAT: established packets of NATed
    connections take the established pass (the binding applied there),
    and leave exactly as the pipeline and the model rewrite them."""
    with open(os.path.join(tmp, 'rules.nft'), 'w') as f:
        f.write(NAT_TRACKED)
    pkts = tracked_capture(NAT_FLOWS)
    write_ports(tmp, pkts)
    on = run(tmp, 'n-cache', [])
    off = run(tmp, 'n-nocache', ['--flow-cache', '0'])
    ver = run(tmp, 'n-verify', ['--flow-cache-verify'])
    if on is None or off is None or ver is None:
        return
    fc_on = on['stats'].get('flow_cache', {})
    print('   NAT, cache on: %s' % fc_on)
    check(on['listing'] == off['listing'] == ver['listing'],
          'NAT: listings with counters are identical')
    check(on['tx'] == off['tx'] == ver['tx'], 'NAT: each port sends the same frames')
    check(on['stats']['hooks'] == off['stats']['hooks'] == ver['stats']['hooks'],
          'NAT: hook verdicts are identical')
    # the model: each port sends, in order, packets of those the other
    # port got, as NAT rewrites them, every one of a NATed flow among
    # them; exact bytes: scapy computed the checksums afresh, nftdp
    # updates them
    n_nat = 0
    for p in (0, 1):
        model = iter([out for port, _, out in pkts if port == 1 - p])
        sent = on['tx'][p]
        check(all(any(f == m for m in model) for f in sent),
              'NAT: port %d sends the model\'s frames, in order (%d)' % (p, len(sent)))
        nat_out = [out for port, frame, out in pkts if port == 1 - p and frame != out]
        n_nat += len(nat_out)
        check([f for f in sent if f in nat_out] == nat_out,
              'NAT: port %d sends each NATed packet translated, checksums exact (%d)'
              % (p, len(nat_out)))
    check(n_nat >= 100, 'NAT: %d of the frames are translated' % n_nat)
    check(fc_on.get('carried', 0) > 0,
          'NAT: connections carried results, through the established pass (%s packets)'
          % fc_on.get('carried'))


# TRACKED for connections that stay NEW (UDP one way): their runs pass
# rules that read header bytes the connection does not fix, so their
# carried results keep those bytes as a guard
GUARDED = '''flush ruleset
table inet filter {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		ct state invalid counter drop
		ip ttl 1 counter drop
		ip6 hoplimit 1 counter drop
		ip frag-off & 0x1fff != 0 counter drop
		ct state new counter accept
	}
}
'''


def guarded_capture():
    """8 one-way UDP flows (IPv4 and IPv6), 40 datagrams each, interleaved
    (fixed seed); one in ten with ttl / hop limit 1 (dropped), one in ten
    with 63, DF set on some flows and on one packet of others. Returns
    [(port, frame, dropped)]."""
    from scapy.all import IP, UDP, Ether, IPv6, Raw
    rnd = random.Random(23)
    per_flow = []
    for n in range(8):
        pkts = []
        for k in range(40):
            ttl = 1 if k % 10 == 9 else 63 if k % 10 == 5 else 64
            if n % 2:
                l3 = IPv6(src='2001:db8::%d' % (n + 1), dst='2001:db8:1::53', hlim=ttl)
            else:
                l3 = IP(src='10.0.1.%d' % (n + 1), dst='192.0.2.53', ttl=ttl,
                        flags='DF' if n % 4 == 0 or k == 20 else 0)
            p = Ether(src=MAC[0], dst=MAC[1]) / l3 / UDP(sport=44000 + n, dport=53) / \
                Raw(b'g' * rnd.choice((20, 100)))
            pkts.append((0, bytes(p), ttl == 1))
        per_flow.append(pkts)
    out = []
    while any(per_flow):
        f = rnd.choice([x for x in per_flow if x])
        out.append(f.pop(0))
    return out


def guarded(tmp):
    """Connections that stay NEW: results carried with a guard (the
    packet's ttl, hop limit and fragment bits) change nothing; a packet
    with other bytes there is judged by the chains."""
    with open(os.path.join(tmp, 'rules.nft'), 'w') as f:
        f.write(GUARDED)
    pkts = guarded_capture()
    write_ports(tmp, pkts)
    on = run(tmp, 'g-cache', [])
    off = run(tmp, 'g-nocache', ['--flow-cache', '0'])
    ver = run(tmp, 'g-verify', ['--flow-cache-verify'])
    if on is None or off is None or ver is None:
        return
    fc_on = on['stats'].get('flow_cache', {})
    print('   guarded, cache on: %s' % fc_on)
    check(on['listing'] == off['listing'] == ver['listing'],
          'guarded: listings with counters are identical')
    want = [f for _, f, dropped in pkts if not dropped]
    check(on['tx'][1] == off['tx'][1] == ver['tx'][1] == want,
          'guarded: port 1 sends the model\'s frames, in order (%d of %d)'
          % (len(on['tx'][1]), len(want)))
    check(on['stats']['hooks'] == off['stats']['hooks'] == ver['stats']['hooks'],
          'guarded: hook verdicts are identical')
    check(fc_on.get('carried', 0) >= 100,
          'guarded: connections carried results (%s packets)' % fc_on.get('carried'))


def capture():
    """20 packets per flow, flows interleaved at random (fixed seed).
    Returns [(port, frame, dropped by the ruleset)] in capture order."""
    from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw
    rnd = random.Random(13)
    per_flow = []
    for proto, fam, cli, srv, sport, dport, dropped in flows():
        pkts = []
        for k in range(20):
            reply = k % 2 == 1
            port = 1 if reply else 0
            src, dst = (srv, cli) if reply else (cli, srv)
            # a UDP client takes two source ports by turns: packets that
            # differ only there, which only the verdict map's chain reads
            cport = sport + (k // 2) % 2 if proto == 'udp' else sport
            sp, dp = (dport, cport) if reply else (cport, dport)
            l3 = IP(src=src, dst=dst) if fam == 4 else IPv6(src=src, dst=dst)
            if proto == 'tcp':
                flags = 'S' if k == 0 else 'SA' if k == 1 else 'FA' if k >= 18 else \
                    'A' if k == 2 else 'PA'
                seq = 1000 + 100 * k
                l4 = TCP(sport=sp, dport=dp, flags=flags, seq=seq, ack=0 if k == 0 else seq)
                data = b'' if k < 3 or k >= 18 else b'd' * rnd.choice((10, 300, 1200))
            else:
                l4 = UDP(sport=sp, dport=dp)
                data = b'q' * rnd.choice((20, 250))
            p = Ether(src=MAC[port], dst=MAC[1 - port]) / l3 / l4
            if data:
                p = p / Raw(data)
            pkts.append((port, bytes(p), dropped == 2 or (dropped == 1 and not reply)))
        per_flow.append(pkts)
    out = []
    while any(per_flow):
        f = rnd.choice([x for x in per_flow if x])
        out.append(f.pop(0))
    return out


def run(tmp, tag, extra):
    prefix = 'nftdp-fc-%d-%s' % (os.getpid(), tag)
    out = [os.path.join(tmp, '%s-out%d.pcap' % (tag, p)) for p in (0, 1)]
    listing = os.path.join(tmp, tag + '.nft')
    sj = os.path.join(tmp, tag + '.json')
    eal = T.eal_args(prefix, ['net_pcap%d,rx_pcap=%s,tx_pcap=%s' %
                              (p, os.path.join(tmp, 'in%d.pcap' % p), out[p]) for p in (0, 1)],
                     ('-l', '0-1'))
    r = T.run_offline(BUILD, eal, ['--socket', os.path.join(tmp, tag + '.sock'),
                                   '--wire', '0:1', '--ruleset', os.path.join(tmp, 'rules.nft'),
                                   '--exit-on-idle', '300', '--listing', listing,
                                   '--stats-json', sj] + extra, prefix, timeout=60)
    ok = r.returncode == 0
    check(ok, '%s: nftdp exits 0' % tag)
    if not ok:
        print(r.stdout[-2000:])
        return None
    with open(sj) as f:
        stats = json.load(f)
    with open(listing) as f:
        text = f.read()
    return {'stats': stats, 'listing': text, 'tx': [T.read_pcap(p) for p in out]}


def main():
    if not T.is_root():
        T.skip('SKIP: needs root')
    tmp = tempfile.mkdtemp(prefix='nftdp-flow-cache-')
    try:
        with open(os.path.join(tmp, 'rules.nft'), 'w') as f:
            f.write(RULESET)
        pkts = capture()
        write_ports(tmp, pkts)
        # the model: a packet of a dropped flow never leaves; the rest leave
        # out of the other port, in order
        want_tx = [[f for port, f, dropped in pkts if port == 1 - p and not dropped]
                   for p in (0, 1)]
        n_dropped = sum(1 for p in pkts if p[2])

        on = run(tmp, 'cache', [])
        off = run(tmp, 'nocache', ['--flow-cache', '0'])
        ver = run(tmp, 'verify', ['--flow-cache-verify'])
        if on is None or off is None or ver is None:
            return checks.report('flow-cache')
        fc_on, fc_off = on['stats'].get('flow_cache', {}), off['stats'].get('flow_cache', {})
        print('   cache on:  %s' % fc_on)
        print('   cache off: %s' % fc_off)
        check(on['listing'] == off['listing'], 'listings with counters are identical')
        if on['listing'] != off['listing']:
            import difflib
            print(''.join(difflib.unified_diff(off['listing'].splitlines(True),
                                               on['listing'].splitlines(True),
                                               'nocache', 'cache')))
        counted = re.findall(r'packets [1-9]', on['listing'])
        check(len(counted) >= 10, 'listing: %d counters counted packets' % len(counted))
        for p in (0, 1):
            tx = [x['tx'] for x in on['stats']['ports'] if x['port'] == p]
            tx_off = [x['tx'] for x in off['stats']['ports'] if x['port'] == p]
            check(tx == tx_off == [len(want_tx[p])],
                  'port %d tx: %s with the cache, %s without, %d by the model'
                  % (p, tx, tx_off, len(want_tx[p])))
            check(on['tx'][p] == off['tx'][p] == want_tx[p],
                  'port %d sends the same frames, in order' % p)
        check(on['stats']['hooks'] == off['stats']['hooks'], 'hook verdicts are identical')
        check(on['stats']['packets']['dropped'] == off['stats']['packets']['dropped'] ==
              n_dropped, 'dropped by rules: %d' % n_dropped)
        check(fc_on.get('hits', 0) > 0, 'cache on: flow_cache.hits > 0 (%s)' % fc_on.get('hits'))
        check(fc_on.get('inserts', 0) > 0, 'cache on: flow_cache.inserts > 0')
        check(sum(w.get('flow_cache', {}).get('hits', -1) for w in on['stats']['per_worker']) ==
              fc_on.get('hits'), 'cache on: per-worker hits sum to the total')
        check(fc_off.get('hits', -1) == 0 and fc_off.get('misses', -1) == 0,
              'cache off: flow_cache hits and misses are 0')
        fc_ver = ver['stats'].get('flow_cache', {})
        print('   verify:    %s' % fc_ver)
        check(fc_ver.get('hits', 0) > 0 and fc_ver.get('mismatches', -1) == 0,
              'verify: every hit is what the chains say (%s hits, %s mismatches)'
              % (fc_ver.get('hits'), fc_ver.get('mismatches')))
        check(ver['listing'] == off['listing'] and ver['tx'] == off['tx'],
              'verify: listing and tx as without the cache')
        tracked(tmp)
        nat_tracked(tmp)
        guarded(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.report('flow-cache')


if __name__ == '__main__':
    sys.exit(main())
