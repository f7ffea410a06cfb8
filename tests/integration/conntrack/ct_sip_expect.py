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
Listings and events sorted, equal line by line, timeouts within 3 s. Exit 0 when equal, 1 otherwise, 77 when not root.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
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


EXP_RE = re.compile(r"^(\s*(?:\[\w+\]\s+)?)(\d+) (.*)$")  # an expectation: its timeout first


def same(k, o):
    """equal once sorted (nftdp's expectation events come from comparing
    table snapshots, so their order is not the kernel's), the timeouts
    within 3 s"""
    def key(line):  # the timeout out of the sort key
        return re.sub(r"^(\s*(?:\[\w+\]\s+)?)\d+ ", r"\1", line)
    kl = sorted(k.strip().splitlines(), key=key)
    ol = sorted(o.strip().splitlines(), key=key)
    if len(kl) != len(ol):
        return False
    for a, b in zip(kl, ol):
        ma, mb = CT.TIMEOUT_RE.match(a), CT.TIMEOUT_RE.match(b)
        if ma and mb:
            if ma.group(1) != mb.group(1) or ma.group(3) != mb.group(3) or \
                    abs(int(ma.group(2)) - int(mb.group(2))) > 3:
                return False
            continue
        ea, eb = EXP_RE.match(a), EXP_RE.match(b)
        if ea and eb:
            if ea.group(1) != eb.group(1) or ea.group(3) != eb.group(3) or \
                    abs(int(ea.group(2)) - int(eb.group(2))) > 3:
                return False
        elif a != b:
            return False
    return True


def main():
    if not T.is_root():
        T.skip("ct_sip_expect: needs root (scratch network namespaces)")
    if not shutil.which("conntrack"):
        T.skip("ct_sip_expect: no conntrack tool, skipped")
    tmp = tempfile.mkdtemp(prefix="nftdp-ctsip.")
    daemon = None
    try:
        CT.setup_kernel()
        ks = {0: CT.packet_socket(CT.NS["c"], "c0"), 1: CT.packet_socket(CT.NS["s"], "s0")}
        km = {0: (CT.MAC_C, CT.sh("cat", "/sys/class/net/f0/address", ns="fw").stdout.strip()),
              1: (CT.MAC_S, CT.sh("cat", "/sys/class/net/f1/address", ns="fw").stdout.strip())}
        kout = side(lambda a: T.in_ns(CT.NS["fw"]) + ["timeout", "10", "conntrack"] + a, ks, km)
        CT.setup_nftdp_ns()
        daemon = CT.start_nftdp(tmp, f"nftdp-ctsip-{os.getpid()}", ["-l", "0"], "nftdp")
        if daemon is None:
            return 1
        env = T.nft_env(os.path.join(tmp, "nl.sock"), shim=T.shim_path(CT.BUILD))
        ds = {0: CT.packet_socket(CT.NS["d"], "da0"), 1: CT.packet_socket(CT.NS["d"], "db0")}
        dm = {0: (CT.MAC_C, "02:00:00:00:31:01"), 1: (CT.MAC_S, "02:00:00:00:32:01")}
        oout = side(lambda a: ["env"] + [f"{k}={env[k]}" for k in ("NFTDP_SOCKET",
                                                                   "LD_PRELOAD")] +
                    T.in_ns(CT.NS["d"]) + ["timeout", "10", "conntrack"] + a, ds, dm)
        checks.check("PERMANENT,INACTIVE" in kout[0][1] and "helper=sip" in kout[2][1],
                     "kernel: the REGISTER's inactive expectation, the master's helper")
        for (name, k, ke), (_, o, oe) in zip(kout, oout):
            if not checks.check(same(k, o) and ke == oe, f"{name}: nftdp as the kernel") or \
                    CT.VERBOSE:
                CT.show(name, k + ke, o + oe)
        log = open(os.path.join(tmp, "nftdp.log")).read()
        checks.check("Sanitizer" not in log and "runtime error" not in log,
                     "no sanitizer report in the daemon's log")
    finally:
        if daemon:
            CT.stop_nftdp(daemon, tmp)
        CT.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.report("ct_sip_expect")


if __name__ == "__main__":
    sys.exit(main())
