#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Real TCP connections through SYNPROXY, on the kernel and on nftdp (issue 14).

    ct_synproxy_tcp.py BUILD_DIR [-v]

A client and a server namespace with real TCP stacks: on the kernel side
routed through a forwarding namespace, on nftdp's side through nftdp on
af_packet ports (--wire 0:1; each end's gateway is the other end's MAC),
both with nf_conntrack_tcp_loose=0 and checksum offload off on the ends
(so that nftdp's ports see whole checksums; the kernel's ends likewise).
Two passes: the issue's nft ruleset (IPv4: nft_synproxy_do_eval checks an
IPv6 segment with nf_ip_checksum, so IPv6 goes through the second pass
only), then the same through iptables-nft-restore and
ip6tables-nft-restore (xt_SYNPROXY, IPv4 and IPv6). In each pass, per
family, with the client's TCP timestamps on and off, one connection: the
handshake goes through the proxy (the cookie SYN-ACK, the SYN to the
server, the server's SYN-ACK answered by the ACK to the server and the
window update to the client), 3000 bytes go to the server and back, the
client closes (FIN both ways). Compared with the kernel: that the data came
back whole, `conntrack -L` of the connection once the data is back and
after the close (state, flags, tuples, counters' absence; the timeout
within 3 s), its `conntrack -E` events in order, a raw ctnetlink dump of
it (the attribute types in order, CTA_SYNPROXY's three fields, its and
tsoff zero exactly without timestamps; the values are each side's own
cookies), and the synproxy counters. About 30 s. Exit 0 when all checks
pass, 1 otherwise, 77 when not root or without the conntrack tool.
"""

import ctypes
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

CTA_TUPLE_ORIG, CTA_TUPLE_PROTO, CTA_PROTO_SRC_PORT, CTA_SYNPROXY = 1, 2, 2, 24


def attrs(buf):
    out, off = [], 0
    while off + 4 <= len(buf):
        n, t = struct.unpack_from("=HH", buf, off)
        if n < 4:
            break
        out.append((t & 0x3fff, buf[off + 4:off + n]))
        off += (n + 3) & ~3
    return out


def raw_dump(fam, sport):
    """(in the namespace, through the shim on nftdp) a raw ctnetlink
    dump: the entry whose original source port is sport, as the types of
    its attributes in order and CTA_SYNPROXY's (isn, its, tsoff)"""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)  # NETLINK_NETFILTER
    s.settimeout(5)
    s.bind((0, 0))
    af = socket.AF_INET if fam == 4 else socket.AF_INET6
    body = struct.pack("=BBH", af, 0, 0)
    # IPCTNL_MSG_CT_GET, NLM_F_REQUEST | NLM_F_DUMP
    s.send(struct.pack("=IHHII", 16 + len(body), (1 << 8) | 1, 1 | 0x300, 1, 0) + body)
    found = None
    while True:
        data = s.recv(65536)
        off = 0
        while off + 16 <= len(data):
            n, t, _f, _sq, _p = struct.unpack_from("=IHHII", data, off)
            if t in (2, 3):  # NLMSG_ERROR, NLMSG_DONE
                print(json.dumps(found))
                return 0
            top = attrs(data[off + 20:off + n])
            port = None
            for at, v in top:
                if at == CTA_TUPLE_ORIG:
                    for a2, v2 in attrs(v):
                        if a2 == CTA_TUPLE_PROTO:
                            for a3, v3 in attrs(v2):
                                if a3 == CTA_PROTO_SRC_PORT:
                                    port = struct.unpack(">H", v3)[0]
            if port == sport:
                sp = [struct.unpack(">I", v2)[0] for at, v in top if at == CTA_SYNPROXY
                      for _a2, v2 in attrs(v)]
                found = {"types": [at for at, _ in top], "synproxy": sp}
            off += (n + 3) & ~3


if __name__ == "__main__" and "--dump" in sys.argv:
    i = sys.argv.index("--dump")
    sys.exit(raw_dump(int(sys.argv[i + 1]), int(sys.argv[i + 2])))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ct_tool as CT  # noqa: E402

