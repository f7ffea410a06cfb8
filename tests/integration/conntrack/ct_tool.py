#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The stock conntrack tool against the kernel and against nftdp.

    ct_tool.py BUILD_DIR [-v]      (env SHIM: another shim, e.g. a non-ASan one)

The same frames -- TCP handshakes with data (left established, closed to
TIME_WAIT, a bare SYN), UDP with and without a reply, a UDP flow whose
packets get `ct mark set 42`, ICMP and ICMPv6 echo, UDP in zone 7 and in
original zone 8, IPv4 and IPv6, and a
masqueraded TCP flow, SCTP four-way handshakes, PPTP control connections with
the pptp helper and a call's GRE version 1 traffic (srckey/dstkey), GRE with
an unannounced call id and GRE version 0; with nf_conntrack_acct on -- go

  kernel: from two address-less peers (nftdp-ctt-PID-c, -s) through a
          scratch namespace nftdp-ctt-PID-fw that forwards between two veths
          with a forward chain using conntrack;
  nftdp:  into a running BUILD_DIR/nftdp on net_af_packet ports on two veth
          pairs in nftdp-ctt-PID-d, --wire 0:1, the same ruleset, twice: with
          a worker lcore (requests go through the worker's mailbox) and with
          -l 0 (the main lcore is the worker, requests run directly).

On each side the same conntrack commands run (through the shim for nftdp):
-E while the traffic runs, then -L, -L -f ipv6, -L -m 42, -L -u ASSURED,
-L -w 7, -L -p gre, -L expect (a PPTP call's two GRE expectations),
-G of a TCP and an ICMPv6 flow, -G of a flow that does not exist, -C, -D of
one UDP flow and of a missing one, -L, -F -f ipv6 (the kernel flushes every
family), -L, -F, -L, -C, -S (shape only). Their outputs (stdout, stderr,
exit status) must be equal line by line, listings sorted, timeouts within 3
seconds, the port ids of [USERSPACE] destroy events blanked; events keep
each connection's order (a burst confirms several connections hook by hook,
so they may interleave otherwise), a flush's destroys come in any order. Exit 0 when all agree, 1 otherwise, 77 when not
root. Namespaces are deleted at exit, also on failure.
"""

import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402
from scapy.all import ICMP, IP, SCTP, TCP, UDP, Ether, ICMPv6EchoReply, ICMPv6EchoRequest, \
    IPv6, Raw, SCTPChunkCookieAck, SCTPChunkCookieEcho, SCTPChunkInit, SCTPChunkInitAck, \
    raw  # noqa: E402

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
VERBOSE = "-v" in sys.argv
PID = os.getpid()
NS = {k: f"nftdp-ctt-{PID}-{k}" for k in ("fw", "c", "s", "d")}
C4, S4 = "10.31.0.2", "10.32.0.2"
C6, S6 = "fd31::2", "fd32::2"
MAC_C, MAC_S = "02:00:00:00:31:0c", "02:00:00:00:32:0d"
RULESET = """table inet ctt {
	ct helper pptp-h {
		type "pptp" protocol tcp
	}
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		udp dport 5400 ct zone set 7
		udp sport 5400 ct zone set 7
		udp dport 5401 ct original zone set 8
	}
	chain forward {
		type filter hook forward priority 0; policy accept;
		udp dport 5300 ct mark set 42
		tcp dport 1723 ct helper set "pptp-h"
		ct state established,related accept
		ct state new accept
	}
}
table ip nat {
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		ip daddr 10.32.0.0/24 tcp dport 8080 masquerade
	}
}
"""
PROBE_PORT = 7777  # a flow sent until conntrack -E shows it
MASQ4 = "10.32.0.1"  # the kernel's f1, nftdp's --ifaddr 1=
checks = T.Checks()
check = checks.check


def sh(*args, ns=None, check=True, **kw):
    """args inside the namespace NS[ns] (ns is a key of NS: fw, c, s, d)."""
    return T.sh(*args, ns=NS[ns] if ns else None, check=check, timeout=30, **kw)


def cleanup():
    T.netns_del(*NS.values())


def setup_kernel():
    for n in ("fw", "c", "s"):
        sh("ip", "netns", "add", NS[n])
    sh("ip", "link", "add", "c0", "netns", NS["c"], "type", "veth", "peer", "f0",
       "netns", NS["fw"])
    sh("ip", "link", "add", "s0", "netns", NS["s"], "type", "veth", "peer", "f1",
       "netns", NS["fw"])
    for ns, dev in (("c", "c0"), ("s", "s0")):
        sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1", ns=ns)
        sh("ip", "link", "set", dev, "up", ns=ns)
    for c in ["sysctl -qw net.ipv4.ip_forward=1", "sysctl -qw net.ipv6.conf.all.forwarding=1",
              "sysctl -qw net.ipv4.conf.all.rp_filter=0",
              "sysctl -qw net.ipv4.conf.default.rp_filter=0",
              "sysctl -qw net.ipv6.conf.default.accept_dad=0",
              "sysctl -qw net.netfilter.nf_conntrack_acct=1",
              "ip link set f0 up", "ip link set f1 up",
              "ip addr add 10.31.0.1/24 dev f0", "ip addr add 10.32.0.1/24 dev f1",
              "ip addr add fd31::1/64 dev f0 nodad", "ip addr add fd32::1/64 dev f1 nodad",
              f"ip neigh replace {C4} lladdr {MAC_C} dev f0 nud permanent",
              f"ip neigh replace {S4} lladdr {MAC_S} dev f1 nud permanent",
              f"ip neigh replace {C6} lladdr {MAC_C} dev f0 nud permanent",
              f"ip neigh replace {S6} lladdr {MAC_S} dev f1 nud permanent"]:
        sh(*c.split(), ns="fw")
    sh("nft", "-f", "-", ns="fw", input=RULESET)


def setup_nftdp_ns():
    sh("ip", "netns", "add", NS["d"])
    sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns="d")
    sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns="d")
    for p in ("a", "b"):
        sh("ip", "link", "add", f"d{p}0", "type", "veth", "peer", "name", f"d{p}1", ns="d")
        sh("ip", "link", "set", f"d{p}0", "up", ns="d")
        sh("ip", "link", "set", f"d{p}1", "up", ns="d")


packet_socket = T.packet_socket  # an AF_PACKET socket on dev inside a netns


class Tcp:
    """Both directions of one TCP connection with consistent sequence numbers."""

    def __init__(self, v6, sport, dport, isn0, isn1, reply_dst=None):
        self.v6, self.port = v6, (sport, dport)
        self.seq = [isn0, isn1]
        self.reply_dst = reply_dst  # the client's address after source NAT

    def seg(self, d, flags, data=b""):
        a, b = (C6, S6) if self.v6 else (C4, S4)
        src, dst = (a, b) if d == 0 else (b, self.reply_dst or a)
        sp, dp = self.port if d == 0 else self.port[::-1]
        ip = IPv6(src=src, dst=dst) if self.v6 else IP(src=src, dst=dst, ttl=64)
        ack = self.seq[1 - d] if "A" in flags else 0
        p = ip / TCP(sport=sp, dport=dp, flags=flags, seq=self.seq[d], ack=ack, window=65535,
                     options=[("MSS", 1460), ("WScale", 7)] if "S" in flags else [])
        if data:
            p = p / Raw(data)
        self.seq[d] = (self.seq[d] + len(data) + ("S" in flags) + ("F" in flags)) & 0xffffffff
        return (d, p)


def udp(v6, d, sport, dport):
    a, b = (C6, S6) if v6 else (C4, S4)
    src, dst = (a, b) if d == 0 else (b, a)
    ip = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst, ttl=64)
    return (d, ip / UDP(sport=sport, dport=dport) / Raw(b"q" * 16))


def echo(v6, d, ident):
    a, b = (C6, S6) if v6 else (C4, S4)
    src, dst = (a, b) if d == 0 else (b, a)
    if v6:
        return (d, IPv6(src=src, dst=dst) / (ICMPv6EchoRequest(id=ident, seq=1) if d == 0
                                             else ICMPv6EchoReply(id=ident, seq=1)))
    return (d, IP(src=src, dst=dst, ttl=64) / ICMP(type=8 if d == 0 else 0, id=ident, seq=1))


def sequences():
    P = []
    for v6 in (False, True):
        b = 40000 if v6 else 30000
        t = Tcp(v6, b + 1, 80, 1000, 5000)  # established, data both ways
        P += [t.seg(0, "S"), t.seg(1, "SA"), t.seg(0, "A"), t.seg(0, "PA", b"GET / HTTP/1.0\r\n"),
              t.seg(1, "A"), t.seg(1, "PA", b"x" * 200), t.seg(0, "A")]
        t = Tcp(v6, b + 2, 443, 7000, 9000)  # closed: TIME_WAIT
        P += [t.seg(0, "S"), t.seg(1, "SA"), t.seg(0, "A"), t.seg(0, "FA"), t.seg(1, "A"),
              t.seg(1, "FA"), t.seg(0, "A")]
        P += [Tcp(v6, b + 3, 22, 100, 200).seg(0, "S")]  # SYN_SENT, unreplied
        P += [udp(v6, 0, b + 4, 53), udp(v6, 1, 53, b + 4)]
        P += [udp(v6, 0, b + 5, 5353)]
        P += [udp(v6, 0, b + 6, 5300), udp(v6, 1, 5300, b + 6)]  # ct mark set 42
        P += [echo(v6, 0, b % 65536 + 7), echo(v6, 1, b % 65536 + 7)]
        P += [udp(v6, 0, b + 9, 5400), udp(v6, 1, 5400, b + 9)]  # zone 7
        P += [udp(v6, 0, b + 10, 5401), udp(v6, 1, 5401, b + 10)]  # original zone 8
    # SCTP: the four-way handshake, then established
    for v6 in (False, True):
        a, b = (C6, S6) if v6 else (C4, S4)

        def ip(d):
            return IPv6(src=a if d == 0 else b, dst=b if d == 0 else a) if v6 else \
                IP(src=a if d == 0 else b, dst=b if d == 0 else a, ttl=64)
        sp, ct, st = 50000 + v6, 0x11111111 + v6, 0x22222222 + v6
        P += [(0, ip(0) / SCTP(sport=sp, dport=9899, tag=0) /
               SCTPChunkInit(init_tag=ct, a_rwnd=65535, n_out_streams=1, n_in_streams=1,
                             init_tsn=1)),
              (1, ip(1) / SCTP(sport=9899, dport=sp, tag=ct) /
               SCTPChunkInitAck(init_tag=st, a_rwnd=65535, n_out_streams=1, n_in_streams=1,
                                init_tsn=1)),
              (0, ip(0) / SCTP(sport=sp, dport=9899, tag=st) / SCTPChunkCookieEcho(cookie=b"c" * 8)),
              (1, ip(1) / SCTP(sport=9899, dport=sp, tag=ct) / SCTPChunkCookieAck())]
    # PPTP: a control connection with the pptp helper, an outgoing call,
    # its GRE (version 1, keyed by the call ids) both ways, then its end;
    # GRE with a call id nobody announced; a second control connection
    # whose call gets no GRE (its two expectations stay); plain GRE
    # (version 0, no keys). The call ends before the listings: a master
    # with a live related connection lists use=2 on the kernel (the
    # child's reference), which nftdp does not count (docs/differences.md)
    for cport, pns, pac, gre in ((30011, 0x4a01, 0x7b02, True), (30012, 0x4a03, 0x7b04, False)):
        t = Tcp(False, cport, 1723, 21000, 22000)
        P += [t.seg(0, "S"), t.seg(1, "SA"), t.seg(0, "A"),
              t.seg(0, "PA", pptp_ctl(1, struct.pack("!HHIIHH128s", 0x100, 0, 1, 1, 0, 1, b""))),
              t.seg(1, "PA", pptp_ctl(2, struct.pack("!HBBIIHH128s", 0x100, 1, 0, 1, 1, 0, 1,
                                                     b""))),
              t.seg(0, "PA", pptp_ctl(7, struct.pack("!HH24x128s", pns, 1, b""))),
              t.seg(1, "PA", pptp_ctl(8, struct.pack("!HHB15x", pac, pns, 1)))]
        if gre:  # the call, then its end (Call-Disconnect-Notify kills its GRE)
            P += [gre1(0, pac, 1), gre1(1, pns, 1), gre1(0, pac, 2), gre1(0, 0x1234, 1),
                  t.seg(1, "PA", pptp_ctl(13, struct.pack("!HBB132x", pac, 1, 0)))]
    P += [(0, IP(src=C4, dst=S4, ttl=64, proto=47) / Raw(b"\x00\x00\x08\x00" + b"g" * 20))]
    # masquerade: the server answers the router's address, the port kept
    t = Tcp(False, 30008, 8080, 11000, 12000, reply_dst=MASQ4)
    P += [t.seg(0, "S"), t.seg(1, "SA"), t.seg(0, "A"), t.seg(0, "PA", b"masq"), t.seg(1, "A")]
    return P


def pptp_ctl(mtype, body):
    """A PPTP control message: length, control type, magic cookie, type, body."""
    return struct.pack("!HHIHH", 12 + len(body), 1, 0x1a2b3c4d, mtype, 0) + body


def gre1(d, call_id, seq):
    """Enhanced GRE (RFC 2637, version 1, PPP) carrying the receiver's call id."""
    src, dst = (C4, S4) if d == 0 else (S4, C4)
    hdr = struct.pack("!BBHHHI", 0x30, 0x01, 0x880b, 4, call_id, seq)
    return (d, IP(src=src, dst=dst, ttl=64, proto=47) / Raw(hdr + b"\xff\x03\xc0\x21"))


