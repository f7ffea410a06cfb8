#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One ctnetlink request's round trip (IPCTNL_MSG_CT_GET of a missing
tuple, NLM_F_ACK), the unit of conntrackd's per-entry writes (issue 16):

    sudo bench/ha/rtt.py BUILD_DIR [N]

against the kernel (a scratch netns) and against nftdp through the shim,
with -l 0 (requests run on the control thread) and with a worker lcore
(requests take the worker's mailbox). Prints microseconds per request.
With `--client` (internal) it is the client: N requests on a netlink
socket, the time printed.
"""

import os
import socket
import struct
import subprocess
import sys
import tempfile
import time


def client(n):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)  # NETLINK_NETFILTER
    s.bind((0, 0))

    def attr(t, p):
        ln = 4 + len(p)
        return struct.pack("HH", ln, t) + p + b"\0" * ((4 - ln % 4) % 4)

    ip = attr(0x8001, attr(1, socket.inet_aton("10.9.9.1")) + attr(2, socket.inet_aton("10.9.9.2")))
    pr = attr(0x8002, attr(1, b"\x06") + attr(2, struct.pack(">H", 1234)) +
              attr(3, struct.pack(">H", 80)))
    body = struct.pack("BBH", 2, 0, 0) + attr(0x8001, ip + pr)
    t0 = time.monotonic()
    for i in range(n):
        # NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_GET, NLM_F_REQUEST | NLM_F_ACK
        s.send(struct.pack("IHHII", 16 + len(body), 0x101, 0x5, i + 1, 0) + body)
        s.recv(65536)
    print(f"{(time.monotonic() - t0) / n * 1e6:.0f}")


def main():
    if "--client" in sys.argv:
        return client(int(sys.argv[-1]))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "tests", "lib"))
    import nftdp_test as T
    if not T.is_root():
        T.skip("bench/ha/rtt: needs root")
    build = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    ns = f"nftdp-hartt-{os.getpid()}"
    tmp = tempfile.mkdtemp(prefix="nftdp-hartt.")
    me = [sys.executable, os.path.abspath(__file__), "--client", str(n)]
    rows = []
    try:
        T.sh("ip", "netns", "add", ns)
        for a, b in (("da0", "da1"), ("db0", "db1")):
            T.sh("ip", "link", "add", a, "type", "veth", "peer", "name", b, ns=ns)
            T.sh("ip", "link", "set", a, "up", ns=ns)
            T.sh("ip", "link", "set", b, "up", ns=ns)
        rows.append(("kernel (scratch netns)", T.sh(*me, ns=ns, timeout=120).stdout.strip()))
        for mode, lcores in (("nftdp -l 0 (control thread)", ["-l", "0"]),
                             ("nftdp, worker lcore (mailbox)", ["--lcores", "0@0,1@1"])):
            sock = os.path.join(tmp, "nl.sock")
            prefix = f"nftdp-hartt-{os.getpid()}"
            eal = T.eal_args(prefix, ["net_af_packet0,iface=da1", "net_af_packet1,iface=db1"],
                             lcores)
            d = T.Daemon(build, eal, ["--socket", sock, "--wire", "0:1"], prefix,
                         os.path.join(tmp, "nftdp.log"), ns=ns, limit=180)
            try:
                d.wait_started(marker="worker", sock=sock, timeout=20)
                r = subprocess.run(T.in_ns(ns) + me, capture_output=True, text=True,
                                   timeout=120, env=T.nft_env(sock, shim=T.shim_path(build)))
                rows.append((mode, r.stdout.strip() or r.stderr.strip()[-200:]))
            finally:
                d.stop(wait=10)
                if os.path.exists(sock):
                    os.unlink(sock)
    finally:
        T.netns_del(ns)
        subprocess.run(["rm", "-rf", tmp], timeout=30)
    print(f"| CT_GET round trip ({n} requests) | us each |\n|---|---|")
    for m, v in rows:
        print(f"| {m} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
