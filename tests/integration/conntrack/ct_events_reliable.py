#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Event delivery to a listener that falls behind, against the kernel and
against nftdp (issue 16: conntrackd's NetlinkEventsReliable sets
NETLINK_BROADCAST_ERROR and NETLINK_NO_ENOBUFS on its event socket).

    ct_events_reliable.py BUILD_DIR      (env SHIM: another shim)

ct_tool.py's two sides. On each, a raw ctnetlink listener joins
NFNLGRP_CONNTRACK_DESTROY with a small receive buffer and does not read;
FLOWS one-packet UDP flows are tracked, `conntrack -F` destroys them all,
then the listener reads until the events stop. Three times:
- plain: the buffer overruns, the listener's next read fails with
  ENOBUFS and the events that did not fit are lost (netlink_overrun);
- reliable (BROADCAST_ERROR and NO_ENOBUFS): no ENOBUFS, and every
  destroy event arrives (the kernel keeps an undelivered destroy on its
  dying list and redelivers it; nftdp keeps it in the shard's ring);
- reliable with a 1 MiB buffer, as conntrackd asks for: everything fits,
  on the kernel and on nftdp.
nftdp must do what the kernel does in each: the same counts for the
reliable listeners, and for the plain one an ENOBUFS and a loss.
Exit 0 when so, 1 otherwise, 77 when not root.
"""

import errno
import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

FLOWS = 120
SOL_NETLINK = 270
NETLINK_BROADCAST_ERROR = 4
NETLINK_NO_ENOBUFS = 5
NFNLGRP_CONNTRACK_DESTROY = 3
IPCTNL_MSG_CT_DELETE = (1 << 8) | 2  # NFNL_SUBSYS_CTNETLINK


def listen(mode):
    """The child: listen, say "ready", read once told, print the counts."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)  # NETLINK_NETFILTER
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20 if mode == "reliable-big" else 4096)
    if mode != "plain":
        s.setsockopt(SOL_NETLINK, NETLINK_BROADCAST_ERROR, 1)
        s.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
    s.bind((0, 1 << (NFNLGRP_CONNTRACK_DESTROY - 1)))
    seen = []
    print("ready", flush=True)
    sys.stdin.readline()
    destroys = enobufs = 0
    quiet = time.monotonic() + 3.0
    while time.monotonic() < quiet:
        if not select.select([s], [], [], 0.2)[0]:
            continue
        try:
            buf = s.recv(65536)
        except OSError as e:
            if e.errno != errno.ENOBUFS:
                raise
            enobufs += 1
            seen.append("E")
            continue
        seen.append(str(len(buf)))
        off = 0
        while off + 16 <= len(buf):
            ln, typ = struct.unpack_from("IH", buf, off)
            if ln < 16:
                break
            destroys += typ == IPCTNL_MSG_CT_DELETE
            off += (ln + 3) & ~3
        quiet = time.monotonic() + 3.0
    print(" ".join(seen))
    print(f"destroys={destroys} enobufs={enobufs}", flush=True)
    return 0


def main():
    import ct_tool as CT
    T = CT.T
    if not T.is_root():
        T.skip("ct_events_reliable: needs root (scratch network namespaces)")
    if not shutil.which("conntrack"):
        T.skip("ct_events_reliable: no conntrack tool, skipped")
    me = os.path.abspath(__file__)
    checks = T.Checks(flush=True)

    def side(run, socks, macs):
        prefix = run([])[:-3]  # what runs a command there: env, netns
        out = {}
        for mode in ("plain", "reliable", "reliable-big"):
            child = subprocess.Popen(prefix + [sys.executable, me, "--listen", mode],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
            ready = child.stdout.readline().strip()
            if ready != "ready":
                child.kill()
                out[mode] = "listener: " + ready + child.communicate(timeout=10)[0]
                continue
            port = {"plain": 31000, "reliable": 32000, "reliable-big": 33000}[mode]
            CT.send_all(socks, macs, [CT.udp(False, 0, port + i, 53) for i in range(FLOWS)])
            CT.settle(lambda a: subprocess.run(run(a), capture_output=True, text=True,
                                               timeout=15))
            subprocess.run(run(["-F"]), capture_output=True, timeout=15)
            try:
                res = child.communicate("go\n", timeout=60)[0]
            except subprocess.TimeoutExpired:
                child.kill()
                res = "listener: no answer"
            out[mode] = res.strip()
        return out

    r = CT.kernel_and_nftdp("ctrel", side)
    if r is None:
        return 1
    k, o, clean = r

    def counts(s):
        try:
            d = dict(x.split("=") for x in s.split()[-2:])
            return int(d["destroys"]), int(d["enobufs"])
        except (ValueError, KeyError):
            return None

    kp, kr, kb = counts(k["plain"]), counts(k["reliable"]), counts(k["reliable-big"])
    op, orl, ob = counts(o["plain"]), counts(o["reliable"]), counts(o["reliable-big"])
    for name, x in (("kernel", k), ("nftdp", o)):
        print(f"{name}: " + ", ".join(f"{m} {x[m].split(chr(10))[-1]!r}" for m in x))
    if not checks.check(None not in (kp, kr, kb, op, orl, ob), "every listener answered"):
        return checks.report("ct_events_reliable")
    checks.check(kp[1] > 0 and kp[0] < FLOWS, "kernel, plain: ENOBUFS and a loss")
    checks.check(kr == (FLOWS, 0), "kernel, reliable: every destroy, no ENOBUFS")
    checks.check(op[1] > 0 and op[0] < FLOWS, "nftdp, plain: ENOBUFS and a loss, as the kernel")
    checks.check(orl == kr, "nftdp, reliable: every destroy, no ENOBUFS, as the kernel")
    # conntrackd's buffer size (NetlinkBufferSize)
    checks.check(kb == (FLOWS, 0), "kernel, reliable with a 1 MiB buffer: every destroy")
    checks.check(ob == kb, "nftdp, reliable with a 1 MiB buffer: every destroy, as the kernel")
    checks.check(clean, "no sanitizer report in the daemon's log")
    return checks.report("ct_events_reliable")


if __name__ == "__main__":
    if "--listen" in sys.argv:
        sys.exit(listen(sys.argv[-1]))
    sys.exit(main())
