#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Expectation events (`conntrack -E expect`, NFNLGRP_CONNTRACK_EXP_*)
against the kernel and against nftdp (issue 16: conntrackd's
ExpectationSync listens to them).

    ct_expect_events.py BUILD_DIR      (env SHIM: another shim)

ct_tool.py's two sides (a kernel forwarding namespace, nftdp on af_packet
ports with --wire 0:1) with its ruleset plus `ct helper set "ftp"` for
port 21. On each, with `conntrack -E expect` running: a passive FTP control
connection (handshake, the 220 banner, PASV, 227 with the server's
address and port 50000), then `conntrack -L expect`, then the data
connection's SYN, which takes the expectation. The event lists (NEW, then
DESTROY when taken) and the listing must be equal, timeouts within 3 s.
Exit 0 when equal, 1 otherwise, 77 when not root.
"""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ct_tool as CT  # noqa: E402

T = CT.T
CT.RULESET += """table ip helpers {
	ct helper ftp {
		type "ftp" protocol tcp
	}
	chain pre {
		type filter hook prerouting priority filter; policy accept;
		tcp dport 21 ct helper set "ftp"
	}
}
"""
checks = T.Checks(flush=True)


def control():
    t = CT.Tcp(False, 30021, 21, 100, 200)
    return [t.seg(0, "S"), t.seg(1, "SA"), t.seg(0, "A"), t.seg(1, "PA", b"220 hi\r\n"),
            t.seg(0, "A"), t.seg(0, "PA", b"PASV\r\n"),
            t.seg(1, "PA", b"227 Entering Passive Mode (10,32,0,2,195,80)\r\n"), t.seg(0, "A")]


def side(run, socks, macs):
    ev = subprocess.Popen(run(["-E", "expect"]), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    CT.send_all(socks, macs, control())
    time.sleep(0.5)
    lst = subprocess.run(run(["-L", "expect"]), capture_output=True, text=True, timeout=10)
    CT.send_all(socks, macs, [CT.Tcp(False, 30022, 50000, 300, 400).seg(0, "S")])
    time.sleep(1)
    ev.terminate()
    out = ev.communicate(timeout=5)[0]
    return lst.stdout + lst.stderr, out


def main():
    if not T.is_root():
        T.skip("ct_expect_events: needs root (scratch network namespaces)")
    if not shutil.which("conntrack"):
        T.skip("ct_expect_events: no conntrack tool, skipped")
    r = CT.kernel_and_nftdp("ctexp", side)
    if r is None:
        return 1
    (kl, ke), (ol, oe), clean = r
    checks.check("[NEW]" in ke and "[DESTROY]" in ke, "kernel: NEW and DESTROY events")
    for name, k, o in (("-L expect", kl, ol), ("-E expect", ke, oe)):
        # in the kernel's order, the timeouts within 3 s
        if not checks.check(CT.same_lines(k, o, True), f"{name}: nftdp as the kernel"):
            CT.show(name, k, o)
    checks.check(clean, "no sanitizer report in the daemon's log")
    return checks.report("ct_expect_events")


if __name__ == "__main__":
    sys.exit(main())
