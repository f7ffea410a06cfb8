#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Same-burst semantics: a burst gives what one packet at a time gives.

usage: burst_order.py BUILD_DIR

The kernel takes each packet through every hook before the next one, so a
packet sees everything the packets before it left: its connection, the
connection's NAT binding and state, dynamic set entries, limit and quota
tokens, counters. One capture of densely interleaved connections (TCP and
UDP, IPv4 and IPv6, under dnat, snat and masquerade, with a dynamic set, a
named quota and a limit) is replayed offline on one port (wire mode: a
packet leaves where it came in, so both directions of every connection sit
in one capture) with --burst 1, 32, 64 and 256, under six rulesets: one
that the pipeline runs one packet at a time, one that it runs by
connection, one without order-visible state, where a segment's IPv4
and IPv6 packets also run together, and one without NAT either, where
first packets of new connections share segments unless one may be
another's (the capture has blocks of such flows back to back, whose
first packets the ruleset drops), and one with chains before conntrack
(notrack, zones, a limit), which run over the whole burst first. What leaves, every counter,
quota, set element and the conntrack counts in --stats-json must be the
same for every burst size. --burst 1 is the kernel's order; the checks
that NAT really translated keep the test from passing on a ruleset that
did nothing. Exit 0 when all agree, 1 otherwise, 77 when not root.
"""
import json
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402
from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw, rdpcap, wrpcap

BUILD = os.path.abspath(sys.argv[1])
E = dict(src='02:00:00:00:00:01', dst='02:00:00:00:00:02')
MASQ4, MASQ6 = '10.2.255.254', 'fd02::ffff'
VIP4, VIP6 = '10.2.0.100', 'fd02::100'
SRV4, SRV6 = '10.2.0.2', 'fd02::2'

RULESET = """
table ip nat {
  chain pre { type nat hook prerouting priority -100; policy accept;
    ip daddr %(vip4)s tcp dport 80 dnat to %(srv4)s:8080
    ip daddr %(vip4)s udp dport 53 dnat to %(srv4)s:5353
  }
  chain post { type nat hook postrouting priority 100; policy accept;
    ip saddr 10.1.0.0/16 masquerade
  }
}
table ip6 nat {
  chain pre { type nat hook prerouting priority -100; policy accept;
    ip6 daddr %(vip6)s tcp dport 80 dnat to [%(srv6)s]:8080
  }
  chain post { type nat hook postrouting priority 100; policy accept;
    ip6 saddr fd01::/64 snat to %(masq6)s
  }
}
table inet filter {
  quota q {
    over 6000 bytes
  }
  set seen4 {
    type ipv4_addr
    size 65535
    flags dynamic
  }
  chain forward { type filter hook forward priority 0; policy drop;
    ct state invalid counter drop
    ct state established,related counter accept
    udp dport 5353 quota name "q" counter drop
    ct state new ip saddr @seen4 counter accept
    ct state new update @seen4 { ip saddr } counter accept
    ct state new meta nfproto ipv6 limit rate 5/minute burst 3 packets counter accept
    counter
  }
%(postfilter)s}
"""
POSTFILTER = """  chain postfilter { type filter hook postrouting priority 200; policy accept;
    ip saddr %(masq4)s counter
    ip6 saddr %(masq6)s counter
    ct state established counter
  }
