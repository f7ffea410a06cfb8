#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Offline replay of one pcapng capture that holds two interfaces.

    replay_pcapng.py BUILD_DIR        (root; exit 77 = skipped)

The differential harness runs its two-way masquerade case (060) on the
kernel and offline, with each side's capture on its own port; this test
writes both sides into one pcapng (interfaces named dp0 and dp1, packets in
capture-time order), replays it through net_pcap port 0 alone (port 1
transmits only), and requires exactly the packets the kernel sent out of
each port: each interface's packets arrive on the port named like it
(--ifname). docs/dataplane.md, "Several captures"."""

import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, '..', '..', 'differential', 'run.py')
CASE = os.path.join(HERE, '..', '..', 'differential', 'cases', '060_nat_snat_two_way')


def block(t, body):
    body += b'\0' * (-len(body) % 4)
    return struct.pack('<II', t, 12 + len(body)) + body + struct.pack('<I', 12 + len(body))


def option(code, val):
    return struct.pack('<HH', code, len(val)) + val + b'\0' * (-len(val) % 4)


def write_pcapng(path, sides):
    """sides: [(name, pcap path)]: one interface each, packets by time."""
    from scapy.utils import RawPcapReader
    out = block(0x0a0d0d0a, struct.pack('<IHHq', 0x1a2b3c4d, 1, 0, -1))
    pk = []
    for i, (name, f) in enumerate(sides):
        out += block(1, struct.pack('<HHI', 1, 0, 65535) + option(2, name.encode()) +
                     option(0, b''))
        pk += [(m.sec * 1000000 + m.usec, i, d) for d, m in RawPcapReader(f)]
    for ts, i, d in sorted(pk, key=lambda x: (x[0], x[1])):
        out += block(6, struct.pack('<IIIII', i, ts >> 32, ts & 0xffffffff, len(d), len(d)) + d)
    with open(path, 'wb') as f:
        f.write(out)
    return len(pk)


def ip_packets(path):
    from scapy.utils import RawPcapReader
    return [d[14:] for d, _ in RawPcapReader(path)]


def main():
    build = os.path.abspath(sys.argv[1])
    if not T.is_root():
        T.skip('SKIP: needs root')
    tmp = tempfile.mkdtemp(prefix='nftdp-pcapng-test.')
    ns = T.netns_name('pcapng')
    try:
        keep = os.path.join(tmp, 'keep')
        subprocess.run([RUN, build, '060', '--bursts', '32', '--keep', keep], timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        w = os.path.join(keep, '060_nat_snat_two_way')
        if not os.path.exists(os.path.join(w, 'in-dp1.pcap')):
            T.skip('SKIP: the harness wrote no per-port captures (no offline two-way replay)')
        ng = os.path.join(tmp, 'both.pcapng')
        n = write_pcapng(ng, [('dp0', os.path.join(w, 'in-dp0.pcap')),
                              ('dp1', os.path.join(w, 'in-dp1.pcap'))])
        T.netns_add(ns)
        T.veth(ns, 'dp1', 'dp0', index=2, peer_index=3, up=False)
        out = {p: os.path.join(tmp, 'out-%s.pcap' % p) for p in ('dp0', 'dp1')}
        eal = T.eal_args(ns, ['net_pcap0,rx_pcap=%s,tx_pcap=%s' % (ng, out['dp0']),
                              'net_pcap1,tx_pcap=%s' % out['dp1']], log_level=None)
        args = ['--socket', os.path.join(tmp, 'nl.sock'), '--wire', '0:1', '--router',
                '--ifname', '0=dp0', '--ifname', '1=dp1', '--ruleset', CASE + '.nft',
                '--exit-on-idle', '500',
                '--ifaddr', '0=10.1.255.254/16', '--ifaddr', '0=2001:db8:1::ffff/48',
                '--ifaddr', '1=10.2.255.254/16', '--ifaddr', '1=2001:db8:2::ffff/48']
        r = T.run_offline(build, eal, args, ns, timeout=60, ns=ns, merge=False)
        fail = r.returncode != 0
        if 'interface 1 -> port 1 (dp1)' not in r.stdout:
            print('FAIL: no interface mapping said at start')
            fail = True
        for p in ('dp0', 'dp1'):
            got, want = ip_packets(out[p]), ip_packets(os.path.join(w, 'kernel-%s.pcap' % p))
            ok = got == want
            fail |= not ok
            print('%s %s: %d packets out, the kernel %d (%d in the pcapng)' %
                  ('ok  ' if ok else 'FAIL', p, len(got), len(want), n))
        if fail:
            print(r.stdout[-2000:], r.stderr[-2000:])
        return 1 if fail else 0
    finally:
        T.netns_del(ns)
        T.rm_runtime(ns)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