T = CT.T
CT.NS.update({k: f"nftdp-ctt-{CT.PID}-{k}" for k in ("dc", "ds")})
checks = T.Checks(flush=True)
check = checks.check
# only the client's SYN is untracked (`tcp flags syn` would take the
# server's SYN-ACK too, which synproxy then answers on both sides)
NFT_RULESET = """table inet x {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		tcp flags & (fin|syn|rst|ack) == syn notrack
	}
	chain fw {
		type filter hook forward priority filter; policy accept;
		ct state invalid,untracked synproxy mss 1460 wscale 7 timestamp sack-perm
		ct state invalid drop
	}
}
"""
IPT = """*raw
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
ADDR = {4: (CT.C4, CT.S4, "10.31.0.1", "10.32.0.1", 24),
        6: (CT.C6, CT.S6, "fd31::1", "fd32::1", 64)}
PAYLOAD = bytes((i * 7) & 0xff for i in range(3000))


def sh(*args, ns, check=True):
    """args inside netns ns (a full name; None: here)"""
    return T.sh(*args, ns=ns, check=check, timeout=30)


def in_netns(ns, fn):
    """fn() with this thread in netns ns (sockets keep it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:
            raise OSError(ctypes.get_errno(), "setns")
        return fn()
    finally:
        libc.setns(own, 0x40000000)
        os.close(fd)
        os.close(own)


def end(ns, dev, mac, fam_gw_mac):
    """a client or server end: dev up with mac, both addresses, the
    default routes by the gateways whose MAC is fam_gw_mac"""
    client = ns in (CT.NS["c"], CT.NS["dc"])
    sh("ip", "link", "set", dev, "address", mac, ns=ns)
    sh("ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off", ns=ns)
    sh("ip", "link", "set", dev, "up", ns=ns)
    for fam, (c, s, gc, gs, plen) in ADDR.items():
        me, gw = (c, gc) if client else (s, gs)
        extra = ["nodad"] if fam == 6 else []
        sh("ip", "-%d" % fam, "addr", "add", "%s/%d" % (me, plen), "dev", dev, *extra, ns=ns)
        if fam_gw_mac:
            sh("ip", "-%d" % fam, "neigh", "replace", gw, "lladdr", fam_gw_mac, "dev", dev,
               "nud", "permanent", ns=ns)
        sh("ip", "-%d" % fam, "route", "add", "default", "via", gw, "dev", dev, ns=ns)


def setup_kernel(kind, tmp):
    for n in ("fw", "c", "s"):
        sh("ip", "netns", "add", CT.NS[n], ns=None)
    sh("ip", "link", "add", "c0", "netns", CT.NS["c"], "type", "veth", "peer", "f0",
       "netns", CT.NS["fw"], ns=None)
    sh("ip", "link", "add", "s0", "netns", CT.NS["s"], "type", "veth", "peer", "f1",
       "netns", CT.NS["fw"], ns=None)
    fw = CT.NS["fw"]
    for c in ["sysctl -qw net.ipv4.ip_forward=1", "sysctl -qw net.ipv6.conf.all.forwarding=1",
              "sysctl -qw net.ipv4.conf.all.rp_filter=0",
              "sysctl -qw net.ipv4.conf.default.rp_filter=0",
              "sysctl -qw net.ipv6.conf.default.accept_dad=0",
              "sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0",
              "ip link set f0 up", "ip link set f1 up",
              "ip addr add 10.31.0.1/24 dev f0", "ip addr add 10.32.0.1/24 dev f1",
              "ip addr add fd31::1/64 dev f0 nodad", "ip addr add fd32::1/64 dev f1 nodad"]:
        sh(*c.split(), ns=fw)
    end(CT.NS["c"], "c0", CT.MAC_C, None)
    end(CT.NS["s"], "s0", CT.MAC_S, None)
    load(kind, tmp, fw, None)


def load(kind, tmp, ns, env):
    if kind == "nft":
        p = os.path.join(tmp, "r.nft")
        with open(p, "w") as f:
            f.write(NFT_RULESET)
        argv = ["nft", "-f", p]
        todo = [argv]
    else:
        todo = []
        for tool in ("iptables-nft-restore", "ip6tables-nft-restore"):
            p = os.path.join(tmp, tool + ".rules")
            with open(p, "w") as f:
                f.write(IPT)
            todo.append([tool, p])
    for argv in todo:
        r = subprocess.run(T.in_ns(ns) + argv, capture_output=True, text=True, timeout=30,
                           env=env)
        check(r.returncode == 0, "%s %s loads (%s)" % (kind, argv[0], r.stderr.strip()[-200:]))


def setup_nftdp_ends():
    d = CT.NS["d"]
    for n in ("dc", "ds"):
        sh("ip", "netns", "add", CT.NS[n], ns=None)
    sh("ip", "link", "set", "da0", "netns", CT.NS["dc"], ns=d)
    sh("ip", "link", "set", "db0", "netns", CT.NS["ds"], ns=d)
    # a wire: each end's gateway is the other end
    end(CT.NS["dc"], "da0", CT.MAC_C, CT.MAC_S)
    end(CT.NS["ds"], "db0", CT.MAC_S, CT.MAC_C)


def connection(cns, sns, fam, sport, ts, run_ct, run_dump, listen):
    """one connection client -> server:80; returns what is compared"""
    c, s = ADDR[fam][0], ADDR[fam][1]
    af = socket.AF_INET if fam == 4 else socket.AF_INET6
    sh("sysctl", "-qw", "net.ipv4.tcp_timestamps=%d" % (1 if ts else 0), ns=cns)
    r = {}
    ls = in_netns(sns, lambda: socket.create_server((s, 80), family=af))
    got = {}

    def serve():
        try:
            ls.settimeout(10)
            conn, _ = ls.accept()
            conn.settimeout(10)
            buf = b""
            while True:
                b = conn.recv(65536)
                if not b:
                    break
                buf += b
                conn.sendall(b)
            got["server"] = buf
            conn.close()
        except OSError as e:
            got["server error"] = str(e)

    th = threading.Thread(target=serve, daemon=True)
    ev = listen(fam, sport)
    time.sleep(0.5)  # subscribed before the first packet
    th.start()
    back = b""
    try:
        def mk():
            k = socket.socket(af, socket.SOCK_STREAM)
            k.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            k.bind((c, sport))
            return k
        k = in_netns(cns, mk)
        k.settimeout(10)
        k.connect((s, 80))
        k.sendall(PAYLOAD)
        while len(back) < len(PAYLOAD):
            b = k.recv(65536)
            if not b:
                break
            back += b
        time.sleep(0.3)
        r["established"] = entry(run_ct, fam, sport)
        r["raw"] = run_dump(fam, sport)
        k.shutdown(socket.SHUT_WR)
        while k.recv(65536):
            pass
        k.close()
    except OSError as e:
        r["client error"] = str(e)
    th.join(12)
    ls.close()
    time.sleep(0.5)
    r["closed"] = entry(run_ct, fam, sport)
    r["events"] = stop_listener(ev)
    r["data back"] = back == PAYLOAD
    r["data at server"] = got.get("server") == PAYLOAD
    return r


def entry(run_ct, fam, sport):
    """conntrack -L's line of the connection, timeout blanked"""
    out = run_ct(["-L", "-f", "ipv4" if fam == 4 else "ipv6", "-p", "tcp", "--sport",
                  str(sport)]).stdout
    return [CT.norm(x) for x in out.splitlines() if x.strip()]


def side(cns, sns, run_ct, run_dump, listen, fams):
    res = {}
    for fam in fams:
        for ts in (True, False):
            sport = 40100 + fam * 10 + (1 if ts else 0)
            name = "IPv%d %s timestamps" % (fam, "with" if ts else "without")
            t0 = time.time()
            res[name] = connection(cns, sns, fam, sport, ts, run_ct, run_dump, listen)
            # progress, so that a run past its time shows where it was
            print("(%s: %s in %.1f s)" % (cns, name, time.time() - t0), flush=True)
    return res


LISTENERS = []


def listen(ns, fam, sport, env):
    """conntrack -E for the connection from sport, in a process group of
    its own, until stop_listener"""
    f = tempfile.TemporaryFile("w+")
    p = subprocess.Popen(T.in_ns(ns) + ["timeout", "60", "conntrack", "-E", "-f",
                                        "ipv4" if fam == 4 else "ipv6", "-p", "tcp",
                                        "--sport", str(sport)],
                         stdout=f, stderr=subprocess.DEVNULL, text=True,
                         env=env, start_new_session=True)
    p.out = f
    LISTENERS.append(p)
    return p


def stop_listener(p):
    """SIGINT to the listener's group (conntrack -E prints what it has and
    exits, as ct_tool.py stops it), SIGKILL after 5 s; its output (a file:
    a pipe kept open by a conntrack that outlived `timeout` hung a run)"""
    try:
        os.killpg(p.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        T.kill_group(p)
    p.out.seek(0)
    out = p.out.read()
    p.out.close()
    if p in LISTENERS:
        LISTENERS.remove(p)
    return out


def dump(ns, fam, sport, env):
    r = subprocess.run(T.in_ns(ns) + [sys.executable, os.path.abspath(__file__), "--dump",
                                      str(fam), str(sport)],
                       capture_output=True, text=True, timeout=30, env=env)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"error": r.stdout + r.stderr}


def raw_view(d, ts):
    """what of the raw entry is compared: the attribute types in order,
    CTA_SYNPROXY's three values there, its and tsoff 0 exactly without
    timestamps (isn and the values are each side's own cookies)"""
    if not d or "types" not in d:
        return d
    sp = d["synproxy"]
    return {"types": d["types"], "synproxy fields": len(sp),
            "its and tsoff zero": len(sp) == 3 and sp[1] == 0 and sp[2] == 0,
            "isn non-zero": len(sp) == 3 and sp[0] != 0}


def kernel_stats():
    out = CT.sh("cat", "/proc/net/stat/synproxy", ns="fw").stdout.split("\n")
    names = out[0].split()
    total = dict.fromkeys(names, 0)
    for line in out[1:]:
        for n, v in zip(names, line.split()):
            total[n] += int(v, 16)
    return {"syn_received": total.get("clients_syn_received", total.get("syn_received", 0)),
            "cookie_valid": total["cookie_valid"]}


def same_entry(a, b):
    if len(a) != len(b):
        return False
    for (ta, va), (tb, vb) in zip(a, b):
        if ta != tb or (va is None) != (vb is None) or (va is not None and abs(va - vb) > 3):
            return False
    return True


def run(kind, tmp, prefix):
    fams = (4,) if kind == "nft" else (4, 6)
    daemon = None
    try:
        setup_kernel(kind, tmp)

        def kernel_ct(args):
            return subprocess.run(T.in_ns(CT.NS["fw"]) + ["conntrack"] + args,
                                  capture_output=True, text=True, timeout=15)

        def kernel_dump(fam, sport):
            return dump(CT.NS["fw"], fam, sport, None)

        def kernel_listen(fam, sport):
            return listen(CT.NS["fw"], fam, sport, None)

        k = side(CT.NS["c"], CT.NS["s"], kernel_ct, kernel_dump, kernel_listen, fams)
        kst = kernel_stats()

        CT.setup_nftdp_ns()
        setup_nftdp_ends()
        stats = os.path.join(tmp, "stats.json")
        extra = ["--ct-sysctl", "nf_conntrack_tcp_loose=0", "--ct-sysctl", "nf_conntrack_acct=0",
                 "--stats-json", stats]
        real_daemon = T.Daemon

        class LooseOff(real_daemon):
            def __init__(self, build, eal, args, *a, **kw):
                super().__init__(build, eal, args + extra, *a, **kw)

        CT.RULESET = ""
        T.Daemon = LooseOff
        try:
            daemon = CT.start_nftdp(tmp, prefix, ["-l", "0"], kind + ": nftdp")
        finally:
            T.Daemon = real_daemon
        if daemon is None:
            return
        env = T.nft_env(os.path.join(tmp, "nl.sock"), shim=T.shim_path(CT.BUILD))
        load(kind, tmp, CT.NS["d"], env)

        def nftdp_ct(args):
            return subprocess.run(T.in_ns(CT.NS["d"]) + ["conntrack"] + args,
                                  capture_output=True, text=True, timeout=15, env=env)

        def nftdp_dump(fam, sport):
            return dump(CT.NS["d"], fam, sport, env)

        def nftdp_listen(fam, sport):
            return listen(CT.NS["d"], fam, sport, env)

        o = side(CT.NS["dc"], CT.NS["ds"], nftdp_ct, nftdp_dump, nftdp_listen, fams)
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

    for name in k:
        kr, orr = k[name], o.get(name, {})
        tag = "%s: %s" % (kind, name)
        if CT.VERBOSE:
            print(tag, "\n  kernel:", kr, "\n  nftdp: ", orr)
        check(kr.get("data back") and kr.get("data at server"),
              tag + ": kernel: the data went there and back")
        check(orr.get("data back") and orr.get("data at server"),
              tag + ": nftdp: the data went there and back (%s)" % orr.get("client error", ""))
        ts = "without" not in name
        kv, ov = raw_view(kr.get("raw"), ts), raw_view(orr.get("raw"), ts)
        check(kv == ov and kv and kv.get("synproxy fields") == 3 and
              kv.get("its and tsoff zero") == (not ts),
              tag + ": raw ctnetlink dump: CTA_SYNPROXY where the kernel has it")
        if kv != ov or CT.VERBOSE:
            print("  kernel: %s\n  nftdp:  %s" % (kr.get("raw"), orr.get("raw")))
        ok = CT.same_lines(kr.get("events", ""), orr.get("events", ""), True) and \
            "[NEW]" in kr.get("events", "")
        check(ok, tag + ": conntrack -E: the kernel's events in its order (%d)" %
              len(kr.get("events", "").splitlines()))
        if not ok or CT.VERBOSE:
            print("  kernel:\n%s  nftdp:\n%s" % (kr.get("events"), orr.get("events")))
        for when in ("established", "closed"):
            ok = same_entry(kr.get(when, []), orr.get(when, []))
            check(ok and len(kr.get(when, [])) == 1,
                  tag + ": conntrack -L once %s: the kernel's entry" % when)
            if not ok or CT.VERBOSE:
                print("  kernel: %s\n  nftdp:  %s" % (kr.get(when), orr.get(when)))
    n = len(k)
    check(kst["cookie_valid"] >= n, "%s: kernel: %d valid cookies (%s)" % (kind, n, kst))
    check(ost.get("cookie_valid", 0) >= n, "%s: nftdp: %d valid cookies (%s)" % (kind, n, ost))
    check("Sanitizer" not in log and "runtime error" not in log,
          kind + ": no sanitizer report in the daemon's log")


def main():
    if not T.is_root():
        T.skip("ct_synproxy_tcp: needs root (scratch network namespaces)")
    for tool in ("conntrack", "ethtool"):
        if not shutil.which(tool):
            T.skip("ct_synproxy_tcp: no %s, skipped" % tool)
    tmp = tempfile.mkdtemp(prefix="nftdp-ctsyntcp.")
    prefix = f"nftdp-ctsyntcp-{os.getpid()}"
    # meson's SIGTERM at the time limit: the finally clauses still clean up
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        run("nft", tmp, prefix)
        if shutil.which("iptables-nft-restore") and shutil.which("ip6tables-nft-restore"):
            run("iptables", tmp, prefix)
        else:
            print("no iptables-nft-restore: the xt_SYNPROXY pass is skipped")
    finally:
        for p in list(LISTENERS):
            T.kill_group(p)
        CT.cleanup()
        T.rm_runtime(prefix)
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.report("ct_synproxy_tcp")


if __name__ == "__main__":
    sys.exit(main())