""" % dict(masq4=MASQ4, masq6=MASQ6)
# The same NAT, a forward chain with no state but counters: no packet's
# order shows in the chains, so a segment's IPv4 and IPv6 packets run each
# hook together, conntrack and NAT over both families in arrival order
# (pipeline.c, walk_hook).
ORDER_FREE = RULESET.split('table inet filter {')[0] + '''table inet filter {
  chain forward { type filter hook forward priority 0; policy drop;
    ct state invalid counter drop
    ct state established,related counter accept
    ct state new meta nfproto ipv4 counter accept
    ct state new meta nfproto ipv6 counter accept
    counter
  }
}
'''
# No NAT and no order-visible state: first packets of new connections
# share segments too (pipeline.c, run_by_connection), unless one may be
# another's: a first packet dropped here leaves no entry, so the next
# packet of its flow, right behind it, is new again.
NO_NAT = """table inet filter {
  chain forward { type filter hook forward priority 0; policy drop;
    ct state invalid counter drop
    ct state established,related counter accept
    ct state new udp length 9 counter drop
    ct state new counter accept
  }
}
"""
# NAT's, and rules that read what conntrack keeps in the entry (its packet and byte
# counts, its timeout): uncacheable, so an established packet's chain runs
# in the pipeline, and must see the entry as its own packet left it, not as
# a later packet of its connection in the same burst did (the established
# pass runs conntrack ahead of the chains: pipeline.c, burst_established).
CT_READS = RULESET.split('table inet filter {')[0] + """table inet filter {
  chain forward { type filter hook forward priority 0; policy accept;
    ct state new counter accept
    ct packets 1-2 counter
    ct packets 3-4 counter
    ct packets 5-1000 counter
    ct bytes 0-200 counter
    ct bytes 201-100000 counter
    ct expiration 4d23h-5d counter
    ct expiration 0s-300s counter
  }
}
"""
# Chains before conntrack (raw prerouting: notrack, zones on both
# directions of NATed connections, a limit of its own) in front of the
# order-free one: they run over the whole burst first, then conntrack and
# the rest by connection (pipeline.c, BURST_PRE_CT). The limit refills one
# token an hour, so only the order of packets decides what it matches.
RAW_FIRST = """table inet raw {
  chain pre { type filter hook prerouting priority raw; policy accept;
    ip saddr 10.3.4.0/24 udp dport 7000 notrack counter
    ip daddr 10.3.4.0/24 notrack counter
    ip saddr 10.1.3.0/24 ct zone set 5 counter
    ip daddr %(masq4)s tcp dport { 44000, 44001 } ct zone set 5 counter
    meta l4proto tcp limit rate 1/hour burst 40 packets counter
    counter
  }
}
""" % dict(masq4=MASQ4) + ORDER_FREE
# Five rulesets: with a second filter chain (postrouting) the pipeline takes
# one packet at a time; with the forward chain alone it runs packets of
# distinct established connections together (pipeline.c, burst_mode).
RULESETS = {
    'raw-first': RAW_FIRST % dict(vip4=VIP4, vip6=VIP6, srv4=SRV4, srv6=SRV6, masq4=MASQ4,
                                  masq6=MASQ6),
    'no-nat': NO_NAT,
    'ct-reads': CT_READS % dict(vip4=VIP4, vip6=VIP6, srv4=SRV4, srv6=SRV6, masq4=MASQ4,
                                masq6=MASQ6),
    'order-free': ORDER_FREE % dict(vip4=VIP4, vip6=VIP6, srv4=SRV4, srv6=SRV6, masq4=MASQ4,
                                    masq6=MASQ6),
    'two-chains': RULESET % dict(vip4=VIP4, vip6=VIP6, srv4=SRV4, srv6=SRV6, masq4=MASQ4,
                                 masq6=MASQ6, postfilter=POSTFILTER),
    'one-chain': RULESET % dict(vip4=VIP4, vip6=VIP6, srv4=SRV4, srv6=SRV6, masq4=MASQ4,
                                masq6=MASQ6, postfilter=''),
}


def tcp_flow(v6, client, cport, data=2):
    """A client's TCP connection to the VIP, replies from the real server
    to the masquerade/snat address, which NAT turns back."""
    L3 = IPv6 if v6 else IP
    vip, srv, masq = (VIP6, SRV6, MASQ6) if v6 else (VIP4, SRV4, MASQ4)

    def c(flags, seq, ack, load=b''):
        return Ether(**E) / L3(src=client, dst=vip) / TCP(sport=cport, dport=80, flags=flags,
                                                          seq=seq, ack=ack) / Raw(load)

    def s(flags, seq, ack, load=b''):
        return Ether(**E) / L3(src=srv, dst=masq) / TCP(sport=8080, dport=cport, flags=flags,
                                                        seq=seq, ack=ack) / Raw(load)
    out = [c('S', 1000, 0), s('SA', 5000, 1001), c('A', 1001, 5001)]
    cs, ss = 1001, 5001
    for i in range(data):
        out.append(c('PA', cs, ss, b'x' * (20 + i)))
        cs += 20 + i
        out.append(s('A', ss, cs))
        out.append(s('PA', ss, cs, b'y' * 30))
        ss += 30
    out += [c('FA', cs, ss), s('FA', ss, cs + 1), c('A', cs + 1, ss + 1)]
    return out


def udp_flow(client, cport, n=5):
    """A new UDP flow's first packets back to back, then replies."""
    out = [Ether(**E) / IP(src=client, dst=VIP4) / UDP(sport=cport, dport=53) / Raw(b'q%d' % i)
           for i in range(n)]
    out += [Ether(**E) / IP(src=SRV4, dst=MASQ4) / UDP(sport=5353, dport=cport) / Raw(b'a%d' % i)
            for i in range(2)]
    return out