def send_all(socks, macs, P):
    for d, p in P:
        src, dst = macs[d]
        frame = Ether(src=src, dst=dst, type=0x86DD if p.haslayer(IPv6) else 0x800) / p
        socks[d].send(raw(frame))
        time.sleep(0.01)


def commands():
    """(name, conntrack arguments); the udp flow to delete is b + 4."""
    return [
        ("list", ["-L"]), ("list ipv6", ["-L", "-f", "ipv6"]), ("list mark 42", ["-L", "-m", "42"]),
        ("list assured", ["-L", "-u", "ASSURED"]), ("list zone 7", ["-L", "-w", "7"]),
        ("list gre", ["-L", "-p", "gre"]), ("list expect", ["-L", "expect"]),
        ("get tcp", ["-G", "-p", "tcp", "-s", C4, "-d", S4, "--sport", "30001", "--dport", "80"]),
        ("get ipv6 icmp", ["-G", "-p", "icmpv6", "-s", C6, "-d", S6,
                           "--icmpv6-type", "128", "--icmpv6-code", "0", "--icmpv6-id",
                           str(40000 % 65536 + 7)]),
        ("get missing", ["-G", "-p", "tcp", "-s", C4, "-d", S4, "--sport", "1", "--dport", "80"]),
        ("count", ["-C"]),
        ("delete udp", ["-D", "-p", "udp", "-s", C4, "-d", S4, "--sport", "30004",
                        "--dport", "53"]),
        ("delete missing", ["-D", "-p", "udp", "-s", C4, "-d", S4, "--sport", "1",
                            "--dport", "53"]),
        ("list after delete", ["-L"]),
        ("flush ipv6", ["-F", "-f", "ipv6"]),
        ("list after flush ipv6", ["-L"]),
        ("flush", ["-F"]), ("list after flush", ["-L"]), ("count after flush", ["-C"]),
    ]


