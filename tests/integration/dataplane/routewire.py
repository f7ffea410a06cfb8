# SPDX-License-Identifier: BSD-3-Clause
"""The three-port wire of the --route tests (route_live.py, route_rules.py):
UDP probes tagged in their payload go into dp0 through the tester's t0, and
a thread reads what nftdp puts out on t0, t1 and t2."""

import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

# seconds a route or neighbour change may take to show: milliseconds on an
# idle machine (printed), but `ip route replace` alone took 280 ms on a
# loaded CI host and a replace once showed after 1.2 s there (the worker
# that must pass the old table's grace period was not scheduled)
BUDGET = 3.0
MAC = {n: '02:00:00:00:%02x:%02x' % (0xd0 + i // 3 * 0x10, i % 3) for i, n in
       enumerate(('dp0', 'dp1', 'dp2', 't0', 't1', 't2'))}


def probe6(src, dst, tag):
    payload = b'rtlive' + struct.pack('!I', tag)
    ulen = 8 + len(payload)
    s6, d6 = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
    udp = struct.pack('!HHHH', 40000, 9, ulen, 0) + payload
    ph = s6 + d6 + struct.pack('!IxxxB', ulen, 17)
    udp = udp[:6] + struct.pack('!H', T.inet_csum(ph + udp) or 0xffff) + udp[8:]
    ip = struct.pack('!IHBB', 0x60000000, ulen, 17, 64) + s6 + d6
    return T.mac_bytes(MAC['dp0']) + T.mac_bytes(MAC['t0']) + b'\x86\xdd' + ip + udp


def probe(src, dst, tag, sport=40000):
    payload = b'rtlive' + struct.pack('!I', tag)
    udp = struct.pack('!HHHH', sport, 9, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), tag & 0xffff, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack('!H', T.inet_csum(ip)) + ip[12:]
    return T.mac_bytes(MAC['dp0']) + T.mac_bytes(MAC['t0']) + b'\x08\x00' + ip + udp


class Wire:
    """Probes into dp0 through t0; what comes out on t0, t1, t2, read by a thread."""

    def __init__(self, ns):
        self.tx = T.packet_socket(ns, 't0')
        self.rx = {d: T.packet_socket(ns, d) for d in ('t0', 't1', 't2')}
        for s in self.rx.values():
            # a lagging reader thread must not lose what nftdp sent
            s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
            s.settimeout(0.01)
        self.lock = threading.Lock()
        self.seen = []  # (when, dev, tag, frame)
        self.icmp = []  # (when, frame) ICMP into t0
        self.icmp6 = []  # (when, frame) ICMPv6 into t0
        self.icmp_other = []  # (when, dev, frame) ICMP out of t1, t2
        self.stop = False
        self.th = threading.Thread(target=self.loop, daemon=True)
        self.th.start()
        self.tag = 0

    def loop(self):
        while not self.stop:
            for d, s in self.rx.items():
                while True:
                    try:
                        f, addr = s.recvfrom(4096)
                    except (socket.timeout, BlockingIOError):
                        break
                    if addr[2] == socket.PACKET_OUTGOING:
                        continue
                    now = time.monotonic()
                    i = f.find(b'rtlive')
                    with self.lock:
                        if len(f) > 34 and f[12:14] == b'\x08\x00' and f[23] == 1:
                            if d == 't0':
                                self.icmp.append((now, f))
                            else:
                                self.icmp_other.append((now, d, f))
                        elif d == 't0' and len(f) > 62 and f[12:14] == b'\x86\xdd' and \
                                f[20] == 58:
                            self.icmp6.append((now, f))
                        elif i == 62 and f[12:14] == b'\x86\xdd' and f[20] == 17 and \
                                len(f) >= 72:
                            self.seen.append((now, d, struct.unpack('!I', f[68:72])[0], f))
                        elif i >= 0 and len(f) >= i + 10 and f[12:14] == b'\x08\x00' and \
                                f[23] == 17 and i == 42:
                            self.seen.append((now, d, struct.unpack('!I', f[i + 6:i + 10])[0],
                                              f))
                    s.settimeout(0)
                s.settimeout(0.002)

    def close(self):
        self.stop = True
        self.th.join(2)

    def send(self, dst, src='10.1.0.1', sport=40000):
        self.tag += 1
        self.tx.send(probe(src, dst, self.tag, sport))
        return self.tag

    def until6(self, dst, want_dev, budget=BUDGET):
        t0 = time.monotonic()
        while time.monotonic() - t0 < budget:
            devs, _ = self.where(self.send6(dst), wait=0.005)
            if want_dev in devs:
                return time.monotonic() - t0
        return None

    def icmp_on(self, dev, tag):
        """An ICMP error quoting probe tag that came out on dev, None yet."""
        with self.lock:
            for _, d, f in self.icmp_other:
                if d == dev and len(f) >= 48 and struct.unpack('!H', f[46:48])[0] == tag & 0xffff:
                    return f
        return None

    def send6(self, dst, src='2001:db8:1::1'):
        self.tag += 1
        self.tx.send(probe6(src, dst, self.tag))
        return self.tag

    def icmp6_for(self, tag, wait=0.15):
        """An ICMPv6 error quoting probe tag that came back to t0."""
        end = time.monotonic() + wait
        while True:
            with self.lock:
                for _, f in self.icmp6:
                    # eth 14 + ip6 40 + icmp6 8 + quoted ip6 40 + udp 8: 'rtlive' + tag
                    if len(f) >= 120 and f[110:116] == b'rtlive' and \
                            struct.unpack('!I', f[116:120])[0] == tag:
                        return f
            if time.monotonic() >= end:
                return None
            time.sleep(0.002)

    def where(self, tag, wait=0.15):
        """The devices tag came out of (after up to wait seconds) and one frame."""
        end = time.monotonic() + wait
        while True:
            with self.lock:
                hits = [(d, f) for _, d, t, f in self.seen if t == tag]
            if hits or time.monotonic() >= end:
                return [d for d, _ in hits], hits[0][1] if hits else None
            time.sleep(0.002)

    def icmp_for(self, tag, wait=0.15):
        """An ICMP error quoting probe tag (its IP id) that came back to t0."""
        end = time.monotonic() + wait
        while True:
            with self.lock:
                for _, f in self.icmp:
                    # eth 14 + ip 20 + icmp 8 + quoted ip: id at 4
                    if len(f) >= 48 and struct.unpack('!H', f[46:48])[0] == tag & 0xffff:
                        return f
            if time.monotonic() >= end:
                return None
            time.sleep(0.002)

    def until(self, dst, want_dev, budget=BUDGET):
        """Probe until a probe to dst comes out of want_dev; the seconds it took."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < budget:
            tag = self.send(dst)
            devs, _ = self.where(tag, wait=0.005)
            if want_dev in devs:
                return time.monotonic() - t0
        return None
