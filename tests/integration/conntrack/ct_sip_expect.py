#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The sip helper's expectations in `conntrack -L expect`, against the
kernel and against nftdp (issue 14).

    ct_sip_expect.py BUILD_DIR      (env SHIM: another shim)

ct_tool.py's two sides (a kernel forwarding namespace, nftdp on af_packet
ports with --wire 0:1) with its ruleset plus `ct helper set "sip"` for UDP
port 5060. On each: a REGISTER from the client (its Contact on port 5070)
and an INVITE with SDP (audio on 49170); `conntrack -L expect` (the
REGISTER's signalling expectation, class 0, PERMANENT,INACTIVE, and the
INVITE's RTP and RTCP, class 1); then the registrar's 200 for the
REGISTER (Contact expires=600) and the callee's 200 with SDP (audio on
3456); `conntrack -L expect` again (the signalling expectation active for
600 s, four media ones) and `conntrack -L -p udp --orig-port-dst 5060`
(the master, helper=sip, 3600 s); then the callee's BYE, and what
`conntrack -E expect` printed all along (five NEW, four DESTROY).
Listings and events sorted, equal line by line, timeouts within 3 s
(ct_tool.py's same_lines). Exit 0 when equal, 1 otherwise, 77 when not
root.
"""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ct_tool as CT  # noqa: E402
from scapy.all import IP, UDP, Raw  # noqa: E402

T = CT.T
CT.RULESET += """table ip helpers {
	ct helper sip {
		type "sip" protocol udp
	}
	chain pre {
		type filter hook prerouting priority filter; policy accept;
		udp dport 5060 ct helper set "sip"
	}
}
"""
checks = T.Checks(flush=True)
C, S = CT.C4, CT.S4


def sip(d, text):
    src, dst = (C, S) if d == 0 else (S, C)
    return (d, IP(src=src, dst=dst, ttl=64) / UDP(sport=5060, dport=5060) /
            Raw(text.replace("\n", "\r\n").encode()))


def msg(first, cseq, extra="", body=""):
    return "%s\nFrom: <sip:a@%s>\nTo: <sip:b@%s>\nCSeq: %s\n%sContent-Length: %d\n\n%s" % (
        first, C, S, cseq, extra, len(body.replace("\n", "\r\n")), body)


def sdp(addr, port):
    return "v=0\no=x 1 1 IN IP4 %s\ns=-\nc=IN IP4 %s\nt=0 0\nm=audio %d RTP/AVP 0\n" % (
        addr, addr, port)


def first():
    return [sip(0, msg("REGISTER sip:%s SIP/2.0" % S, "7 REGISTER",
                       "Contact: <sip:alice@%s:5070>\nExpires: 3600\n" % C)),
            sip(1, msg("SIP/2.0 100 Trying", "7 REGISTER")),
            sip(0, msg("INVITE sip:b@%s SIP/2.0" % S, "8 INVITE", body=sdp(C, 49170)))]


def second():
    return [sip(1, msg("SIP/2.0 200 OK", "7 REGISTER",
                       "Contact: <sip:alice@%s:5070>;expires=600\n" % C)),
            sip(1, msg("SIP/2.0 200 OK", "8 INVITE", body=sdp(S, 3456)))]


def side(run, socks, macs):
    out = []
    ev = subprocess.Popen(run(["-E", "expect"]), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    CT.send_all(socks, macs, first())
    time.sleep(0.5)
    for P in (None, second()):
        if P:
            CT.send_all(socks, macs, P)
            time.sleep(0.5)
        r = subprocess.run(run(["-L", "expect"]), capture_output=True, text=True, timeout=10)
        out.append(("-L expect", r.stdout, r.stderr))
    r = subprocess.run(run(["-L", "-p", "udp", "--orig-port-dst", "5060"]), capture_output=True,
                       text=True, timeout=10)
    out.append(("-L -p udp --orig-port-dst 5060", r.stdout, r.stderr))
    # a BYE: the media expectations go
    CT.send_all(socks, macs, [sip(1, msg("BYE sip:a@%s SIP/2.0" % C, "9 BYE"))])
    time.sleep(1)
    ev.terminate()
    out.append(("-E expect", ev.communicate(timeout=5)[0], ""))
    return out


def main():
    if not T.is_root():
        T.skip("ct_sip_expect: needs root (scratch network namespaces)")
    if not shutil.which("conntrack"):
        T.skip("ct_sip_expect: no conntrack tool, skipped")
    r = CT.kernel_and_nftdp("ctsip", side)
    if r is None:
        return 1
    kout, oout, clean = r
    checks.check("PERMANENT,INACTIVE" in kout[0][1] and "helper=sip" in kout[2][1],
                 "kernel: the REGISTER's inactive expectation, the master's helper")
    for (name, k, ke), (_, o, oe) in zip(kout, oout):
        # sorted: nftdp's expectation events come from comparing table
        # snapshots, so their order is not the kernel's
        if not checks.check(CT.same_lines(k, o, False) and ke == oe,
                            f"{name}: nftdp as the kernel") or CT.VERBOSE:
            CT.show(name, k + ke, o + oe)
    checks.check(clean, "no sanitizer report in the daemon's log")
    return checks.report("ct_sip_expect")


if __name__ == "__main__":
    sys.exit(main())