def settle(run_ct, least=0.5, most=5.0):
    """Wait until the table shows every packet sent: at least `least`
    seconds, then until two listings 0.3 s apart agree (timeouts aside),
    at most `most` seconds. A loaded machine can keep a poller (nftdp's
    main lcore shares its core with the control thread) a while behind."""
    time.sleep(least)
    end = time.monotonic() + most
    prev = None
    while time.monotonic() < end:
        cur = sorted(norm(x)[0] for x in run_ct(["-L"]).stdout.splitlines() if x.strip())
        if cur == prev:
            return
        prev = cur
        time.sleep(0.3)


def run_side(run_ct, socks, macs, tmp, tag):
    """conntrack -E during the traffic, then the commands; returns outputs."""
    evpath = os.path.join(tmp, tag + ".events")
    evf = open(evpath, "w")
    ev = run_ct(["-E"], popen=evf)
    # -E listens once a probe flow's event shows; the probes are deleted
    # and their lines left out
    for i in range(100):
        send_all(socks, macs, [udp(False, 0, 20000 + i, PROBE_PORT)])
        time.sleep(0.1)
        if f"dport={PROBE_PORT}" in open(evpath).read():
            break
    run_ct(["-D", "-p", "udp", "--dport", str(PROBE_PORT)])
    send_all(socks, macs, sequences())
    settle(run_ct)
    out = {}
    for name, args in commands():
        r = run_ct(args)
        out[name] = (r.returncode, r.stdout, r.stderr)
    st = run_ct(["-S"])
    out["-S"] = st
    time.sleep(0.3)
    ev.send_signal(signal.SIGINT)
    try:
        ev.wait(timeout=5)
    except subprocess.TimeoutExpired:
        ev.kill()
        ev.wait()
    evf.close()
    out["events"] = "".join(x for x in open(evpath).readlines() if f"port={PROBE_PORT}" not in x)
    return out