def capture():
    rnd = random.Random(11)
    flows = []
    for i in range(12):
        flows.append(tcp_flow(False, '10.1.0.%d' % (1 + i % 5), 40000 + i))
    for i in range(6):
        flows.append(tcp_flow(True, 'fd01::%d' % (1 + i % 3), 41000 + i))
    # a connection closed and opened again on the same ports: the SYN
    # finds the TIME_WAIT entry, which conntrack replaces
    for i in range(2):
        flows.append(tcp_flow(False, '10.1.3.%d' % (1 + i), 44000 + i, 1) +
                     tcp_flow(False, '10.1.3.%d' % (1 + i), 44000 + i, 1))
    for i in range(8):
        flows.append(udp_flow('10.1.1.%d' % (1 + i % 4), 42000 + i))
    # two new flows that clash on one masquerade port: the second moves
    for i in range(3):
        flows.append([Ether(**E) / IP(src='10.1.2.%d' % (1 + i), dst=VIP4) /
                      TCP(sport=43000, dport=80, flags='S', seq=7)])
    pkts = []
    pos = [0] * len(flows)
    while any(pos[i] < len(f) for i, f in enumerate(flows)):
        live = [i for i, f in enumerate(flows) if pos[i] < len(f)]
        i = rnd.choice(live)
        pkts.append(flows[i][pos[i]])
        pos[i] += 1
    # blocks of new UDP flows back to back, straight to a server: a first
    # packet of one byte (no-nat drops it), the flow's next packet, its
    # reply, a flow that only starts
    for b in range(DIRECT_BLOCKS):
        block = []
        for k in range(4):
            c = '10.3.4.%d' % (1 + 4 * b + k)  # not masqueraded
            block += [Ether(**E) / IP(src=c, dst=SRV4) / UDP(sport=45000, dport=7000) / Raw(b'x'),
                      Ether(**E) / IP(src=c, dst=SRV4) / UDP(sport=45000, dport=7000) /
                      Raw(b'second'),
                      Ether(**E) / IP(src=SRV4, dst=c) / UDP(sport=7000, dport=45000) /
                      Raw(b'reply'),
                      Ether(**E) / IP(src=c, dst=SRV4) / UDP(sport=45001 + k, dport=7000) /
                      Raw(b'other')]
        at = rnd.randrange(len(pkts) + 1)
        pkts[at:at] = block
    return pkts


DIRECT_BLOCKS = 3


