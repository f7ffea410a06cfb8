#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A netlink client that asks for dumps and never reads the answers (run
under the shim, tests/integration/control/0004_never_reads_0.sh). Then, with
`--read`, it reads what is queued: a dump's parts keep coming as it reads
(the daemon held them back), the requests sent meanwhile were refused with
EBUSY or lost with ENOBUFS, and the socket is still usable."""
import errno
import os
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFT, GETRULE, GETGEN = 10, 7, 16
F_REQUEST, F_DUMP = 1, 0x300


def msg(mtype, flags, seq, family=0):
    return struct.pack("=IHHII", 20, mtype, flags, seq, 0) + struct.pack("=BBH", family, 0, 0)


def main():
    assert "libnftdp_shim" in open("/proc/self/maps").read(), "shim not loaded"
    secs, out = float(sys.argv[1]), sys.argv[2]
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    t0, n = time.monotonic(), 0
    while time.monotonic() - t0 < secs:
        s.sendto(msg((NFT << 8) | GETRULE, F_REQUEST | F_DUMP, n + 1), (0, 0))
        n += 1
    with open(out, "w") as f:
        f.write("%d\n" % n)
    # wait to be told to read
    sys.stdin.readline()
    s.setblocking(False)
    parts = done = enobufs = ebusy = 0
    while True:
        try:
            d = s.recv(1 << 17)
        except BlockingIOError:
            break
        except OSError as e:
            if e.errno == errno.ENOBUFS:
                enobufs += 1
                continue
            raise
        off = 0
        while off + 16 <= len(d):
            ln, typ, fl = struct.unpack_from("=IHH", d, off)
            if typ == 3:
                done += 1
            elif typ == 2:
                if struct.unpack_from("=i", d, off + 16)[0] == -errno.EBUSY:
                    ebusy += 1
            else:
                parts += 1
            off += (ln + 3) & ~3
    # still usable: a GETGEN answers
    s.setblocking(True)
    s.sendto(msg((NFT << 8) | GETGEN, F_REQUEST, 99999), (0, 0))
    gen = len(s.recv(65536)) > 0
    print("sent %d dumps; read %d rules, %d DONE, %d EBUSY, %d ENOBUFS; getgen %s"
          % (n, parts, done, ebusy, enobufs, "ok" if gen else "none"))
    return 0 if done == 1 and parts > 0 and gen else 1


if __name__ == "__main__":
    sys.exit(main())