# a connection in an event line: protocol and original tuple
CONN_RE = re.compile(r"\b([a-z0-9]+)\s+\d+\s+\d+\s+(?:[A-Z_]+\s+)?(src=\S+ dst=\S+ "
                     r"(?:sport=\d+ dport=\d+|type=\d+ code=\d+ id=\d+))")
TIMEOUT_RE = re.compile(r"^(\s*(?:\[\w+\]\s+)?\w+\s+\d+\s+)(\d+)(.*)$")
# an expectation's line starts with its timeout (an event's after its type)
EXPECT_TIMEOUT_RE = re.compile(r"^(\s*(?:\[\w+\]\s+)?)(\d+)(\s+proto=.*)$")


def norm(line):
    """(text with the timeout blanked, the timeout) for tolerance checks."""
    line = re.sub(r"portid=\d+( progname=\S+)?", "portid=N", line)
    m = TIMEOUT_RE.match(line) or EXPECT_TIMEOUT_RE.match(line)
    if not m:
        return (line, None)
    return (m.group(1) + "T" + m.group(3), int(m.group(2)))


def same_lines(a, b, ordered):
    la = [norm(x) for x in a.splitlines() if x.strip()]
    lb = [norm(x) for x in b.splitlines() if x.strip()]
    if not ordered:
        la.sort(key=lambda x: x[0])
        lb.sort(key=lambda x: x[0])
    if len(la) != len(lb):
        return False
    for (ta, va), (tb, vb) in zip(la, lb):
        if ta != tb or (va is None) != (vb is None) or (va is not None and abs(va - vb) > 3):
            return False
    return True


