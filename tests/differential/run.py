#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Kernel-differential dataplane tests: the Linux kernel is the oracle.

    run.py BUILD_DIR [case ...] [--kernel-only] [-v] [--keep DIR] [--bursts N,...]
           [--daemon-arg=ARG ...] [--burst-daemon-arg=ARG ...]

Each case is cases/NNN_name.nft (a complete ruleset) plus cases/NNN_name.py
(a deterministic scapy recipe defining PACKETS).  The harness writes the
capture, then

  kernel: in two scratch network namespaces it creates and always deletes
          (nftdp-diff-PID-dut, nftdp-diff-PID-tester), a DUT that routes
          between veths dp0 (ingress) and dp1 (egress) loads the ruleset with
          nft -f; the capture is sent from the tester's peer of dp0 and what
          leaves on both peers is captured; `nft -j list ruleset` gives the
          counters.
  nftdp:  BUILD_DIR/nftdp replays the capture offline through net_pcap ports
          in --router mode and writes its -j listing at exit.

Two-way cases (PACKETS items that are (side, packet) pairs, side 'dp0' or
'dp1') are sent one packet at a time, GAP seconds apart, each from its
side's tester peer; nftdp then runs live on veths (net_af_packet) in its
own scratch namespace with the same tester, since an offline replay loses
the order between ports.

--daemon-arg passes ARG to every nftdp the harness starts, --burst-daemon-arg
only to the --bursts replays (each repeatable; write --daemon-arg=--flow-cache=0,
with '=', as ARG starts with a dash). The Meson test runs the paced pass with
nftdp's defaults (per-flow verdict cache on) and the --bursts 256 pass with
--flow-cache=0, so both the cached and the uncached path meet the kernel.

Egress packets (per port, in order, from the IP header on) and every
counter/quota value (matched by table, chain and rule position, or by object
name) must be equal.  One line per case: agree, DIFFER (with a short diff),
kernel-only (only with --kernel-only) or ERROR.  Exit status 0 when every case
agrees (or is kernel-only under --kernel-only), 1 otherwise -- also when
BUILD_DIR/nftdp is missing or lacks the options the harness needs and
--kernel-only was not given -- and 77 when not root.  docs/differential.md.
"""

import argparse
import atexit
import importlib.util
import ipaddress
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import nftdp_test as T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, 'cases')
PID = os.getpid()
NS_DUT = 'nftdp-diff-%d-dut' % PID
NS_TESTER = 'nftdp-diff-%d-tester' % PID
NS_NFTDP = 'nftdp-diff-%d-nftdp' % PID
NS_MON = 'nftdp-diff-%d-mon' % PID  # where `nft monitor trace` watches nftdp

# Fixed MACs so the capture (and nftdp's replay) is the same bytes every run.
MAC = {'dp0': '02:00:00:00:00:10', 'dp1': '02:00:00:00:00:11',
       't0': '02:00:00:00:01:10', 't1': '02:00:00:00:01:11'}

# Addresses of the DUT and the subnets on each side.  Sources live behind dp0,
# destinations behind dp1; every address in a capture gets a permanent
# neighbour entry so no ARP or ND is ever needed.
DUT_ADDR = {'dp0': ['10.1.255.254/16', '2001:db8:1::ffff/48'],
            'dp1': ['10.2.255.254/16', '2001:db8:2::ffff/48']}
EXTRA_ROUTES = {'dp0': ['192.168.0.0/16', 'fd00:1::/32'],
                'dp1': ['172.16.0.0/12', 'fd00:2::/32']}
SIDE_NETS = {dev: [ipaddress.ip_network(a, strict=False) for a in DUT_ADDR[dev] + EXTRA_ROUTES[dev]]
             for dev in DUT_ADDR}

STEP_TIMEOUT = 20      # seconds for one command (nft, ip, the tester)
CASE_TIMEOUT = 60      # seconds for one whole case, both sides
SETTLE = 0.4           # seconds to wait for the last forwarded packet
IDLE_MS = 100          # offline replay: nftdp exits once its rx queues were empty this long
# (net_pcap reads its file without pacing, so the end of the capture is the
# first idle moment; measured between the worker's own polls, so a worker
# the host did not schedule is not idle)
# hugepages for the run's daemons (two at a time under --jobs 2, a mirrored
# route table two 64 MiB+ tables each): 2 MiB pages, given back at the end
HUGEPAGES = 768
SETTLE_QUIET = 0.1     # the kernel's side: seconds with nothing new (tester_main)
GAP = 0.05             # seconds between the packets of a two-way case

_cleanup_dirs = []
_live = []             # the live nftdp of a two-way case, while it runs
_osf_added = []        # the osf fingerprints this run put in the kernel's global list
_shards = []           # --jobs: the child runs, while they run
_hugepages = [0]       # pages this run added to the kernel's pool (hugepages_reserve)


def sh(argv, timeout=STEP_TIMEOUT, check=True, stdin=None):
    """Run argv in its own process group, killed whole on a timeout, the
    case's alarm or a signal (T.run); raise on a timeout and, with check,
    on a non-zero exit."""
    r = T.run(argv, timeout=timeout, stdin=stdin)
    if r.timed_out:
        raise RuntimeError('timeout after %ds: %s' % (timeout, ' '.join(argv)))
    if check and r.rc != 0:
        raise RuntimeError('%s: exit %d: %s' % (' '.join(argv), r.rc, r.err.strip()[-600:]))
    return r.rc, r.out, r.err


def nsx(ns, *argv, **kw):
    return sh(T.ns_argv(ns, argv), **kw)


def delete_namespaces():
    T.netns_del(NS_DUT, NS_TESTER, NS_NFTDP, NS_MON, timeout=STEP_TIMEOUT)


def cleanup():
    for p in _shards:  # each cleans up after itself on SIGTERM
        if p.poll() is None:
            p.terminate()
    for p in _shards:
        try:
            p.wait(timeout=STEP_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
    for p in _live:  # its own session: a signal to us does not reach it
        if p.poll() is None:
            T.kill_group(p)
    if _osf_added:  # interrupted before the case's finally: from a fresh netns
        try:
            osf_remove(['unshare', '--net'])
        except Exception as e:
            print('osf: could not remove fingerprints from the kernel: %s' % e, flush=True)
    delete_namespaces()
    if _hugepages[0]:  # after every daemon of ours has ended
        T.hugepages_release(_hugepages[0])
        _hugepages[0] = 0
    for d in _cleanup_dirs:
        shutil.rmtree(d, ignore_errors=True)


def on_signal(sig, frame):
    cleanup()
    sys.exit(128 + sig)


class CaseTimeout(Exception):
    pass


def on_alarm(sig, frame):
    raise CaseTimeout('case took more than %ds' % CASE_TIMEOUT)


# ---------------------------------------------------------------- capture

def load_recipe(path):
    spec = importlib.util.spec_from_file_location('case_' + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sides_of(recipe):
    """The port each packet arrives on: an item of PACKETS is a packet (it
    comes in on dp0) or a (side, packet) pair, side 'dp0' or 'dp1'."""
    sides = []
    for p in recipe.PACKETS:
        side = p[0] if isinstance(p, tuple) else 'dp0'
        if side not in ('dp0', 'dp1'):
            raise ValueError('packet side %r is neither dp0 nor dp1' % (side,))
        sides.append(side)
    return sides


def two_way(recipe):
    """A case with packets from both sides: sent one at a time, with a gap,
    on both ports, and nftdp runs live on veths (docs/differential.md)."""
    return any(isinstance(p, tuple) for p in recipe.PACKETS)


def ipset_saved(recipe):
    """IPSET_SAVE = True (a two-way case with a .ipset): `ipset save` after
    the packets must be the same on both sides (docs/differential.md)."""
    return getattr(recipe, 'IPSET_SAVE', False)


def ipset_lines(text):
    """`ipset save` without what differs by design: the random initval, a
    hash set's member order (sorted), an element's remaining timeout."""
    creates, adds = [], []
    for line in text.splitlines():
        line = re.sub(r' initval 0x[0-9a-f]+', '', line)
        if line.startswith('add '):
            adds.append(re.sub(r' timeout \d+', ' timeout T', line))
        else:
            creates.append(line)
    return creates + sorted(adds)


def ipset_compare(work):
    def lines(side):
        with open(os.path.join(work, side + '-ipset.txt')) as f:
            return ipset_lines(f.read())
    return lines_compare('ipset save', lines('kernel'), lines('nftdp'))


def bridged(recipe):
    """BRIDGE = True: the DUT is a bridge over dp0 and dp1 (the kernel's
    br0, nftdp in wire mode without --router), docs/differential.md."""
    return getattr(recipe, 'BRIDGE', False)


# set per case by main(): a bridge case compares link-layer headers too
_compare_l2 = False


def frames_of(recipe):
    """The capture as raw frames: L3 packets get an Ethernet header towards
    the port they arrive on (from that side's tester peer; through a bridge,
    to the other side's peer); frames shorter than 60 bytes are padded as a
    wire would."""
    from scapy.layers.l2 import Ether
    out = []
    for item, side in zip(recipe.PACKETS, sides_of(recipe)):
        p = item[1] if isinstance(item, tuple) else item
        if not isinstance(p, Ether):
            dst = MAC['t' + ('1' if side == 'dp0' else '0')] if bridged(recipe) else MAC[side]
            p = Ether(src=MAC['t' + side[-1]], dst=dst) / p
        b = bytes(p)
        if len(b) < 60:
            b += b'\0' * (60 - len(b))
        out.append(b)
    return out


write_pcap = T.write_pcap  # frame i at 1700000000 s + i ms
read_pcap = T.read_pcap


def addresses_of(frames):
    from scapy.layers.l2 import Ether
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6
    addrs = set()
    for f in frames:
        p = Ether(f)
        for layer in (IP, IPv6):
            if layer in p:
                for a in (p[layer].src, p[layer].dst):
                    try:
                        addrs.add(ipaddress.ip_address(a))
                    except ValueError:
                        pass
    return addrs


def l3_bytes(frame):
    """The frame from its IP header on, cut to the IP packet's own length
    (Ethernet padding is an L2 matter; the kernel trims it, a wire adds it)."""
    off = 12
    eth_type = int.from_bytes(frame[off:off + 2], 'big')
    off += 2
    while eth_type in (0x8100, 0x88a8) and len(frame) >= off + 4:
        eth_type = int.from_bytes(frame[off + 2:off + 4], 'big')
        off += 4
    b = frame[off:]
    if eth_type == 0x0800 and len(b) >= 4 and b[0] >> 4 == 4:
        b = b[:int.from_bytes(b[2:4], 'big')]
    elif eth_type == 0x86dd and len(b) >= 6 and b[0] >> 4 == 6:
        b = b[:40 + int.from_bytes(b[4:6], 'big')]
    elif _compare_l2:  # not IP: the frame without its padding
        b = b.rstrip(b'\0')
    return eth_type, b


def egress_key(frame):
    """What compare() compares of a frame: its IP packet (l3_bytes), and in
    a bridge case its link-layer header (MACs, tags) before it."""
    eth_type, b = l3_bytes(frame)
    if not _compare_l2:
        return eth_type, normalised(b)
    off = 14
    while int.from_bytes(frame[off - 2:off], 'big') in (0x8100, 0x88a8) and len(frame) >= off + 4:
        off += 4
    return eth_type, frame[:off] + normalised(b)


def ipv4_header_ok(b):
    ihl = (b[0] & 0xf) * 4
    if ihl < 20 or len(b) < ihl:
        return False
    s = sum(int.from_bytes(b[i:i + 2], 'big') for i in range(0, ihl, 2))
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


def normalised(l3):
    """ICMP errors are made by the router itself, with fields the kernel
    draws at random: the IPv4 ID (and so the header checksum, compared only
    for being right) and the IPv6 flow label (a hash with a boot-time key).
    Those fields are not compared; everything else is."""
    b = bytearray(l3)
    if len(b) >= 21 and b[0] >> 4 == 4 and b[9] == 1:
        ihl = (b[0] & 0xf) * 4
        if len(b) > ihl and b[ihl] in (3, 4, 5, 11, 12):
            ok = ipv4_header_ok(l3)
            b[4:6] = b'\0\0'
            b[10:12] = b'\0\0' if ok else b'\xff\xff'
    elif len(b) >= 41 and b[0] >> 4 == 6 and b[6] == 58 and b[40] < 128:
        b[1] &= 0xf0
        b[2:4] = b'\0\0'
    return bytes(b)


def is_noise(frame):
    """The DUT's own IPv6 housekeeping (MLD, RS/RA, ND, redirects)."""
    eth_type, b = l3_bytes(frame)
    if eth_type != 0x86dd or len(b) < 42:
        return False
    nh, off = b[6], 40
    while nh in (0, 60, 43) and len(b) >= off + 8:  # hop-by-hop (MLD's router alert)
        nh, off = b[off], off + (b[off + 1] + 1) * 8
    return nh == 58 and len(b) > off and 130 <= b[off] <= 143


def describe(frame):
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6
    eth_type, l3 = l3_bytes(frame)
    try:
        if eth_type == 0x0800:
            return IP(l3).summary()
        if eth_type == 0x86dd:
            return IPv6(l3).summary()
    except Exception:  # a malformed packet still gets a line
        pass
    return 'ethertype 0x%04x %s' % (eth_type, l3[:24].hex())


# ---------------------------------------------------------------- tester

SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40


def tester_socket(dev):
    """A raw packet socket on dev as scapy's L2Socket opens one (all
    protocols, promiscuous, VLAN tags from the aux data), without scapy:
    importing it costs half a second a case."""
    import socket
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((dev, 0))
    s.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP,
                 struct.pack('iHH8s', socket.if_nametoindex(dev), PACKET_MR_PROMISC, 0, b''))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    return s


