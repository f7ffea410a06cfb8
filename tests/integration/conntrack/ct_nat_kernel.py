#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Kernel-differential NAT test: the Linux kernel is the oracle.

    ct_nat_kernel.py CT_REPLAY [-v]

The namespaces of ct_kernel.py, with a nat table on the forwarding kernel:

    prerouting  (-100): ip daddr 10.2.0.100 tcp dport 80 dnat to 10.2.0.2:8080
                        ip6 daddr fd02::100 tcp dport 80 dnat to [fd02::2]:8080
    postrouting (100):  ip saddr 10.1.0.0/24 oif "f1" masquerade
                        ip6 saddr fd01::/64 oif "f1" masquerade

Packets of masqueraded TCP, UDP (also without checksum) and ICMP echo
flows, a destination-NATed TCP flow, and ICMP errors about masqueraded
flows, in both directions, are sent one at a time; what leaves the
kernel on the other veth is compared byte for byte (TTL and the IPv4
header checksum, or the hop limit, aside: the kernel routes, the replay
does not) with what `CT_REPLAY --nat` makes of the same packets, and the
connection tables after each packet (NATed reply tuples included) must be
equal as in ct_kernel.py. Exit 0 when all agree, 1
otherwise, 77 when not root.
"""

import os
import select
import time
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ct_kernel as K  # noqa: E402
T = K.T  # tests/lib/nftdp_test.py, which ct_kernel puts on sys.path
from scapy.all import ICMP, IP, TCP, UDP, Ether, ICMPv6DestUnreach, ICMPv6EchoReply, \
    ICMPv6EchoRequest, IPv6, Raw, raw  # noqa: E402
from scapy.layers.sctp import SCTP, SCTPChunkInit, SCTPChunkInitAck  # noqa: E402

NAT_RULESET = """table ip6 nat6 {
  chain pre { type nat hook prerouting priority -100; policy accept;
    ip6 daddr fd02::100 tcp dport 80 dnat to [fd02::2]:8080
  }
  chain post { type nat hook postrouting priority 100; policy accept;
    ip6 saddr fd01::/64 oif "f1" masquerade
  }
}
table ip nat {
  chain pre { type nat hook prerouting priority -100; policy accept;
    ip daddr 10.2.0.100 tcp dport 80 dnat to 10.2.0.2:8080
  }
  chain post { type nat hook postrouting priority 100; policy accept;
    ip saddr 10.1.0.0/24 oif "f1" masquerade
  }
}
"""
PUB, VIP = "10.2.0.1", "10.2.0.100"
PUB6, VIP6 = "fd02::1", "fd02::100"


def ip(src, dst):
    return IP(src=src, dst=dst, ttl=64)


def sequences():
    """(dir, packet) with server-side packets addressed as the kernel NATs them."""
    P = []
    # masqueraded TCP connection: handshake, data, close
    cs, ss = 1000, 50000

    def tcp(d, flags, data=b""):
        nonlocal cs, ss
        if d == 0:
            p = ip(K.C4, K.S4) / TCP(sport=3001, dport=80, flags=flags, seq=cs,
                                     ack=ss if "A" in flags else 0)
        else:
            p = ip(K.S4, PUB) / TCP(sport=80, dport=3001, flags=flags, seq=ss,
                                    ack=cs if "A" in flags else 0)
        if data:
            p = p / Raw(data)
        inc = len(data) + ("S" in flags) + ("F" in flags)
        if d == 0:
            cs += inc
        else:
            ss += inc
        return (d, p)
    P += [tcp(0, "S"), tcp(1, "SA"), tcp(0, "A"), tcp(0, "PA", b"GET /\r\n"),
          tcp(1, "PA", b"x" * 100), tcp(0, "FA"), tcp(1, "FA"), tcp(0, "A")]
    # destination NAT (and masquerade) of a TCP connection
    P += [(0, ip(K.C4, VIP) / TCP(sport=3002, dport=80, flags="S", seq=7)),
          (1, ip(K.S4, PUB) / TCP(sport=8080, dport=3002, flags="SA", seq=900, ack=8)),
          (0, ip(K.C4, VIP) / TCP(sport=3002, dport=80, flags="A", seq=8, ack=901))]
    # UDP, an ICMP port unreachable about it from the server side
    q = raw(ip(PUB, K.S4) / UDP(sport=4000, dport=53) / Raw(b"q" * 12))
    P += [(0, ip(K.C4, K.S4) / UDP(sport=4000, dport=53) / Raw(b"q" * 12)),
          (1, ip(K.S4, PUB) / UDP(sport=53, dport=4000) / Raw(b"a" * 30)),
          (1, ip(K.S4, PUB) / ICMP(type=3, code=3) / Raw(q)),
          (1, ip(K.S4, PUB) / ICMP(type=3, code=3) / Raw(q[:28]))]
    # UDP without a checksum keeps none
    u = ip(K.C4, K.S4) / UDP(sport=4001, dport=53, chksum=0) / Raw(b"z" * 8)
    P += [(0, u), (1, ip(K.S4, PUB) / UDP(sport=53, dport=4001, chksum=0) / Raw(b"y" * 8))]
    # ICMP echo, and an error quoting a TCP segment of the first connection
    P += [(0, ip(K.C4, K.S4) / ICMP(type=8, id=0x1234, seq=1) / Raw(b"ping")),
          (1, ip(K.S4, PUB) / ICMP(type=0, id=0x1234, seq=1) / Raw(b"ping"))]
    seg = raw(ip(PUB, K.S4) / TCP(sport=3001, dport=80, flags="A", seq=cs, ack=ss))
    P += [(1, ip(K.S4, PUB) / ICMP(type=3, code=4) / Raw(seg[:28]))]
    # SCTP masqueraded (the CRC32c as the kernel leaves it), an ICMP error
    # quoting it
    ini = SCTPChunkInit(init_tag=0x1234abcd, a_rwnd=65535, n_out_streams=1, n_in_streams=1,
                        init_tsn=1)
    P += [(0, ip(K.C4, K.S4) / SCTP(sport=4100, dport=36412, tag=0) / ini),
          (1, ip(K.S4, PUB) / SCTP(sport=36412, dport=4100, tag=0x1234abcd) /
           SCTPChunkInitAck(init_tag=0x5678, a_rwnd=65535, n_out_streams=1, n_in_streams=1,
                            init_tsn=1))]
    qs = raw(ip(PUB, K.S4) / SCTP(sport=4100, dport=36412, tag=0) / ini)
    P += [(1, ip(K.S4, PUB) / ICMP(type=3, code=3) / Raw(qs))]
    # IPv6: masqueraded TCP and UDP, an error about the UDP flow, echo, dnat
    i6 = IPv6
    P += [(0, i6(src=K.C6, dst=K.S6) / TCP(sport=5001, dport=80, flags="S", seq=1)),
          (1, i6(src=K.S6, dst=PUB6) / TCP(sport=80, dport=5001, flags="SA", seq=50, ack=2)),
          (0, i6(src=K.C6, dst=K.S6) / TCP(sport=5001, dport=80, flags="A", seq=2, ack=51)),
          (0, i6(src=K.C6, dst=K.S6) / UDP(sport=5002, dport=53) / Raw(b"q" * 10)),
          (1, i6(src=K.S6, dst=PUB6) / UDP(sport=53, dport=5002) / Raw(b"a" * 10))]
    q6 = raw(i6(src=PUB6, dst=K.S6) / UDP(sport=5002, dport=53) / Raw(b"q" * 10))
    P += [(1, i6(src=K.S6, dst=PUB6) / ICMPv6DestUnreach(code=4) / Raw(q6)),
          (0, i6(src=K.C6, dst=K.S6) / ICMPv6EchoRequest(id=0x55, seq=1)),
          (1, i6(src=K.S6, dst=PUB6) / ICMPv6EchoReply(id=0x55, seq=1)),
          (0, i6(src=K.C6, dst=VIP6) / TCP(sport=5003, dport=80, flags="S", seq=9)),
          (1, i6(src=K.S6, dst=PUB6) / TCP(sport=8080, dport=5003, flags="SA", seq=3, ack=10))]
    return P


def normalized(b):
    """IP bytes without what routing changes: TTL and header checksum."""
    b = bytearray(b)
    if len(b) >= 20 and b[0] >> 4 == 4:
        b[8] = 0
        b[10] = b[11] = 0
    elif len(b) >= 40 and b[0] >> 4 == 6:
        b[7] = 0
    return bytes(b)


def kernel_egress(P):
    socks = {0: K.packet_socket(K.NS["c"], "c0"), 1: K.packet_socket(K.NS["s"], "s0")}
    macs = {0: (K.MAC_C, K.fw_mac("f0")), 1: (K.MAC_S, K.fw_mac("f1"))}
    out, tables, when = [], [], []
    t0 = time.monotonic()
    for d, p in P:
        src, dst = macs[d]
        v6 = p.haslayer(IPv6)
        when.append(int((time.monotonic() - t0) * 1000))
        socks[d].send(raw(Ether(src=src, dst=dst, type=0x86DD if v6 else 0x800) / p))
        want = b"\x86\xdd" if v6 else b"\x08\x00"
        rx = socks[1 - d]
        got = "not-forwarded"
        while True:
            r, _, _ = select.select([rx], [], [], 0.5)
            if not r:
                break
            frame = rx.recv(65535)
            if len(frame) > 14 and frame[12:14] == want and frame[6:12] != \
                    bytes.fromhex(macs[1 - d][0].replace(":", "")) and \
                    not (v6 and frame[14 + 24] == 0xff) and \
                    not (v6 and frame[14 + 6] == 58 and frame[14 + 40] in (133, 134, 135, 136)):
                # (the kernel's own MLD reports and neighbour discovery are not ours)
                got = frame[14:].hex()
                break
        out.append(got)
        tables.append(K.table_kernel())
    return out, tables, when


def main():
    if not T.is_root():
        T.skip("ct_nat_kernel: needs root (scratch network namespaces)")
    P = sequences()
    try:
        K.setup(NAT_RULESET)
        theirs, tables, when = kernel_egress(P)
    finally:
        K.cleanup()
    with tempfile.NamedTemporaryFile("w", suffix=".hex", delete=False) as f:
        for (_, p), t in zip(P, when):
            f.write(f"at {t}\n" + raw(p).hex() + "\n")
        path = f.name
    try:
        lines = subprocess.run([sys.argv[1], "--nat", path], check=True, capture_output=True,
                               text=True, timeout=60).stdout.splitlines()
    finally:
        os.unlink(path)
    parts = [ln.split(" ; ") for ln in lines]
    ours = [pt[0].split()[1] if len(pt[0].split()) > 1 else "?" for pt in parts]
    our_tables = [[K.norm_entry(e) for e in pt[1:]] for pt in parts]
    tbad = 0
    for i in range(min(len(P), len(our_tables))):
        if not K.table_same(tables[i], our_tables[i]):
            tbad += 1
            if tbad <= 3:
                print(f"!! {i:3d} tables differ after {P[i][1].summary()}")
                ks, os_ = dict(tables[i]), dict(our_tables[i])
                for e in sorted(set(ks) | set(os_)):
                    if ks.get(e) is None or os_.get(e) is None or abs(ks[e] - os_[e]) > 2:
                        print(f"       kernel {ks.get(e)!s:>6} nftdp {os_.get(e)!s:>6} {e}")
    bad = 0
    for i, ((d, p), k, o) in enumerate(zip(P, theirs, ours)):
        same = k == o or (k != "not-forwarded" and o != "dropped" and
                          normalized(bytes.fromhex(k)) == normalized(bytes.fromhex(o)))
        if not same:
            bad += 1
        if K.VERBOSE or not same:
            print(f"{'  ' if same else '!!'} {i:3d} dir{d} {p.summary()}")
            if not same:
                L = IPv6 if p.haslayer(IPv6) else IP
                kk = L(bytes.fromhex(k)).summary() if k != "not-forwarded" else k
                oo = L(bytes.fromhex(o)).summary() if o not in ("dropped", "?") else o
                print(f"       kernel: {kk}\n       nftdp:  {oo}")
                if K.VERBOSE:
                    print(f"       {k}\n       {o}")
    if len(ours) != len(P):
        bad += 1
    print(f"NAT vs kernel: {len(P) - bad}/{len(P)} packets leave alike, "
          f"{len(P) - tbad}/{len(P)} tables agree")
    return 1 if bad or tbad else 0


if __name__ == "__main__":
    sys.exit(main())