def show(name, k, o):
    print(f"--- {name}: kernel\n{k}--- {name}: nftdp\n{o}", end="")


def start_nftdp(tmp, prefix, lcores, mode):
    rules = os.path.join(tmp, "r.nft")
    with open(rules, "w") as f:
        f.write(RULESET)
    eal = T.eal_args(prefix, ["net_af_packet0,iface=da1", "net_af_packet1,iface=db1"], lcores)
    args = ["--socket", os.path.join(tmp, "nl.sock"), "--ruleset", rules, "--wire", "0:1",
            "--ifaddr", "1=" + MASQ4 + "/24", "--ct-sysctl", "nf_conntrack_acct=1"]
    daemon = T.Daemon(BUILD, eal, args, prefix, os.path.join(tmp, "nftdp.log"), ns=NS["d"],
                      pid_path=os.path.join(tmp, "pid"), limit=60)
    try:
        daemon.wait_started(marker="worker", timeout=15)
    except RuntimeError:
        pass  # exited, or no worker line: the check below says which
    check(daemon.alive(), mode + ": nftdp up")
    if not daemon.alive():
        print(daemon.log())
        return None
    return daemon


def stop_nftdp(daemon, tmp):
    daemon.stop(wait=10)
    try:
        os.unlink(os.path.join(tmp, "pid"))
    except OSError:
        pass