def clash_free(frames):
    """The frames with the port NAT picked for the clashing flows zeroed:
    like the kernel's, the choice hashes with a secret of each run."""
    out = []
    for b in frames:
        p = Ether(b)
        if IP in p and TCP in p and p[IP].src == MASQ4 and p[TCP].seq == 7:
            p[TCP].sport = 0
            p[TCP].chksum = 0
            b = bytes(p)
        out.append(b)
    return out


def run(tmp, cap, burst, variant):
    tag = '%s-b%d' % (variant, burst)
    prefix = 'nftdp-burst-%d-%s' % (os.getpid(), tag)
    rules = os.path.join(tmp, variant + '.nft')
    out = os.path.join(tmp, tag + '.pcap')
    sj, lj = os.path.join(tmp, tag + '.stats.json'), os.path.join(tmp, tag + '.list.json')
    eal = T.eal_args(prefix, ['net_pcap0,rx_pcap=%s,tx_pcap=%s' % (cap, out)])
    r = T.run_offline(BUILD, eal, ['--socket', os.path.join(tmp, tag + '.sock'),
                                   '--ruleset', rules, '--exit-on-idle', '300',
                                   '--burst', str(burst), '--ifaddr', '0=%s/16' % MASQ4,
                                   '--ifaddr', '0=%s/48' % MASQ6, '--stats-json', sj,
                                   '--listing-json', lj], prefix, timeout=60)
    if r.returncode != 0:
        print(r.stdout)
        sys.exit(1)
    with open(sj) as f:
        stats = json.load(f)
    with open(lj) as f:
        listing = json.load(f)
    return clash_free([bytes(p) for p in rdpcap(out)]), stats, listing


def observable(stats, listing):
    """What must not depend on the burst size: every object of the listing
    (counters, quota, set elements; handles and expiry times aside) and the
    conntrack and drop counts."""
    objs = []
    for o in listing.get('nftables', []):
        o = json.loads(json.dumps(o))
        for v in o.values():
            if isinstance(v, dict):
                v.pop('handle', None)
                for e in v.get('elem', []) if isinstance(v.get('elem'), list) else []:
                    if isinstance(e, dict) and 'elem' in e:
                        e['elem'].pop('expires', None)
        if 'metainfo' not in o:
            objs.append(o)
    keep = {k: v for k, v in stats.items() if k in ('conntrack', 'drops', 'hooks')}
    return objs, keep