def tester_recv(s):
    """One frame from a tester socket, its VLAN tag put back where the
    kernel took it off (as scapy does); None for one the host sent."""
    data, anc, _, addr = s.recvmsg(65536 + 4, 64)
    if addr[2] == PACKET_OUTGOING:
        return None
    for level, kind, aux in anc:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(aux) >= 20:
            status, _, _, _, _, tci, tpid = struct.unpack('IIIHHHH', aux[:20])
            if tci or status & TP_STATUS_VLAN_VALID:
                if not status & TP_STATUS_VLAN_TPID_VALID:
                    tpid = 0x8100
                data = data[:12] + struct.pack('!HH', tpid, tci) + data[12:]
    return data


def tester_main(in_pcap, out_dir, plan_path=None):
    """Runs inside a tester netns: send the capture, record every frame that
    arrives on t0 and t1 from the DUT into PREFIX-dp0.pcap/PREFIX-dp1.pcap.
    One-way cases send the whole capture on t0 at once; with a plan (JSON:
    sides, gap, prefix) each frame goes out of its side's peer, one at a
    time: the next one once a frame has come back from the DUT (it handled
    the packet) or `gap` seconds later (it dropped it), so the DUT has
    handled each packet before the next. The sockets skip what the host
    itself sent (PACKET_OUTGOING), so neither the injected frames nor
    anything else of ours is recorded. The end: the kernel handles a frame
    before its send returns (veth), so its side ends once nothing has come
    for SETTLE_QUIET; a live nftdp may be slower to forward the last one,
    so its side waits SETTLE whole."""
    frames = read_pcap(in_pcap)
    plan = {'sides': ['dp0'] * len(frames), 'gap': 0, 'prefix': 'kernel'}
    if plan_path:
        with open(plan_path) as f:
            plan.update(json.load(f))
    socks = {dev: tester_socket(dev) for dev in ('t0', 't1')}
    got = {dev: [] for dev in socks}
    by_fd = {s.fileno(): dev for dev, s in socks.items()}
    poller = select.poll()
    for s in socks.values():
        poller.register(s, select.POLLIN)

    def take(timeout):
        """Whatever has arrived, waiting up to timeout s for the first."""
        n = 0
        for fd, _ in poller.poll(max(0, int(timeout * 1000 + 0.999))):
            f = tester_recv(socks[by_fd[fd]])
            if f is not None:
                got[by_fd[fd]].append(f)
                n += 1
        return n

    if plan['prefix'] != 'kernel':
        time.sleep(0.1)  # as before scapy went: a live nftdp's worker has just started
    for f, side in zip(frames, plan['sides']):
        socks['t' + side[-1]].send(f)
        if plan['gap']:
            # something the packet caused has left the DUT (it handled the
            # packet), or the gap is over (it dropped it)
            end = time.monotonic() + plan['gap']
            while not take(max(0.0, end - time.monotonic())) and time.monotonic() < end:
                pass
    end = time.monotonic() + SETTLE
    quiet = SETTLE_QUIET if plan['prefix'] == 'kernel' else SETTLE
    last = time.monotonic()
    while time.monotonic() < end and time.monotonic() - last < quiet:
        if take(min(end, last + quiet) - time.monotonic()):  # (take: >= 0)
            last = time.monotonic()
    while take(0):  # what is queued
        pass
    for s in socks.values():
        s.close()
    for dev, peer in (('t0', 'dp0'), ('t1', 'dp1')):
        write_pcap(os.path.join(out_dir, '%s-%s.pcap' % (plan['prefix'], peer)), got[dev])