def kernel_and_nftdp(tag, side):
    """side(run, socks, macs) against the kernel's forwarding namespace,
    then against nftdp (one lcore, its worker on the main lcore, --wire 0:1):
    run(args) is the conntrack command line with args for that side, socks
    and macs are send_all's. Returns (the kernel's result, nftdp's result,
    whether the daemon's log holds no sanitizer report), or None when
    nftdp did not start. Leaves no namespace, daemon or folder behind."""
    tmp = tempfile.mkdtemp(prefix=f"nftdp-{tag}.")
    prefix = f"nftdp-{tag}-{PID}"
    daemon = None
    socks = []
    try:
        setup_kernel()
        ks = {0: packet_socket(NS["c"], "c0"), 1: packet_socket(NS["s"], "s0")}
        km = {0: (MAC_C, sh("cat", "/sys/class/net/f0/address", ns="fw").stdout.strip()),
              1: (MAC_S, sh("cat", "/sys/class/net/f1/address", ns="fw").stdout.strip())}
        socks += ks.values()
        kout = side(lambda a: T.in_ns(NS["fw"]) + ["timeout", "10", "conntrack"] + a, ks, km)
        setup_nftdp_ns()
        daemon = start_nftdp(tmp, prefix, ["-l", "0"], "nftdp")
        if daemon is None:
            return None
        env = T.nft_env(os.path.join(tmp, "nl.sock"), shim=T.shim_path(BUILD))
        ds = {0: packet_socket(NS["d"], "da0"), 1: packet_socket(NS["d"], "db0")}
        dm = {0: (MAC_C, "02:00:00:00:31:01"), 1: (MAC_S, "02:00:00:00:32:01")}
        socks += ds.values()
        envs = [f"{k}={env[k]}" for k in ("NFTDP_SOCKET", "LD_PRELOAD")]
        oout = side(lambda a: ["env"] + envs + T.in_ns(NS["d"]) + ["timeout", "10", "conntrack"] + a,
                    ds, dm)
        log = open(os.path.join(tmp, "nftdp.log")).read()
        return kout, oout, "Sanitizer" not in log and "runtime error" not in log
    finally:
        for sk in socks:
            sk.close()
        if daemon:
            stop_nftdp(daemon, tmp)
        cleanup()
        T.rm_runtime(prefix)
        shutil.rmtree(tmp, ignore_errors=True)


def compare(kout, oout, mode):
    for name, _ in commands():
        krc, kso, kse = kout[name]
        orc, oso, ose = oout[name]
        ordered = not name.startswith("list")
        ok = krc == orc and same_lines(kso, oso, ordered) and same_lines(kse, ose, True)
        check(ok, f"{mode}: conntrack {name}: same output and exit status ({krc}, "
                  f"{len([x for x in kso.splitlines() if x.strip()])} lines)")
        if not ok or VERBOSE:
            show(name, f"rc {krc}\n{kso}{kse}", f"rc {orc}\n{oso}{ose}")
    ok = kout["list"][1].count("\n") >= 12
    check(ok, mode + ": the kernel listed every connection (%d lines)" % kout["list"][1].count("\n"))
    # -S: counters differ by nature; one line per shard/cpu of the same fields
    kf = [re.sub(r"=\d+", "=", x.split("\t", 1)[-1]) for x in kout["-S"].stdout.splitlines()]
    of = [re.sub(r"=\d+", "=", x.split("\t", 1)[-1]) for x in oout["-S"].stdout.splitlines()]
    check(oout["-S"].returncode == 0 and len(of) == 1 and of[0] == kf[0],
          mode + ": conntrack -S: one line per worker with the kernel's fields")
    if VERBOSE or not of or of[0] != kf[0]:
        show("-S", kout["-S"].stdout, oout["-S"].stdout)
    # a connection's new and update events in the kernel's order; between
    # connections, and for a flush's destroys (the table's order), any order
    # (a burst confirms several connections' packets hook by hook)
    kev, oev = kout["events"].splitlines(), oout["events"].splitlines()

    def per_conn(ev):
        conns = {}
        for x in ev:
            if "[DESTROY]" in x:
                continue
            m = CONN_RE.search(x)
            conns.setdefault(m.group(1) + " " + m.group(2) if m else "", []).append(x)
        return conns

    def destroys(ev):
        return "\n".join(x for x in ev if "[DESTROY]" in x)
    kc, oc = per_conn(kev), per_conn(oev)
    ok = sorted(kc) == sorted(oc) and \
        all(same_lines("\n".join(kc[c]), "\n".join(oc[c]), True) for c in kc) and \
        same_lines(destroys(kev), destroys(oev), False)
    check(ok, mode + ": conntrack -E: the same events (%d), each connection's in the same order" %
          len(kev))
    if not ok or VERBOSE:
        show("events", kout["events"], oout["events"])


