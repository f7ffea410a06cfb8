#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The h323 helpers' expectations in `conntrack -L expect`, against the
kernel and against nftdp (issue 14).

    ct_h323_expect.py BUILD_DIR      (env SHIM: another shim)

ct_tool.py's two sides (a kernel forwarding namespace, nftdp on af_packet
ports with --wire 0:1) with its ruleset plus `ct helper set "Q.931"` for
TCP port 1720 and `ct helper set "RAS"` for UDP port 1719. On each: a
Q.931 connection with a Setup (h245Address C:1800) and a Connect
(h245Address S:1801), each expecting the H.245 connection (class 0, 240
s, helper Q.931); `conntrack -L expect`; then a RegistrationRequest
(callSignalAddress C:1720) and its Confirm on RAS (the gatekeeper's calls
expected: PERMANENT, helper RAS); `conntrack -L expect` again, the Q.931
master (`conntrack -L -p tcp --orig-port-dst 1720`: helper=Q.931), the
RAS connection (its timeout the RCF's time to live, 120 s) and
what `conntrack -E expect` printed all along. Between them a call
through masquerade (source port 41000) whose Facility forwards it to
10.31.0.7:1721 (nat_callforwarding: the expectation at the masquerade
address; conntrack prints neither its saved address nor its function);
`conntrack -L expect` after it. The PDUs are those of differential
cases 322 and 323 (their PER encoders) and h323_per.py's Facility.
Listings and events
sorted, equal line by line, timeouts within 3 s (ct_tool.py's
same_lines). Exit 0 when equal, 1 otherwise, 77 when not root.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# the cases import their encoders from beside run.py (h323_per.py)
sys.path.insert(0, os.path.join(HERE, "..", "..", "differential"))
import ct_tool as CT  # noqa: E402
from h323_per import forwarded  # noqa: E402

T = CT.T
CT.RULESET += """table ip helpers {
	ct helper q931 {
		type "Q.931" protocol tcp
	}
	ct helper ras {
		type "RAS" protocol udp
	}
	chain pre {
		type filter hook prerouting priority filter; policy accept;
		tcp dport 1720 ct helper set "q931"
		udp dport 1719 ct helper set "ras"
	}
}
table ip h323nat {
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		ip saddr 10.31.0.2 tcp sport 41000 tcp dport 1720 masquerade
	}
}
"""
checks = T.Checks(flush=True)
C, S = CT.C4, CT.S4


def case(name):
    path = os.path.join(HERE, "..", "..", "differential", "cases", name + ".py")
    spec = importlib.util.spec_from_file_location("case_" + name[:3], path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


Q = case("322_ct_helper_h323")
R = case("323_ct_helper_h323_ras")
Q.C, Q.S = C, S  # the encoders read these when called


def ras(d, payload):
    from scapy.all import IP, UDP, Raw
    src, dst = (C, S) if d == 0 else (S, C)
    sp, dp = (40001, 1719) if d == 0 else (1719, 40001)
    return (d, IP(src=src, dst=dst, ttl=64) / UDP(sport=sp, dport=dp) / Raw(payload))


def calls():
    f = CT.Tcp(False, 40000, 1720, 1000, 5000)
    return [f.seg(0, "S"), f.seg(1, "SA"), f.seg(0, "A"),
            f.seg(0, "PA", Q.tpkt(Q.q931(0x05, Q.uuie(0, Q.setup_body)))),
            f.seg(1, "PA", Q.tpkt(Q.q931(0x07, Q.uuie(2, Q.connect_body))))]


def registration():
    return [ras(0, R.rrq(1, (C, 1720), (C, 40001), 120)), ras(1, R.rcf(1, (S, 1720), 120))]


def forwarding():
    # C forwards a call through the masquerade to 10.31.0.7:1721 (C's
    # side, the peer S on the other: tracked by the kernel's routes, and
    # by nftdp's, which find neither address)
    f = CT.Tcp(False, 41000, 1720, 3000, 6000, reply_dst=CT.MASQ4)
    return [f.seg(0, "S"), f.seg(1, "SA"), f.seg(0, "A"),
            f.seg(0, "PA", forwarded("10.31.0.7", 1721))]


def side(run, socks, macs):
    out = []
    ev = subprocess.Popen(run(["-E", "expect"]), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    for P in (calls(), registration(), forwarding()):
        CT.send_all(socks, macs, P)
        time.sleep(0.5)
        r = subprocess.run(run(["-L", "expect"]), capture_output=True, text=True, timeout=10)
        out.append(("-L expect", r.stdout, r.stderr))
    for proto, port in (("tcp", "1720"), ("udp", "1719")):
        r = subprocess.run(run(["-L", "-p", proto, "--orig-port-dst", port]),
                           capture_output=True, text=True, timeout=10)
        out.append((f"-L -p {proto} --orig-port-dst {port}", r.stdout, r.stderr))
    time.sleep(0.5)
    ev.terminate()
    out.append(("-E expect", ev.communicate(timeout=5)[0], ""))
    return out


def main():
    if not T.is_root():
        T.skip("ct_h323_expect: needs root (scratch network namespaces)")
    if not shutil.which("conntrack"):
        T.skip("ct_h323_expect: no conntrack tool, skipped")
    r = CT.kernel_and_nftdp("cth323", side)
    if r is None:
        return 1
    kout, oout, clean = r
    checks.check("helper=Q.931" in kout[0][1] and kout[0][1].count("proto=6") == 2,
                 "kernel: the two H.245 expectations of the Q.931 helper")
    checks.check("PERMANENT" in kout[1][1] and "helper=RAS" in kout[1][1],
                 "kernel: the RRQ's permanent expectation")
    checks.check("dst=%s sport=0 dport=1721" % CT.MASQ4 in kout[2][1],
                 "kernel: the forwarded call expected at the masquerade address")
    checks.check(" 11" in kout[4][1].split("src=")[0] and "helper=RAS" in kout[4][1],
                 "kernel: the RAS connection lives the RCF's 120 s")
    for (name, k, ke), (_, o, oe) in zip(kout, oout):
        if not checks.check(CT.same_lines(k, o, False) and ke == oe,
                            f"{name}: nftdp as the kernel") or CT.VERBOSE:
            CT.show(name, k + ke, o + oe)
    checks.check(clean, "no sanitizer report in the daemon's log")
    return checks.report("ct_h323_expect")


if __name__ == "__main__":
    sys.exit(main())