def check_variant(tmp, cap, pkts, variant, failures):
    """burst 1 does the work; 32, 64 and 256 give the same. Returns the
    number of checks."""
    def verdict(ok, what):
        print(('ok   ' if ok else 'FAIL ') + '%s: %s' % (variant, what))
        if not ok:
            failures.append('%s: %s' % (variant, what))
    ref_out, ref_stats, ref_list = run(tmp, cap, 1, variant)
    raw_out = [bytes(p) for p in rdpcap(os.path.join(tmp, variant + '-b1.pcap'))]
    ref = observable(ref_stats, ref_list)
    # the reference itself did the work: replies un-NATed back to the
    # VIP, clients masqueraded, the clashing SYNs all forwarded
    unnat = sum(1 for b in ref_out if IP in Ether(b) and Ether(b)[IP].src == VIP4)
    unnat6 = sum(1 for b in ref_out if IPv6 in Ether(b) and Ether(b)[IPv6].src == VIP6)
    masq = sum(1 for b in ref_out if IP in Ether(b) and Ether(b)[IP].src == MASQ4)
    sports = sorted(Ether(b)[TCP].sport for b in raw_out
                    if IP in Ether(b) and Ether(b)[IP].src == MASQ4 and TCP in Ether(b) and
                    Ether(b)[TCP].flags == 'S' and Ether(b)[TCP].seq == 7)
    print('%s, burst 1: %d of %d frames out, %d un-NATed (v4), %d (v6), %d masqueraded, '
          'clash ports %s' % (variant, len(ref_out), len(pkts), unnat, unnat6, masq, sports))
    if variant == 'raw-first':
        # every raw rule matched something at burst 1
        hits = [r['rule']['expr'][-1].get('counter', {}).get('packets', 0)
                for r in ref_list.get('nftables', [])
                if 'rule' in r and r['rule']['table'] == 'raw']
        verdict(len(hits) == 6 and all(hits), 'burst 1: every raw rule matched (%s)' % hits)
        return 1 + check_bursts(tmp, cap, variant, ref_out, ref, verdict)
    if variant == 'ct-reads':
        # at burst 1 every range of the chain met packets: the counts
        # below are not zeros that any order gives
        hits = [sum(e['counter']['packets'] for e in r['rule']['expr'] if 'counter' in e)
                for r in ref_list.get('nftables', [])
                if 'rule' in r and r['rule']['table'] == 'filter']
        verdict(len(hits) == 8 and all(hits), 'burst 1: every ct rule matched (%s)' % hits)
        return 1 + check_bursts(tmp, cap, variant, ref_out, ref, verdict)
    if variant == 'no-nat':
        # the reference dropped each block's one-byte first packets, and
        # their flows' next packets were new again
        ct = ref_stats['conntrack']
        verdict(ct['unconfirmed_freed'] >= 4 * DIRECT_BLOCKS,
                'burst 1: dropped first packets left no entry (%d)' % ct['unconfirmed_freed'])
        return 1 + check_bursts(tmp, cap, variant, ref_out, ref, verdict)
    verdict(unnat >= 12 * 6 + 8 * 2 + 2 * 8, 'burst 1: v4 replies un-NATed')
    verdict(unnat6 >= 3 * 6, 'burst 1: v6 replies un-NATed (3 flows within the limit)')
    verdict(masq >= 12 * 6, 'burst 1: clients masqueraded')
    verdict(len(set(sports)) == 3, 'burst 1: clashing SYNs get distinct ports')
    return 4 + check_bursts(tmp, cap, variant, ref_out, ref, verdict)


def check_bursts(tmp, cap, variant, ref_out, ref, verdict):
    """Bursts of 32, 64 and 256 give what burst 1 gave; the number of checks."""
    for burst in (32, 64, 256):
        out, stats, listing = run(tmp, cap, burst, variant)
        got = observable(stats, listing)
        verdict(out == ref_out, 'burst %d: the same %d frames leave, in order' %
                (burst, len(ref_out)))
        if out != ref_out:
            for i, (a, b) in enumerate(zip(ref_out, out)):
                if a != b:
                    print('   first difference at frame %d:\n   %s\n   %s' %
                          (i, Ether(a).summary(), Ether(b).summary()))
                    break
            print('   %d vs %d frames' % (len(ref_out), len(out)))
        verdict(got[0] == ref[0], 'burst %d: counters, quota and set elements as with burst 1' %
                burst)
        for a, b in zip(ref[0], got[0]):
            if a != b:
                print('   burst 1:  %s\n   burst %d: %s' % (a, burst, b))
        verdict(got[1] == ref[1], 'burst %d: conntrack and drop counts as with burst 1' % burst)
        if got[1] != ref[1]:
            print('   burst 1:  %s\n   burst %d: %s' % (ref[1], burst, got[1]))
    return 3 * 3


def main():
    if not T.is_root():
        T.skip('burst_order: needs root (hugepage-free EAL still wants /var/run/dpdk)')
    tmp = tempfile.mkdtemp(prefix='nftdp-burst-')
    failures = []
    checks = 0
    try:
        pkts = capture()
        cap = os.path.join(tmp, 'in.pcap')
        wrpcap(cap, pkts)
        for variant, rules in RULESETS.items():
            with open(os.path.join(tmp, variant + '.nft'), 'w') as f:
                f.write(rules)
            checks += check_variant(tmp, cap, pkts, variant, failures)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('%d passed, %d failed' % (checks - len(failures), len(failures)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