def main():
    if not T.is_root():
        T.skip("ct_tool: needs root (scratch network namespaces)")
    if not shutil.which("conntrack"):
        T.skip("ct_tool: no conntrack tool, skipped")
    tmp = tempfile.mkdtemp(prefix="nftdp-cttool.")
    prefix = f"nftdp-ctt-{PID}"
    daemon = None
    try:
        # ---- the kernel ----
        setup_kernel()
        ksocks = {0: packet_socket(NS["c"], "c0"), 1: packet_socket(NS["s"], "s0")}
        kmac = {0: (MAC_C, sh("cat", "/sys/class/net/f0/address", ns="fw").stdout.strip()),
                1: (MAC_S, sh("cat", "/sys/class/net/f1/address", ns="fw").stdout.strip())}

        def kernel_ct(args, popen=None):
            cmd = ["ip", "netns", "exec", NS["fw"], "conntrack"] + args
            if popen:
                return subprocess.Popen(cmd, stdout=popen, stderr=subprocess.DEVNULL)
            return subprocess.run(cmd, capture_output=True, text=True, timeout=15)

        kout = run_side(kernel_ct, ksocks, kmac, tmp, "kernel")

        # ---- nftdp: a worker lcore (requests take the mailbox), then the
        # main lcore as the worker (requests run on the control thread) ----
        setup_nftdp_ns()
        for mode, lcores in (("worker", ["--lcores", "0@0,1@1"]), ("main lcore", ["-l", "0"])):
            daemon = start_nftdp(tmp, prefix, lcores, mode)
            if daemon is None:
                return 1
            env = T.nft_env(os.path.join(tmp, "nl.sock"), shim=T.shim_path(BUILD))

            def nftdp_ct(args, popen=None):
                cmd = ["ip", "netns", "exec", NS["d"], "conntrack"] + args
                if popen:
                    return subprocess.Popen(cmd, stdout=popen, stderr=subprocess.DEVNULL,
                                            env=env)
                return subprocess.run(cmd, capture_output=True, text=True, timeout=15, env=env)

            dsocks = {0: packet_socket(NS["d"], "da0"), 1: packet_socket(NS["d"], "db0")}
            dmac = {0: (MAC_C, "02:00:00:00:31:01"), 1: (MAC_S, "02:00:00:00:32:01")}
            oout = run_side(nftdp_ct, dsocks, dmac, tmp, "nftdp")
            for sk in dsocks.values():
                sk.close()
            stop_nftdp(daemon, tmp)
            daemon = None
            log = open(os.path.join(tmp, "nftdp.log")).read()
            check("Sanitizer" not in log and "runtime error" not in log,
                  mode + ": no sanitizer report in the daemon's log")
            if VERBOSE:
                print(log)
            compare(kout, oout, mode)
    finally:
        if daemon:
            stop_nftdp(daemon, tmp)
        cleanup()
        T.rm_runtime(prefix)
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.report("ct_tool")


if __name__ == "__main__":
    sys.exit(main())