# ---------------------------------------------------------------- kernel side

def dut_setup(recipe, frames):
    delete_namespaces()
    sh(['ip', 'netns', 'add', NS_DUT])
    sh(['ip', 'netns', 'add', NS_TESTER])
    nsx(NS_TESTER, 'sysctl', '-q', '-w', 'net.ipv6.conf.all.disable_ipv6=1',
        'net.ipv6.conf.default.disable_ipv6=1')
    sysctls = ['net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1',
               'net.ipv4.conf.all.rp_filter=0', 'net.ipv4.conf.default.rp_filter=0',
               'net.ipv4.icmp_ratelimit=0', 'net.ipv6.icmp.ratelimit=0',
               'net.ipv4.conf.all.send_redirects=0', 'net.ipv4.conf.default.send_redirects=0']
    for scope in ('all', 'default'):
        sysctls += ['net.ipv6.conf.%s.accept_dad=0' % scope,
                    'net.ipv6.conf.%s.dad_transmits=0' % scope,
                    'net.ipv6.conf.%s.router_solicitations=0' % scope,
                    'net.ipv6.conf.%s.accept_ra=0' % scope,
                    'net.ipv6.conf.%s.mldv1_unsolicited_report_interval=1' % scope,
                    'net.ipv6.conf.%s.mldv2_unsolicited_report_interval=1' % scope,
                    'net.ipv6.conf.%s.addr_gen_mode=1' % scope]
    # SYSCTLS (optional): more, e.g. net.ipv4.fib_multipath_hash_seed
    sysctls += list(getattr(recipe, 'SYSCTLS', []))
    nsx(NS_DUT, 'sysctl', '-q', '-w', *sysctls)
    if bridged(recipe):
        bridge_setup()
        return
    # MIRROR_ROUTES: nftdp runs in this namespace, where nft resolves
    # names; dp1 as ifindex 2 is nftdp's port 1 (P+1), as in
    # nftdp-diff-PID-nftdp, so `dup to ADDR device "dp1"` means the same
    # port on both sides (dp0 cannot be 1, lo's)
    index = {'dp0': ['index', '3'], 'dp1': ['index', '2']} \
        if getattr(recipe, 'MIRROR_ROUTES', False) else {'dp0': [], 'dp1': []}
    for i in (0, 1):
        dp, t = 'dp%d' % i, 't%d' % i
        nsx(NS_DUT, 'ip', 'link', 'add', dp, *index[dp], 'address', MAC[dp], 'type', 'veth',
            'peer', 'name', t, 'address', MAC[t], 'netns', NS_TESTER)
        nsx(NS_DUT, 'ip', 'link', 'set', dp, 'addrgenmode', 'none')
        nsx(NS_DUT, 'sysctl', '-q', '-w', 'net.ipv4.conf.%s.rp_filter=0' % dp,
            'net.ipv4.conf.%s.send_redirects=0' % dp)
        # kernel-made replies must carry real checksums when sniffed on the peer
        nsx(NS_DUT, 'ethtool', '-K', dp, 'tx', 'off')  # tools/deps.sh installs ethtool
        for a in DUT_ADDR[dp]:
            extra = ['nodad'] if ':' in a else []
            nsx(NS_DUT, 'ip', 'addr', 'add', a, 'dev', dp, *extra)
        nsx(NS_DUT, 'ip', 'link', 'set', dp, 'up')
        nsx(NS_TESTER, 'ip', 'link', 'set', t, 'up')
        for r in EXTRA_ROUTES[dp]:
            nsx(NS_DUT, 'ip', 'route', 'add', r, 'dev', dp)
    for r in getattr(recipe, 'ROUTES', []):  # once both links are up
        nsx(NS_DUT, 'ip', *r.split())
    own = {ipaddress.ip_interface(a).ip for dev in DUT_ADDR for a in DUT_ADDR[dev]}
    extra = {ipaddress.ip_address(a) for a in getattr(recipe, 'NEIGHBOURS', [])}
    for a in sorted(addresses_of(frames) | extra, key=lambda x: (x.version, x)):
        if a in own or a.is_multicast or a.is_unspecified or a.is_loopback:
            continue
        for dev, nets in SIDE_NETS.items():
            if any(a in n for n in nets if n.version == a.version):
                nsx(NS_DUT, 'ip', 'neigh', 'replace', str(a), 'lladdr',
                    MAC['t' + dev[-1]], 'nud', 'permanent', 'dev', dev, check=False)
                break
    time.sleep(0.2)  # let the DUT's MLD reports go out before any counter exists


def bridge_setup():
    """br0 over dp0 and dp1, no addresses, no IPv6 (so no MLD or ND of its
    own), STP off (the default); br_netfilter as this kernel has it built
    in, bridge-nf-call-iptables/ip6tables 1 (docs/dataplane.md)."""
    nsx(NS_DUT, 'sysctl', '-q', '-w', 'net.ipv6.conf.all.disable_ipv6=1',
        'net.ipv6.conf.default.disable_ipv6=1')
    nsx(NS_DUT, 'ip', 'link', 'add', 'br0', 'type', 'bridge')
    for i in (0, 1):
        dp, t = 'dp%d' % i, 't%d' % i
        nsx(NS_DUT, 'ip', 'link', 'add', dp, 'address', MAC[dp], 'type', 'veth',
            'peer', 'name', t, 'address', MAC[t], 'netns', NS_TESTER)
        nsx(NS_DUT, 'ethtool', '-K', dp, 'tx', 'off')
        nsx(NS_DUT, 'ip', 'link', 'set', dp, 'master', 'br0')
        nsx(NS_DUT, 'ip', 'link', 'set', dp, 'up')
        nsx(NS_TESTER, 'ip', 'link', 'set', t, 'up')
    # no IGMP reports of br0's own (they would pass bridge output and
    # postrouting); no snooping: unknown multicast is flooded
    nsx(NS_DUT, 'ip', 'link', 'set', 'br0', 'multicast', 'off')
    nsx(NS_DUT, 'ip', 'link', 'set', 'br0', 'type', 'bridge', 'mcast_snooping', '0')
    nsx(NS_DUT, 'ip', 'link', 'set', 'br0', 'up')
    time.sleep(0.2)


def run_tester(work, recipe, prefix):
    """The tester in NS_TESTER; two-way cases get a plan (sides, gap), a
    one-way case run live against nftdp one with its prefix (no gap)."""
    argv = [sys.executable, os.path.abspath(__file__), '--tester',
            os.path.join(work, 'in.pcap'), work]
    if two_way(recipe) or prefix != 'kernel':
        plan = os.path.join(work, prefix + '-plan.json')
        with open(plan, 'w') as f:
            json.dump({'sides': sides_of(recipe),
                       'gap': getattr(recipe, 'GAP', GAP) if two_way(recipe) else 0,
                       'prefix': prefix}, f)
        argv.append(plan)
    rc, out, err = nsx(NS_TESTER, *argv, check=False)
    if rc != 0:
        raise RuntimeError('tester failed: ' + err.strip()[-600:])


# ---------------------------------------------------------------- osf

OSF_LOADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'osf_load.py')


class CaseSkip(Exception):
    """The case cannot run here; the message says why."""


def osf_fingerprints(recipe):
    """OSF = [fingerprint, ...] (osf_load.py's record()): loaded into the
    kernel from the DUT namespace before the packets and removed after
    (the kernel's list is global), and into the live nftdp through the
    shim. Such a case is two-way (nftdp runs live) and PACED_ONLY."""
    return getattr(recipe, 'OSF', None)


