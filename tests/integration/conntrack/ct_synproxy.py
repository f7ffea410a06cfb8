#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""SYNPROXY against the kernel and against nftdp (issue 14).

    ct_synproxy.py BUILD_DIR [-v]

ct_tool.py's two sides (a kernel forwarding namespace; nftdp on af_packet
ports with --wire 0:1), both with nf_conntrack_tcp_loose=0 and the
issue's ruleset: SYNs notracked at raw priority, `ct state
invalid,untracked synproxy mss 1460 wscale 7 timestamp sack-perm` then
`ct state invalid drop` in forward. On each side a client (crafted
segments on a packet socket) sends:

- a SYN with MSS 1400, SACK-permitted, timestamps and window scale 6: the
  answer must come back to the client, nothing reach the server; its
  flags, ack, window, TTL, DF and options (kinds in order, MSS 1460,
  window scale 7, TSecr = the client's TSval, TSval's low bits carrying
  window scale 6 and SACK) are compared, the cookie itself is not (the
  secrets differ);
- 20 SYNs from spoofed sources: no conntrack entry on either side;
- an ACK whose cookie is wrong: dropped, nothing at the server;
- the ACK with the right cookie: both open the connection to the server
  with the same SYN (flags, seq = the client's ISN, ack = the proxy's own
  cookie, window, options with the MSS, window scale and SACK decoded from
  the cookies, TSval the client's, TSecr the proxy's TSval). Real
  connections through the proxy: ct_synproxy_tcp.py.

The counters (/proc/net/stat/synproxy in the kernel's namespace, the
daemon's --stats-json "synproxy") must agree: 21 SYNs received, 1 cookie
invalid, 1 valid. Last, an IPv6 SYN: the kernel's statement checks its
checksum with nf_ip_checksum (an IPv4 pseudo header over the IPv6
header), so on veths, which verify no checksum, it is dropped and not
counted; nftdp must do the same.

Then all of it again with the ruleset given to iptables-nft-restore
(`-j CT --notrack` for SYNs in raw, `-j SYNPROXY --sack-perm --timestamp
--wscale 7 --mss 1460` in FORWARD: xt_SYNPROXY through nft_compat; no
ip6tables rules, so the IPv6 SYN is forwarded on both sides), loaded
with --iptables-restore on nftdp. About 20 s. Exit 0 when all checks
pass, 1 otherwise, 77 when not root or without the conntrack tool.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ct_tool as CT  # noqa: E402
from scapy.all import IP, TCP, Ether, IPv6, raw  # noqa: E402

T = CT.T
CT.RULESET = """table inet x {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		tcp flags syn notrack
	}
	chain fw {
		type filter hook forward priority filter; policy accept;
		ct state invalid,untracked synproxy mss 1460 wscale 7 timestamp sack-perm
		ct state invalid drop
	}
}
"""
checks = T.Checks(flush=True)
check = checks.check
PACKET_OUTGOING = 4
TSVAL = 0x01020304


def drain(sock, secs):
    """frames that arrived on sock within secs (not the ones it sent)"""
    out, end = [], time.time() + secs
    sock.setblocking(False)
    while time.time() < end:
        try:
            data, addr = sock.recvfrom(65535)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        if addr[2] != PACKET_OUTGOING:
            out.append(Ether(data))
    return out


def tcp_of(frames):
    return [f for f in frames if f.haslayer(TCP) and (f.haslayer(IP) or f.haslayer(IPv6))]


def syn(sport, seq, src=CT.C4, v6=False):
    ip = IPv6(src=CT.C6, dst=CT.S6) if v6 else IP(src=src, dst=CT.S4, ttl=64)
    return ip / TCP(
        sport=sport, dport=80, flags="S", seq=seq, window=64240,
        options=[("MSS", 1400), ("SAckOK", b""), ("Timestamp", (TSVAL, 0)), ("NOP", None),
                 ("WScale", 6)])


def ack(sport, seq, ackno, tsecr):
    return IP(src=CT.C4, dst=CT.S4, ttl=64) / TCP(
        sport=sport, dport=80, flags="A", seq=seq, ack=ackno, window=502,
        options=[("NOP", None), ("NOP", None), ("Timestamp", (TSVAL + 1, tsecr))])


def send(socks, macs, d, p):
    src, dst = macs[d]
    socks[d].send(raw(Ether(src=src, dst=dst, type=0x86DD if p.haslayer(IPv6) else 0x800) / p))


def view(f):
    """what of a cookie SYN-ACK is compared: everything but the cookie and
    the time in TSval"""
    t = f[TCP]
    opts = []
    for k, v in t.options:
        if k == "Timestamp":
            opts.append((k, ("tsval low 6 bits", v[0] & 0x3f, "tsecr", v[1])))
        else:
            opts.append((k, v))
    if f.haslayer(IPv6):
        ip = f[IPv6]
        l3 = dict(src=ip.src, dst=ip.dst, hlim=ip.hlim, tc=ip.tc, fl=ip.fl)
    else:
        ip = f[IP]
        l3 = dict(src=ip.src, dst=ip.dst, ttl=ip.ttl, df=bool(ip.flags.DF), id=ip.id,
                  tos=ip.tos)
    return dict(l3, sport=t.sport, dport=t.dport, flags=str(t.flags), ack=t.ack, window=t.window,
                urgptr=t.urgptr, dataofs=t.dataofs, options=opts)


def side(socks, macs, run_ct):
    """the exchange; returns what is compared"""
    r = {}
    for s in socks.values():
        drain(s, 0.05)
    send(socks, macs, 0, syn(40000, 1000))
    got_c, got_s = tcp_of(drain(socks[0], 0.5)), tcp_of(drain(socks[1], 0.1))
    r["synack"] = [view(f) for f in got_c]
    r["syn at server"] = len(got_s)
    cookie = got_c[0][TCP].seq if got_c else 0
    ts = dict(got_c[0][TCP].options).get("Timestamp", (0, 0))[0] if got_c else 0
    # a flood from spoofed sources
    for i in range(20):
        send(socks, macs, 0, syn(41000 + i, 5000 + i, src="10.31.0.%d" % (100 + i)))
        time.sleep(0.005)
    drain(socks[0], 0.3)
    r["flood at server"] = len(tcp_of(drain(socks[1], 0.1)))
    lst = run_ct(["-L"])
    r["conntrack -L after the flood"] = lst.stdout.strip()
    # a forged cookie
    send(socks, macs, 0, ack(40000, 1001, (cookie + 0x12345) & 0xffffffff, ts))
    r["forged ack at server"] = len(tcp_of(drain(socks[1], 0.3)))
    # the right one
    send(socks, macs, 0, ack(40000, 1001, (cookie + 1) & 0xffffffff, ts))
    got_s = tcp_of(drain(socks[1], 0.5))
    r["server syn"] = [dict(flags=str(f[TCP].flags), seq=f[TCP].seq, ack=f[TCP].ack,
                            window=f[TCP].window,
                            options=[(k, (v[0], v[1] == ts) if k == "Timestamp" else v)
                                     for k, v in f[TCP].options]) for f in got_s]
    r["cookie"] = cookie
    # IPv6: the same SYN
    send(socks, macs, 0, syn(40001, 3000, v6=True))
    r["synack6"] = [view(f) for f in tcp_of(drain(socks[0], 0.5))]
    r["syn6 at server"] = len(tcp_of(drain(socks[1], 0.1)))
    return r


def kernel_stats():
    """/proc/net/stat/synproxy of the kernel side: per-CPU hex rows, summed"""
    out = CT.sh("cat", "/proc/net/stat/synproxy", ns="fw").stdout.split("\n")
    names = out[0].split()
    total = dict.fromkeys(names, 0)
    for line in out[1:]:
        for n, v in zip(names, line.split()):
            total[n] += int(v, 16)
    return {"syn_received": total.get("clients_syn_received", total.get("syn_received", 0)),
            "cookie_invalid": total["cookie_invalid"], "cookie_valid": total["cookie_valid"]}


IPTABLES = """*raw
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A PREROUTING -p tcp -m tcp --syn -j CT --notrack
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -p tcp -m conntrack --ctstate INVALID,UNTRACKED -j SYNPROXY --sack-perm --timestamp --wscale 7 --mss 1460
-A FORWARD -m conntrack --ctstate INVALID -j DROP
COMMIT
"""
NFT_RULESET = CT.RULESET


def run(kind, tmp, prefix):
    """one pass, kind "nft" (the ruleset above) or "iptables" (the same
    through iptables-nft-restore: xt_SYNPROXY); returns after its checks"""
    daemon = None
    tag = "" if kind == "nft" else "iptables: "
    ipt = os.path.join(tmp, "synproxy.v4")
    with open(ipt, "w") as f:
        f.write(IPTABLES)
    CT.RULESET = NFT_RULESET if kind == "nft" else ""
    try:
        CT.setup_kernel()
        CT.sh("sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_loose=0", ns="fw")
        if kind == "iptables":
            CT.sh("iptables-nft-restore", ipt, ns="fw")
        ks = {0: CT.packet_socket(CT.NS["c"], "c0"), 1: CT.packet_socket(CT.NS["s"], "s0")}
        km = {0: (CT.MAC_C, CT.sh("cat", "/sys/class/net/f0/address", ns="fw").stdout.strip()),
              1: (CT.MAC_S, CT.sh("cat", "/sys/class/net/f1/address", ns="fw").stdout.strip())}

        def kernel_ct(args):
            return subprocess.run(T.in_ns(CT.NS["fw"]) + ["conntrack"] + args,
                                  capture_output=True, text=True, timeout=15)

        k = side(ks, km, kernel_ct)
        for sk in ks.values():
            sk.close()
        kst = kernel_stats()

        CT.setup_nftdp_ns()
        stats = os.path.join(tmp, "stats.json")
        extra = ["--ct-sysctl", "nf_conntrack_tcp_loose=0", "--stats-json", stats]
        if kind == "iptables":
            extra += ["--iptables-restore", ipt]
        real_daemon = T.Daemon

        class LooseOff(real_daemon):
            """ct_tool's daemon with loose pickup off and the stats file"""

            def __init__(self, build, eal, args, *a, **kw):
                super().__init__(build, eal, args + extra, *a, **kw)

        T.Daemon = LooseOff
        try:
            daemon = CT.start_nftdp(tmp, prefix, ["-l", "0"], tag + "nftdp")
        finally:
            T.Daemon = real_daemon
        if daemon is None:
            return
        env = T.nft_env(os.path.join(tmp, "nl.sock"), shim=T.shim_path(CT.BUILD))

        def nftdp_ct(args):
            return subprocess.run(T.in_ns(CT.NS["d"]) + ["conntrack"] + args,
                                  capture_output=True, text=True, timeout=15, env=env)

        ds = {0: CT.packet_socket(CT.NS["d"], "da0"), 1: CT.packet_socket(CT.NS["d"], "db0")}
        dm = {0: (CT.MAC_C, "02:00:00:00:31:01"), 1: (CT.MAC_S, "02:00:00:00:32:01")}
        o = side(ds, dm, nftdp_ct)
        for sk in ds.values():
            sk.close()
        CT.stop_nftdp(daemon, tmp)
        daemon = None
        ost = {}
        try:
            with open(stats) as f:
                ost = json.load(f).get("synproxy", {})
        except (OSError, ValueError) as e:
            print("no stats: %s" % e)
        log = open(os.path.join(tmp, "nftdp.log")).read()
    finally:
        if daemon:
            CT.stop_nftdp(daemon, tmp)
        CT.cleanup()
        T.rm_runtime(prefix)

    if CT.VERBOSE:
        print(tag + "kernel:", k, kst, "\nnftdp:", o, ost)
    check(len(k["synack"]) == 1, tag + "kernel: one SYN-ACK back to the client")
    check(k["synack"] == o["synack"], tag + "the SYN-ACK as the kernel's (but the cookie)")
    if k["synack"] != o["synack"]:
        print("kernel: %s\nnftdp:  %s" % (k["synack"], o["synack"]))
    if kind == "nft":
        # nft_synproxy_do_eval checks an IPv6 segment with nf_ip_checksum
        # (IPv4's pseudo header): on veths, which verify nothing, it drops
        check(k["synack6"] == [] and o["synack6"] == [] and
              k["syn6 at server"] == 0 and o["syn6 at server"] == 0,
              "an IPv6 SYN is dropped on both sides (nf_ip_checksum on IPv6)")
    else:
        # no ip6tables rules: forwarded on both
        check(k["synack6"] == o["synack6"] == [] and k["syn6 at server"] == 1 and
              o["syn6 at server"] == 1, tag + "the IPv6 SYN forwarded on both sides")
    if k["synack6"] != o["synack6"]:
        print("kernel: %s\nnftdp:  %s" % (k["synack6"], o["synack6"]))
    for key in ("syn at server", "flood at server", "forged ack at server"):
        check(k[key] == 0 and o[key] == 0, "%s%s: none on either side" % (tag, key))
    for name, r in (("kernel", k), ("nftdp", o)):
        check(r["conntrack -L after the flood"] == "",
              "%s%s: no conntrack entry after the SYN flood (%r)" %
              (tag, name, r["conntrack -L after the flood"]))
    # the kernel opens the connection with the client's options
    check(len(k["server syn"]) == 1 and k["server syn"][0]["flags"] == "S" and
          k["server syn"][0]["seq"] == 1000 and k["server syn"][0]["ack"] == k["cookie"],
          tag + "kernel: the cookie ACK opens the connection to the server (SYN, seq = the "
          "client's ISN)")
    check("MSS" in [x for x, _ in (k["server syn"] or [{}])[0].get("options", [])],
          tag + "kernel: that SYN carries the client's options")
    # nftdp: the same SYN (its ack is its own cookie, TSecr its own TSval)
    same = len(o["server syn"]) == 1 and o["server syn"][0]["ack"] == o["cookie"] and \
        len(k["server syn"]) == 1 and \
        {x: y for x, y in o["server syn"][0].items() if x != "ack"} == \
        {x: y for x, y in k["server syn"][0].items() if x != "ack"}
    check(same, tag + "nftdp: the cookie ACK opens the connection to the server as the "
          "kernel's (flags, seq, ack = the cookie, window, options)")
    if not same:
        print("kernel: %s\nnftdp:  %s" % (k["server syn"], o["server syn"]))
    want = {"syn_received": 21, "cookie_invalid": 1, "cookie_valid": 1}
    check(kst == want, tag + "kernel: synproxy counters %s" % kst)
    check({x: ost.get(x) for x in want} == want, tag + "nftdp: synproxy counters %s" % ost)
    check("Sanitizer" not in log and "runtime error" not in log,
          tag + "no sanitizer report in the daemon's log")


def main():
    if not T.is_root():
        T.skip("ct_synproxy: needs root (scratch network namespaces)")
    if not shutil.which("conntrack"):
        T.skip("ct_synproxy: no conntrack tool, skipped")
    tmp = tempfile.mkdtemp(prefix="nftdp-ctsyn.")
    prefix = f"nftdp-ctsyn-{os.getpid()}"
    try:
        run("nft", tmp, prefix)
        if shutil.which("iptables-nft-restore"):
            run("iptables", tmp, prefix)
        else:
            print("no iptables-nft-restore: the xt_SYNPROXY pass is skipped")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.report("ct_synproxy")


if __name__ == "__main__":
    sys.exit(main())