def osf_run(prefix, op, fps, env=None, shim=False):
    path = os.path.join(tempfile.gettempdir(), 'nftdp-diff-%d-osf-%s.json' % (PID, op))
    with open(path, 'w') as f:
        json.dump(fps, f)
    try:
        r = subprocess.run(prefix + ['/usr/bin/python3', OSF_LOADER, op, path] +
                           (['--shim'] if shim else []), capture_output=True, text=True,
                           timeout=STEP_TIMEOUT, env=env)
    finally:
        os.unlink(path)
    if r.returncode != 0:
        raise RuntimeError('osf_load.py %s: %s' % (op, (r.stderr or r.stdout).strip()[-300:]))
    return [int(e) for e in r.stdout.split()]


def osf_add_kernel(fps):
    """Adds each with NLM_F_EXCL from the DUT namespace; those added are
    in _osf_added until removed. EEXIST: the host has that fingerprint
    (never removed here); EPERM or EOPNOTSUPP: the kernel refuses adds
    from this namespace or lacks nfnetlink_osf, and the case skips."""
    errs = osf_run(['ip', 'netns', 'exec', NS_DUT], 'add', fps)
    _osf_added.extend(fp for fp, e in zip(fps, errs) if e == 0)
    bad = [(fp['genre'], e) for fp, e in zip(fps, errs) if e]
    if any(e in (1, 95, 93) for _, e in bad):  # EPERM, EOPNOTSUPP, EPROTONOSUPPORT
        raise CaseSkip('the kernel refused OSF_MSG_ADD from the scratch netns (%s)' % bad)
    if bad:
        raise RuntimeError('osf: fingerprints not added to the kernel (errno): %s' % bad)


def osf_remove(prefix):
    """Removes what osf_add_kernel added; every one must go (errno 0)."""
    if not _osf_added:
        return
    fps = list(_osf_added)
    errs = osf_run(prefix, 'remove', fps)
    del _osf_added[:]
    if any(errs):
        raise RuntimeError('osf: removing the fingerprints added: errno %s' % errs)


def kernel_side(case, recipe, frames, work):
    dut_setup(recipe, frames)
    try:
        if ruleset_file(case).endswith('.eb'):  # ebtables-nft-restore reads stdin
            with open(ruleset_file(case)) as f:
                nsx(NS_DUT, restore_tool(case), stdin=f.read())
        elif is_iptables(case):
            if os.path.exists(case + '.nftpre'):  # nft's tables beside iptables'
                nsx(NS_DUT, 'nft', '-f', case + '.nftpre')
            if os.path.exists(case + '.ipset'):  # the sets its -m set names
                with open(case + '.ipset') as f:
                    nsx(NS_DUT, 'ipset', 'restore', stdin=f.read())
            nsx(NS_DUT, restore_tool(case), ruleset_file(case))
        else:
            nsx(NS_DUT, 'nft', '-f', case + '.nft')
        if osf_fingerprints(recipe):
            osf_add_kernel(osf_fingerprints(recipe))
        mon = trace_start(NS_DUT, ['nft'], None, work, 'kernel') if traced(recipe) else None
        lst = nflog_start(NS_DUT, None, work, 'kernel', recipe) if nflogged(recipe) else None
        run_tester(work, recipe, 'kernel')
        if mon:
            trace_stop(mon)
        if lst:
            nflog_stop(lst)
        if ipset_saved(recipe):
            _, saved, _ = nsx(NS_DUT, 'ipset', 'save')
            with open(os.path.join(work, 'kernel-ipset.txt'), 'w') as f:
                f.write(saved)
        _, listing, _ = nsx(NS_DUT, 'nft', '-j', 'list', 'ruleset')
        with open(os.path.join(work, 'kernel.json'), 'w') as f:
            f.write(listing)
    finally:
        try:
            osf_remove(['ip', 'netns', 'exec', NS_DUT])
        finally:
            delete_namespaces()
    egress = {p: read_pcap(os.path.join(work, 'kernel-%s.pcap' % p)) for p in ('dp0', 'dp1')}
    return egress, json.loads(listing)


# ---------------------------------------------------------------- tracing

MONITOR_SETTLE = 0.8   # seconds for `nft monitor trace` to fill its cache and subscribe


def traced(recipe):
    """TRACE = True: `nft monitor trace` runs on each side while the
    tester sends (two-way cases, so that nftdp runs live), and what it
    prints must be the same (trace_compare)."""
    return getattr(recipe, 'TRACE', False)


def trace_start(ns, nft, env, work, side):
    """`nft monitor trace` in ns, its output into WORK/SIDE-trace.txt; its
    own session, killed with the case."""
    f = open(os.path.join(work, side + '-trace.txt'), 'w')
    p = subprocess.Popen(T.in_ns(ns) + nft + ['monitor', 'trace'], stdout=f,
                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                         start_new_session=True)
    _live.append(p)
    time.sleep(MONITOR_SETTLE)
    if p.poll() is not None:
        f.close()
        _live.remove(p)
        raise RuntimeError('%s: nft monitor trace exited %d' % (side, p.returncode))
    return p, f


def trace_stop(mon):
    """nft prints (and flushes) each event as it comes: after the last
    packet's, SIGINT ends it."""
    p, f = mon
    time.sleep(0.3)
    try:
        os.killpg(p.pid, signal.SIGINT)
        p.wait(timeout=STEP_TIMEOUT)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        T.kill_group(p)
    finally:
        _live.remove(p)
        f.close()


def trace_lines(work, side):
    """The monitor's lines, trace ids numbered in order of appearance
    (the kernel hashes the skb with a boot-time key; nftdp numbers its
    traced packets: docs/differences.md)."""
    ids = {}
    out = []
    with open(os.path.join(work, side + '-trace.txt')) as f:
        for line in f:
            line = line.rstrip()
            if not line:
                continue
            words = line.split(' ')
            if len(words) > 2 and words[0] == 'trace' and words[1] == 'id':
                words[2] = '#%d' % ids.setdefault(words[2], len(ids) + 1)
            out.append(' '.join(words))
    return out


def lines_compare(what, k, d):
    """[] when the kernel's lines k and nftdp's d are the same; else their
    counts and the first line that differs"""
    if k == d:
        return []
    diffs = ['%s: kernel printed %d lines, nftdp %d' % (what, len(k), len(d))]
    for i in range(max(len(k), len(d))):
        a = k[i] if i < len(k) else '-'
        b = d[i] if i < len(d) else '-'
        if a != b:
            diffs += ['  line %d kernel: %s' % (i + 1, a), '  line %d nftdp:  %s' % (i + 1, b)]
            break
    return diffs


def trace_compare(work):
    return lines_compare('nft monitor trace', trace_lines(work, 'kernel'),
                         trace_lines(work, 'nftdp'))


def trace_monitor_ns():
    """nft prints iif/oif names from its own namespace's interfaces, and
    nftdp names port P ifindex P+1: in NS_MON lo (ifindex 1) is renamed
    dp0 and a veth dp1 gets ifindex 2, so the names are the ports'."""
    T.netns_add(NS_MON, ipv6=False, timeout=STEP_TIMEOUT)
    nsx(NS_MON, 'ip', 'link', 'set', 'lo', 'name', 'dp0')
    nsx(NS_MON, 'ip', 'link', 'add', 'dp1', 'index', '2', 'type', 'veth', 'peer', 'name', 'x1',
        'index', '3')


# ---------------------------------------------------------------- nflog

NFLOG_LISTENER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'nflog_listen.py')


def nflogged(recipe):
    """NFLOG = ['GROUP[:QTHRESH[:FLAGS[:RANGE]]]', ...]: nflog_listen.py
    binds these groups on each side while the tester sends (two-way
    cases, so that nftdp runs live), and what it prints (config answers,
    then every NFULNL_MSG_PACKET decoded) must be the same."""
    return getattr(recipe, 'NFLOG', None)


def nflog_start(ns, env, work, side, recipe):
    path = os.path.join(work, side + '-nflog.txt')
    p = subprocess.Popen(T.in_ns(ns) + ['/usr/bin/python3', NFLOG_LISTENER, path] +
                         list(recipe.NFLOG), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=open(path + '.err', 'w'), env=env,
                         start_new_session=True)
    _live.append(p)
    deadline = time.monotonic() + STEP_TIMEOUT
    while time.monotonic() < deadline:
        if p.poll() is not None:
            _live.remove(p)
            with open(path + '.err') as f:
                raise RuntimeError('%s: nflog listener exited %d: %s' %
                                   (side, p.returncode, f.read()[-400:]))
        if os.path.exists(path):
            with open(path) as f:
                if 'ready\n' in f.read():
                    return p
        time.sleep(0.05)
    T.kill_group(p)
    _live.remove(p)
    raise RuntimeError('%s: nflog listener not ready' % side)


def nflog_stop(p):
    """The kernel flushes a batch after its timeout (1 s by default):
    wait past it, then SIGTERM."""
    time.sleep(1.3)
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=STEP_TIMEOUT)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        T.kill_group(p)
    finally:
        _live.remove(p)


def bridge_dev_as_port(line):
    """A kernel line of the bridge family as nftdp writes it (recipe
    NFLOG_BRIDGE_DEV, docs/differences.md): __build_packet_message puts the
    port as physindev/physoutdev and the bridge device as indev/outdev;
    nftdp's bridge has no device, so the port is indev/outdev. Each
    attribute dropped is 8 bytes less in the packet's length."""
    import re
    dropped = 0
    for d in ('in', 'out'):
        m = re.search(r' phys%sdev (\S+) %sdev \S+' % (d, d), line)
        if m:
            line = line[:m.start()] + ' %sdev %s' % (d, m.group(1)) + line[m.end():]
            dropped += 1
    m = re.match(r'packet len (\d+) ', line)
    if m and dropped:
        line = 'packet len %d ' % (int(m.group(1)) - 8 * dropped) + line[m.end():]
    return line


def nflog_compare(work, recipe=None):
    def lines(side):
        with open(os.path.join(work, side + '-nflog.txt')) as f:
            return [line.rstrip('\n') for line in f]
    kernel = lines('kernel')
    if getattr(recipe, 'NFLOG_BRIDGE_DEV', None):
        kernel = [bridge_dev_as_port(line) for line in kernel]
    return lines_compare('nflog listener', kernel, lines('nftdp'))


# ---------------------------------------------------------------- nftdp side

def has_option(build, *opts):
    """Whether BUILD/nftdp knows these options (their names are in the binary)."""
    exe = os.path.join(build, 'nftdp')
    if not os.access(exe, os.X_OK):
        return False
    with open(exe, 'rb') as f:
        data = f.read()
    return all(opt in data for opt in opts)


def nftdp_available(build):
    return has_option(build, b'exit-on-idle', b'listing-json', b'router', b'wire')


def nftdp_side(build, case, work, burst=None, rx=None, extra=(), recipe=None, frames=None):
    """Offline replay: rx maps a port to its capture (default: the case's
    capture on dp0, nothing on dp1); burst is nftdp's --burst; extra: more
    nftdp options (--daemon-arg). A recipe with MIRROR_ROUTES = True (fib)
    runs nftdp with --mirror-routes inside a fresh copy of the kernel
    side's DUT namespace, so its mirror holds the kernel's addresses and
    routes (the pcap ports do not care where they run)."""
    out = {p: os.path.join(work, 'nftdp-%s.pcap' % p) for p in ('dp0', 'dp1')}
    empty = os.path.join(work, 'empty.pcap')
    write_pcap(empty, [])
    rx = rx or {'dp0': os.path.join(work, 'in.pcap'), 'dp1': empty}
    after = os.path.join(work, 'after.json')
    stats = os.path.join(work, 'stats.json')
    # nft resolves interface names where it runs, and nftdp names port P
    # ifindex P+1: a namespace where dp1 is ifindex 2 lets `fwd to "dp1"`
    # through (dp0 cannot be 1, that is lo's). One per replay.
    delete_namespaces()
    mirror = getattr(recipe, 'MIRROR_ROUTES', False)
    if mirror:
        dut_setup(recipe, frames)
        ns = NS_DUT
    else:
        ns = NS_NFTDP
        sh(['ip', 'netns', 'add', NS_NFTDP])
        nsx(NS_NFTDP, 'ip', 'link', 'add', 'dp1', 'index', '2', 'type', 'veth',
            'peer', 'name', 'dp0', 'index', '3')
    prefix = 'nftdp-diff-%d' % PID
    argv = T.in_ns(ns) + [os.path.join(build, 'nftdp')] + T.eal_args(
        prefix, ['net_pcap%d,rx_pcap=%s,tx_pcap=%s' % (i, rx[p], out[p])
                 for i, p in enumerate(('dp0', 'dp1'))], log_level=None)
    argv += ['--', '--socket', os.path.join(work, 'nl.sock'), '--wire', '0:1',
             *([] if bridged(recipe) else ['--router']),
             '--ifname', '0=dp0', '--ifname', '1=dp1', *ruleset_args(case),
             '--exit-on-idle', str(IDLE_MS), '--listing-json', after, '--stats-json', stats]
    if burst:
        argv += ['--burst', str(burst)]
    if mirror:
        argv += ['--mirror-routes']
    argv += list(extra)
    if has_option(build, b'ifaddr'):
        # the DUT's addresses: the source of ICMP errors, subnet broadcasts
        for port, dev in enumerate(('dp0', 'dp1')):
            for a in DUT_ADDR[dev]:
                argv += ['--ifaddr', '%d=%s' % (port, a)]
    try:
        sh(argv, timeout=40)
    finally:
        T.rm_runtime(prefix)
    with open(after) as f:
        listing = json.load(f)
    check_flow_cache(stats)
    return {p: read_pcap(out[p]) for p in out}, listing


def check_flow_cache(stats):
    """With --flow-cache-verify every cache hit was judged by the chains
    too: a disagreement is a cache bug even when the packets came out
    right."""
    try:
        with open(stats) as f:
            fc = json.load(f).get('flow_cache', {})
    except (OSError, ValueError):
        return
    if fc.get('mismatches'):
        raise RuntimeError('flow cache: %d hits the chains judged otherwise'
                           % fc['mismatches'])


def offline_two_way(build):
    """Whether nftdp replays captures on several ports in capture-time
    order (docs/dataplane.md, "Offline replay")."""
    return has_option(build, b'capture-time order')


def nftdp_two_way_offline(build, case, recipe, frames, work, burst, extra=()):
    """A two-way case replayed offline: each side's frames in its port's
    capture, stamped in the case's order, merged by time; runs of one
    side's packets arrive as bursts. MIRROR_ROUTES as for a one-way case
    (h323's call forwarding looks routes up: cases 346-347)."""
    sides = sides_of(recipe)
    rx = {}
    for side in ('dp0', 'dp1'):
        path = os.path.join(work, 'in-%s.pcap' % side)
        idx = [i for i, s in enumerate(sides) if s == side]  # stamped as in the whole case
        write_pcap(path, [frames[i] for i in idx],
                   stamp=lambda k: (1700000000 + idx[k] // 1000, (idx[k] % 1000) * 1000))
        rx[side] = path
    if getattr(recipe, 'MIRROR_ROUTES', False):
        return nftdp_side(build, case, work, burst, rx, extra, recipe=recipe, frames=frames)
    return nftdp_side(build, case, work, burst, rx, extra)


def nftdp_argv(build, case, work, bridge=False):
    """nftdp's options common to both modes: wire, router (not for a bridge
    case), names, addresses, the ruleset, and the listing at exit."""
    argv = ['--', '--socket', os.path.join(work, 'nl.sock'), '--wire', '0:1',
            *([] if bridge else ['--router']),
            '--ifname', '0=dp0', '--ifname', '1=dp1', *ruleset_args(case),
            '--listing-json', os.path.join(work, 'after.json'),
            '--stats-json', os.path.join(work, 'stats.json')]
    if has_option(build, b'ifaddr'):
        # the DUT's addresses: the source of ICMP errors, subnet broadcasts,
        # masquerade's address
        for port, dev in enumerate(('dp0', 'dp1')):
            for a in DUT_ADDR[dev]:
                argv += ['--ifaddr', '%d=%s' % (port, a)]
    return argv


def live_mirror_setup(recipe):
    """MIRROR_ROUTES in a live two-way case (h323's call forwarding,
    346, 347, 349): NS_NFTDP gets the DUT's IPv4 addresses and routes for
    nftdp's --mirror-routes, and its IPv6 ones where the case routes IPv6
    (a ROUTES entry `-6 ...`: 349). Its own kernel, forwarding off, still
    sends nothing: no packet of the cases is for its addresses, and one it
    cannot deliver is dropped without an ICMP error (ip_error; IPv6 drops
    it silently). IPv6 comes on per device with no link-local address, no
    DAD and MLD's reports sent at once, before nftdp and the tester
    start, as on the DUT."""
    v6 = any(r.startswith('-6') for r in getattr(recipe, 'ROUTES', []))
    nsx(NS_NFTDP, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=0')
    for dev in ('dp0', 'dp1'):
        if v6:
            nsx(NS_NFTDP, 'ip', 'link', 'set', dev, 'addrgenmode', 'none')
            nsx(NS_NFTDP, 'sysctl', '-q', '-w', 'net.ipv6.conf.%s.accept_ra=0' % dev,
                'net.ipv6.conf.%s.router_solicitations=0' % dev,
                'net.ipv6.conf.%s.mldv1_unsolicited_report_interval=1' % dev,
                'net.ipv6.conf.%s.mldv2_unsolicited_report_interval=1' % dev,
                'net.ipv6.conf.%s.forwarding=0' % dev,
                'net.ipv6.conf.%s.disable_ipv6=0' % dev)
        for a in DUT_ADDR[dev]:
            if ':' not in a:
                nsx(NS_NFTDP, 'ip', 'addr', 'add', a, 'dev', dev)
            elif v6:
                nsx(NS_NFTDP, 'ip', 'addr', 'add', a, 'dev', dev, 'nodad')
        for r in EXTRA_ROUTES[dev]:
            if ':' not in r or v6:
                nsx(NS_NFTDP, 'ip', 'route', 'add', r, 'dev', dev)
    for r in getattr(recipe, 'ROUTES', []):
        if v6 or not r.startswith('-6'):
            nsx(NS_NFTDP, 'ip', *r.split())
    if v6:
        time.sleep(0.2)  # MLD's reports out before anyone listens


def nftdp_live_side(build, case, recipe, work, extra=()):
    """Two-way cases: the order of packets across two ports is lost in an
    offline replay, so nftdp runs live. In NS_NFTDP (IPv6 off, no addresses:
    its kernel sends nothing) veths dp1 (ifindex 2) and dp0 (ifindex 3) have
    their peers t1/t0 in a fresh NS_TESTER; nftdp drives dp0/dp1 through
    net_af_packet and the same tester sends and records on t0/t1 with the
    same gaps as on the kernel side. SIGTERM ends nftdp, which then writes
    its listing."""
    delete_namespaces()
    for ns in (NS_NFTDP, NS_TESTER):
        T.netns_add(ns, ipv6=False, timeout=STEP_TIMEOUT)
    for dp, t, idx in (('dp1', 't1', '2'), ('dp0', 't0', '3')):
        T.veth(NS_NFTDP, dp, t, peer_ns=NS_TESTER, index=idx, mac=MAC[dp], peer_mac=MAC[t])
    if getattr(recipe, 'MIRROR_ROUTES', False):
        live_mirror_setup(recipe)
        extra = list(extra) + ['--mirror-routes']
    prefix = 'nftdp-diff-%d' % PID
    eal = T.eal_args(prefix, ['net_af_packet0,iface=dp0', 'net_af_packet1,iface=dp1'])
    # its own session: killed as a group by cleanup() (_live) on a signal
    d = T.Daemon(build, eal, nftdp_argv(build, case, work, bridged(recipe))[1:] +
                 ['--workers', '1'] + list(extra),
                 prefix,
                 os.path.join(work, 'nftdp.log'), ns=NS_NFTDP,
                 pid_path=os.path.join(work, 'nftdp.pid'), limit=CASE_TIMEOUT, session=True)
    p = d.proc
    _live.append(p)
    mon = lst = None
    try:
        # started once the ruleset is loaded and the workers announced
        d.wait_started(timeout=STEP_TIMEOUT)
        if osf_fingerprints(recipe):
            errs = osf_run([], 'add', osf_fingerprints(recipe), shim=True,
                           env=T.nft_env(os.path.join(work, 'nl.sock'), shim=T.shim_path(build)))
            if any(errs):
                raise RuntimeError('osf: fingerprints not added to nftdp (errno): %s' % errs)
        if traced(recipe) or nflogged(recipe):
            trace_monitor_ns()
        if traced(recipe):
            mon = trace_start(NS_MON, T.nft_argv(build),
                              T.nft_env(os.path.join(work, 'nl.sock')), work, 'nftdp')
        if nflogged(recipe):
            # the listener through the shim, where ifindex P+1 is port P's name
            lst = nflog_start(NS_MON, T.nft_env(os.path.join(work, 'nl.sock'),
                                                shim=T.shim_path(build)), work, 'nftdp', recipe)
        run_tester(work, recipe, 'nftdp')
        if mon:
            trace_stop(mon)
            mon = None
        if lst:
            nflog_stop(lst)
            lst = None
        if ipset_saved(recipe):
            # the stock ipset through the shim, while nftdp still runs
            r = subprocess.run(['ipset', 'save'], capture_output=True, text=True,
                               timeout=STEP_TIMEOUT,
                               env=T.nft_env(os.path.join(work, 'nl.sock'),
                                             shim=T.shim_path(build)))
            with open(os.path.join(work, 'nftdp-ipset.txt'), 'w') as f:
                f.write(r.stdout if r.returncode == 0 else 'ipset save failed: ' + r.stderr)
        rc = d.stop(wait=STEP_TIMEOUT)
        if rc != 0:
            raise RuntimeError('nftdp exit %d: %s' % (rc, d.log().strip()[-600:]))
    finally:
        if mon:
            trace_stop(mon)
        if lst:
            nflog_stop(lst)
        if p.poll() is None:
            T.kill_group(p)
        _live.remove(p)
        delete_namespaces()
        T.rm_runtime(prefix)
    with open(os.path.join(work, 'after.json')) as f:
        listing = json.load(f)
    check_flow_cache(os.path.join(work, 'stats.json'))
    return {p: read_pcap(os.path.join(work, 'nftdp-%s.pcap' % p)) for p in ('dp0', 'dp1')}, listing


# ---------------------------------------------------------------- comparison

def stateful_values(obj, prefix=''):
    """Every counter's packets/bytes and every quota's used bytes inside obj."""
    vals = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == 'counter' and isinstance(v, dict) and 'packets' in v:
                vals.append('%scounter packets %d bytes %d' % (prefix, v['packets'], v['bytes']))
            elif k == 'quota' and isinstance(v, dict) and 'used' in v:
                vals.append('%squota used %d %s' % (prefix, v['used'], v.get('used_unit', 'bytes')))
            else:
                vals += stateful_values(v, prefix)
    elif isinstance(obj, list):
        for v in obj:
            vals += stateful_values(v, prefix)
    return vals


def stateless(obj):
    """obj without its counter and quota values (set elements by key)."""
    if isinstance(obj, dict):
        return {k: stateless(v) for k, v in obj.items() if k not in ('counter', 'quota', 'expires')}
    if isinstance(obj, list):
        return [stateless(v) for v in obj]
    return obj


def bare_elem(e):
    """{"elem": {"val": V}} once the stateful parts are gone is just V, as
    nft writes an element that has nothing else."""
    if isinstance(e, dict) and list(e) == ['elem'] and isinstance(e['elem'], dict) \
            and list(e['elem']) == ['val']:
        return e['elem']['val']
    return e


def counters_of(listing):
    """name -> state: rules by table/chain/position, objects by name."""
    res, pos = {}, {}
    for item in listing.get('nftables', []):
        (kind, o), = item.items()
        if kind == 'rule':
            chain = (o['family'], o['table'], o['chain'])
            pos[chain] = pos.get(chain, 0) + 1
            key = 'rule %s %s %s #%d' % (chain + (pos[chain],))
            vals = stateful_values(o.get('expr', []))
        elif kind in ('counter', 'quota'):
            key = '%s %s %s %s' % (kind, o['family'], o['table'], o['name'])
            vals = stateful_values({kind: o})
        elif kind in ('set', 'map'):
            # which elements exist too: the packet path adds some (add/update @set)
            key = '%s %s %s %s' % (kind, o['family'], o['table'], o['name'])
            elems = sorted(json.dumps(bare_elem(stateless(e)), sort_keys=True)
                           for e in o.get('elem', []))
            vals = (['elements ' + ', '.join(elems)] if elems else []) + stateful_values(o.get('elem', []))
        else:
            continue
        if vals:
            res[key] = vals
    return res


def compare(kernel, nftdp, egress_only=False, known=None):
    """known: {key: why} of a recipe's KNOWN_DIFFERENCES, each compared
    narrowly: a counters_of key (a set: only which elements it holds, not
    their counters; a rule: not its counter), or 'packet PORT #I' (that
    egress packet only for being there, with the same ethertype and length).
    A known difference that no longer differs is reported, so that it is
    removed (docs/differential.md, docs/differences.md)."""
    known = known or {}
    diffs = []
    (kegress, klist), (degress, dlist) = kernel, nftdp
    for port in ('dp1', 'dp0'):
        kf = [f for f in kegress[port] if not is_noise(f)]
        df = [f for f in degress[port] if not is_noise(f)]
        k = [egress_key(f) for f in kf]
        d = [egress_key(f) for f in df]
        for i in range(min(len(k), len(d))):
            key = 'packet %s #%d' % (port, i)
            if key in known:
                if k[i] == d[i]:
                    diffs.append('%s: known difference no longer differs' % key)
                k[i], d[i] = [(t, 'length %d' % len(b)) for t, b in (k[i], d[i])]
        if k == d:
            continue
        diffs.append('%s: kernel sent %d packets, nftdp %d' % (port, len(k), len(d)))
        for i in range(max(len(k), len(d))):
            a = k[i] if i < len(k) else None
            b = d[i] if i < len(d) else None
            if a != b:
                diffs.append('  #%d kernel: %s' % (i, describe(kf[i]) if a else '-'))
                diffs.append('  #%d nftdp:  %s' % (i, describe(df[i]) if b else '-'))
                if a and b and len(a[1]) == len(b[1]):
                    at = [j for j in range(len(a[1])) if a[1][j] != b[1][j]]
                    diffs.append('      differing L3 bytes at %s' % at[:8])
                break
    if egress_only:
        return diffs
    kc, dc = counters_of(klist), counters_of(dlist)
    for key in known:
        if key.startswith('packet '):
            continue
        if kc.get(key) == dc.get(key):
            diffs.append('%s: known difference no longer differs' % key)
        for c in (kc, dc):
            if key in c:
                c[key] = [v for v in c[key] if v.startswith('elements ')]
    for key in sorted(set(kc) | set(dc)):
        if kc.get(key) != dc.get(key):
            diffs.append('%s: kernel %s, nftdp %s' % (key, kc.get(key), dc.get(key)))
    return diffs


def summary(kernel):
    egress, listing = kernel
    n = {p: len([f for f in egress[p] if not is_noise(f)]) for p in egress}
    return 'dp1 %d, dp0 %d packets, %d counters' % (n['dp1'], n['dp0'], len(counters_of(listing)))


def check_expectation(recipe, kernel):
    """Each recipe says how many packets the kernel sends out of each port
    (EXPECT = {'dp1': N, 'dp0': M}), so a broken kernel setup (or a capture
    that no longer does what its case is about) fails even without nftdp."""
    egress, _ = kernel
    got = {p: len([f for f in egress[p] if not is_noise(f)]) for p in egress}
    want = dict({'dp0': 0, 'dp1': 0}, **recipe.EXPECT)
    if got != want:
        return 'kernel sent %s, the recipe expects %s' % (got, want)
    return None


# ---------------------------------------------------------------- driver

def is_iptables(case):
    """A case whose ruleset is an iptables-restore file (.v4 or .v6; .eb: ebtables),
    loaded with iptables-nft-restore on both sides (docs/iptables.md)."""
    return not os.path.exists(case + '.nft')


def ruleset_file(case):
    for ext in ('.nft', '.v4', '.v6', '.eb'):
        if os.path.exists(case + ext):
            return case + ext
    raise RuntimeError('no ruleset for ' + case)


def restore_tool(case):
    f = ruleset_file(case)
    if f.endswith('.eb'):
        return 'ebtables-nft-restore'
    return 'ip6tables-nft-restore' if f.endswith('.v6') else 'iptables-nft-restore'


def ruleset_args(case):
    """nftdp's option that loads the case's ruleset at start."""
    if is_iptables(case):
        ipset = ['--ipset-restore', case + '.ipset'] if os.path.exists(case + '.ipset') else []
        # .nftpre: an nft ruleset loaded before the sets and iptables'
        # rules, as kernel_side loads it
        pre = ['--ruleset', case + '.nftpre'] if os.path.exists(case + '.nftpre') else []
        return pre + ipset + ['--iptables-restore', ruleset_file(case)]
    return ['--ruleset', case + '.nft']


def list_cases(case_dir, names):
    all_cases = sorted(f[:-len(os.path.splitext(f)[1])] for f in os.listdir(case_dir)
                       if os.path.splitext(f)[1] in ('.nft', '.v4', '.v6', '.eb'))
    if not names:
        return all_cases
    return [c for c in all_cases if any(c.startswith(n) for n in names)]


# what in a case's ruleset makes its result depend on time: rates, timeouts,
# expiry, `last`, and iptables' rate and recency matches
TIMED = re.compile(r'\b(limit|timeout|expires|expiration|meter|last|hashlimit|recent)\b')


def runs_alone(case_dir, name):
    """Whether a case runs by itself under --jobs: one whose result depends
    on the time between packets (PACED_ONLY, a timed ruleset), that
    watches a live daemon's events (trace, nflog), or that changes what the
    kernel holds for every namespace (osf); SERIAL = 'why' says so too.
    Two-way cases need not: each packet waits for what it caused (the
    whole corpus agreed so at load 12, its two-way cases one at a time)."""
    recipe = load_recipe(os.path.join(case_dir, name + '.py'))
    if (traced(recipe) or nflogged(recipe) or osf_fingerprints(recipe) or
            hasattr(recipe, 'PACED_ONLY') or hasattr(recipe, 'SERIAL')):
        return True
    for f in os.listdir(case_dir):
        if f.startswith(name + '.') and not f.endswith('.py'):
            with open(os.path.join(case_dir, f), errors='replace') as r:
                if TIMED.search(r.read()):
                    return True
    return False


def run_shards(args, cases, tally):
    """--jobs N: cases dealt round-robin to N child runs of this script,
    each with its own namespaces and daemons (named by its pid); their
    lines are passed on whole, a case's detail lines with it, and their
    counts added to tally. Returns the cases a child did not report (it
    died): the caller runs them."""
    argv = [sys.executable, os.path.abspath(__file__), args.build, '--case-dir', args.case_dir]
    for flag, on in (('--kernel-only', args.kernel_only), ('-v', args.verbose),
                     ('--egress-only', args.egress_only)):
        argv += [flag] if on else []
    argv += ['--keep', args.keep] if args.keep else []
    argv += ['--bursts', args.bursts] if args.bursts else []
    argv += ['--daemon-arg=' + a for a in args.daemon_arg]
    argv += ['--burst-daemon-arg=' + a for a in args.burst_daemon_arg]
    jobs = min(args.jobs, len(cases))
    tallies = []
    for _ in range(jobs):
        fd, path = tempfile.mkstemp(prefix='nftdp-diff-tally-')
        os.close(fd)
        tallies.append(path)
    reported = set()
    for k in range(jobs):
        _shards.append(subprocess.Popen(argv[:3] + cases[k::jobs] + argv[3:] +
                                        ['--tally-json', tallies[k]],
                                        stdout=subprocess.PIPE, text=True))
    pending = {p.stdout: [] for p in _shards}
    while pending:
        for f in select.select(list(pending), [], [])[0]:
            line = f.readline()
            record = pending[f]
            if line and line.startswith(' ') and record:
                record.append(line)
                continue
            if record:  # the next case's line, or the end: this one whole
                print(''.join(record), end='', flush=True)
                if record[0].split():  # (not a stray empty line)
                    reported.add(record[0].split()[0])
            if line:
                pending[f] = [line]
            else:
                del pending[f]
    for p, path in zip(_shards, tallies):
        p.wait()
        try:
            with open(path) as f:
                for k, v in json.load(f).items():
                    tally[k] += v
        except (OSError, ValueError):
            print('a --jobs shard exited %d without its counts' % p.returncode, flush=True)
        os.unlink(path)
    del _shards[:]
    return [c for c in cases if c not in reported]


def main():
    if len(sys.argv) in (4, 5) and sys.argv[1] == '--tester':
        tester_main(*sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description='kernel-differential dataplane tests')
    ap.add_argument('build')
    ap.add_argument('cases', nargs='*')
    ap.add_argument('--kernel-only', action='store_true', help='do not run nftdp')
    ap.add_argument('-v', '--verbose', action='store_true', help='print every case\'s counters')
    ap.add_argument('--egress-only', action='store_true',
                    help='compare egress packets only, not counters')
    ap.add_argument('--case-dir', default=CASES, help='take the cases from this directory')
    ap.add_argument('--keep', help='keep every case\'s pcaps and listings under this directory')
    ap.add_argument('--bursts', default='',
                    help='comma-separated nftdp --burst sizes: each case is also replayed '
                         'offline with each, whole captures in bursts (two-way cases too, '
                         'where nftdp merges ports by capture time); all must agree')
    ap.add_argument('--daemon-arg', action='append', default=[], metavar='ARG',
                    help='pass ARG to every nftdp run (repeatable; --daemon-arg=--flow-cache=0: '
                         'with "=", as ARG starts with a dash)')
    ap.add_argument('--burst-daemon-arg', action='append', default=[], metavar='ARG',
                    help='pass ARG to the --bursts replays only, after --daemon-arg '
                         '(repeatable); the Meson test gives --flow-cache=0 here, so the paced '
                         'pass runs with the per-flow verdict cache and the burst pass without')
    ap.add_argument('--jobs', type=int, default=1, metavar='N',
                    help='run the cases that do not depend on time or pacing in N processes '
                         'at once, then the rest one by one (runs_alone)')
    ap.add_argument('--tally-json', help=argparse.SUPPRESS)  # a --jobs shard's counts
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    if not T.is_root():
        T.skip('SKIP: needs root (network namespaces)')
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    signal.signal(signal.SIGALRM, on_alarm)
    atexit.register(cleanup)
    use_nftdp = not args.kernel_only
    if use_nftdp and not args.tally_json:  # (a --jobs shard uses its parent's)
        _hugepages[0] = T.hugepages_reserve(HUGEPAGES)
    if use_nftdp and not nftdp_available(args.build):
        # a missing daemon is a failure, never a quiet kernel-only pass:
        # --kernel-only is the one way to run the kernel side alone
        print('FAIL: nftdp not available (%s/nftdp missing or lacks --wire/--router/'
              '--exit-on-idle/--listing-json); --kernel-only runs the kernel side alone'
              % args.build, flush=True)
        return 1
    bursts = [int(b) for b in args.bursts.split(',') if b]
    cases = list_cases(args.case_dir, args.cases)
    if not cases:
        print('no such case: %s' % ' '.join(args.cases))
        return 2
    tally = {'agree': 0, 'DIFFER': 0, 'kernel-only': 0, 'ERROR': 0, 'skipped': 0}
    t_start = time.monotonic()
    if args.jobs > 1:
        alone = [c for c in cases if runs_alone(args.case_dir, c)]
        cases = alone + run_shards(args, [c for c in cases if c not in alone], tally)
    run_cases(args, cases, bursts, use_nftdp, tally)
    if args.tally_json:
        with open(args.tally_json, 'w') as f:
            json.dump(tally, f)
        return 0
    print('%d cases: %d agree, %d differ, %d kernel-only, %d errors%s [%.0fs]' % (
        sum(tally.values()), tally['agree'], tally['DIFFER'], tally['kernel-only'],
        tally['ERROR'], ', %d skipped' % tally['skipped'] if tally['skipped'] else '',
        time.monotonic() - t_start))
    return 1 if tally['DIFFER'] or tally['ERROR'] else 0


def run_cases(args, cases, bursts, use_nftdp, tally):
    """Runs cases one after another in this process, a line each, counted
    in tally."""
    for name in cases:
        case = os.path.join(args.case_dir, name)
        work = tempfile.mkdtemp(prefix='nftdp-diff-')
        _cleanup_dirs.append(work)
        t0 = time.monotonic()
        signal.alarm(CASE_TIMEOUT)
        try:
            recipe = load_recipe(case + '.py')
            global _compare_l2
            _compare_l2 = bridged(recipe)
            if bridged(recipe) and two_way(recipe):
                raise ValueError('a bridge case is one-way (for now)')
            frames = frames_of(recipe)
            write_pcap(os.path.join(work, 'in.pcap'), frames)
            kernel = kernel_side(case, recipe, frames, work)
            unexpected = check_expectation(recipe, kernel)
            if unexpected:
                verdict, detail = 'ERROR', ': ' + unexpected
            elif use_nftdp:
                known = getattr(recipe, 'KNOWN_DIFFERENCES', {})
                # an nflog listener binds before packets flow: live, as
                # an offline replay starts at once (a bridge case too)
                live = two_way(recipe) or (bridged(recipe) and nflogged(recipe))
                nftdp = nftdp_live_side(args.build, case, recipe, work, args.daemon_arg) \
                    if live else nftdp_side(args.build, case, work,
                                                       extra=args.daemon_arg,
                                                       recipe=recipe, frames=frames)
                diffs = compare(kernel, nftdp, args.egress_only, known)
                if traced(recipe):
                    diffs += trace_compare(work)
                if nflogged(recipe):
                    diffs += nflog_compare(work, recipe)
                if ipset_saved(recipe) and two_way(recipe):
                    diffs += ipset_compare(work)
                for burst in bursts:
                    if two_way(recipe) and not offline_two_way(args.build):
                        continue
                    if hasattr(recipe, 'PACED_ONLY'):
                        # the kernel's result depends on the time between
                        # packets, which an offline replay does not keep
                        continue
                    extra = args.daemon_arg + args.burst_daemon_arg
                    nftdp = nftdp_two_way_offline(args.build, case, recipe, frames, work,
                                                  burst, extra) if two_way(recipe) \
                        else nftdp_side(args.build, case, work, burst, extra=extra,
                                        recipe=recipe, frames=frames)
                    label = 'burst %d%s' % (burst, ' (%s)' % ' '.join(extra) if extra else '')
                    diffs += ['%s: %s' % (label, d)
                              for d in compare(kernel, nftdp, args.egress_only, known)]
                verdict, detail = ('agree', '') if not diffs else ('DIFFER', '\n    ' + '\n    '.join(diffs))
                if bursts and hasattr(recipe, 'PACED_ONLY'):
                    detail += '\n    not replayed in bursts: ' + recipe.PACED_ONLY
                for key, why in sorted(known.items()):
                    detail += '\n    known difference, %s: %s' % (key, why)
                if nflogged(recipe) and getattr(recipe, 'NFLOG_BRIDGE_DEV', None):
                    detail += '\n    known difference, nflog devices: ' + recipe.NFLOG_BRIDGE_DEV
            else:
                verdict, detail = 'kernel-only', ''
            detail = ' (%s)%s' % (summary(kernel), detail) if not unexpected else detail
            if args.verbose:
                for k, v in sorted(counters_of(kernel[1]).items()):
                    detail += '\n    kernel %s: %s' % (k, '; '.join(v))
        except CaseSkip as e:  # counted apart: not a failure
            verdict, detail = 'skipped', ': %s' % e
        except Exception as e:  # one broken case must not stop the corpus
            verdict, detail = 'ERROR', ': %s' % e
        finally:
            signal.alarm(0)
            delete_namespaces()
        tally[verdict] += 1
        print('%-32s %s [%.1fs]%s' % (name, verdict, time.monotonic() - t0, detail), flush=True)
        if args.keep:
            dst = os.path.join(args.keep, name)
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(work, dst, ignore=shutil.ignore_patterns('*.sock'))
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
