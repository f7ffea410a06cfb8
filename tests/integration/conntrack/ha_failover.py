#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""An active-backup pair: two nftdp, each with Debian's conntrackd (FTFW)
through the shim, and live TCP connections that survive the failover
(issue 16).

    ha_failover.py BUILD_DIR [-v]      (env SHIM: another shim)

Namespaces (all scratch, deleted at exit): c (the client, 10.40.0.2), s (the
server, 10.40.0.3), sw (two bridges: brc for the client's side, brs for the
server's), A and B (one nftdp each on net_af_packet ports, --wire 0:1, whose
veth peers are ports of brc and brs; conntrackd on a sync veth syA--syB,
10.99.0.1--10.99.0.2). Only the active box's bridge ports are up: "moving
the wire" sets the other box's up and the dead one's down.

The ruleset drops everything that is not established except a client's SYN
(so a connection that lost its entry cannot be picked up mid-stream), dnats
10.40.0.100:80 to the server's 8080 and snats the client's connections to
port 9000 to 10.40.0.50. Through A: three plain TCP connections, one to the
dnat address, one snat'd; each echoes a line. Then A (nftdp and its
conntrackd) is killed with SIGKILL; B commits what its conntrackd learnt
(`conntrackd -c`, then -f, -R, -B as keepalived's primary-backup.sh does);
the test checks B's table (conntrack -L through the shim: every
connection, ESTABLISHED, ASSURED, the NAT bindings, timeouts within 60 s of
what was set); the wire moves to B and every connection echoes again (the
same sockets: no new handshake, the client's address and the dnat target
as before). Then A comes back, asks B for its state (`conntrackd -n`),
commits it, the wire moves back, and every connection echoes once more.
All of it twice: one worker on each box, then two (the NAT bindings A
chose for its shards are the ones B needs: equal worker counts, one
symmetric RSS key). Exit 0 when all hold, 1 otherwise, 77 when not root
or without conntrackd.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
VERBOSE = "-v" in sys.argv
PID = os.getpid()
NS = {k: f"nftdp-ha-{PID}-{k}" for k in ("c", "s", "sw", "A", "B")}
CLI, SRV, VIP, SNAT = "10.40.0.2", "10.40.0.3", "10.40.0.100", "10.40.0.50"
MAC_C, MAC_S = "02:00:00:00:40:02", "02:00:00:00:40:03"
SYNC = {"A": ("10.99.0.1", "10.99.0.2"), "B": ("10.99.0.2", "10.99.0.1")}
RULESET = f"""table inet f {{
	chain forward {{
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		iifname "dp0" tcp flags & (fin | syn | rst | ack) == syn ct state new accept
	}}
}}
table ip nat {{
	chain pre {{
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr {VIP} tcp dport 80 dnat to {SRV}:8080
	}}
	chain post {{
		type nat hook postrouting priority srcnat; policy accept;
		ip saddr {CLI} tcp dport 9000 snat to {SNAT}
	}}
}}
"""
# TCP established as nftdp sets it (nf_conntrack_tcp_timeout_established)
EST_TIMEOUT = 432000
FTFW_EXTRA = ""  # more Mode FTFW lines (bench/ha/run.py)
checks = T.Checks(flush=True)
check = checks.check


def conf(tmp, box):
    """conntrackd.conf for box (A or B): FTFW over the sync veth, its own
    lock, log and control socket; docs/ha.md explains each line."""
    me, peer = SYNC[box]
    d = os.path.join(tmp, box)
    return f"""Sync {{
	Mode FTFW {{
		ResendQueueSize 131072
		PurgeTimeout 5
		StartupResync on
{FTFW_EXTRA}	}}
	UDP {{
		IPv4_address {me}
		IPv4_Destination_Address {peer}
		Port 3780
		Interface sy{box}
		SndSocketBuffer 1249280
		RcvSocketBuffer 1249280
		Checksum on
	}}
}}
General {{
	Systemd off
	HashSize 8192
	HashLimit 65536
	LogFile {d}/conntrackd.log
	Syslog off
	LockFile {d}/conntrackd.lock
	UNIX {{
		Path {d}/conntrackd.ctl
	}}
	NetlinkBufferSize 2097152
	NetlinkBufferSizeMaxGrowth 8388608
	NetlinkEventsReliable On
	Filter From Userspace {{
		Protocol Accept {{
			TCP
			UDP
		}}
	}}
}}
"""


def sh(*args, ns=None, check=True, **kw):
    return T.sh(*args, ns=NS[ns] if ns else None, check=check, timeout=30, **kw)


def cleanup():
    T.netns_del(*NS.values())


def setup():
    for n in NS.values():
        sh("ip", "netns", "add", n)
    for k in NS:
        sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=k)
        sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=k)
        sh("ip", "link", "set", "lo", "up", ns=k)
    for br in ("brc", "brs"):
        sh("ip", "link", "add", br, "type", "bridge", ns="sw")
        sh("ip", "link", "set", br, "up", ns="sw")
    # the hosts: full checksums (nftdp's af_packet ports see what the veth
    # carries), no offloads
    for h, dev, mac, ip, br in (("c", "c0", MAC_C, CLI, "brc"), ("s", "s0", MAC_S, SRV, "brs")):
        sh("ip", "link", "add", dev, "address", mac, "netns", NS[h], "type", "veth", "peer",
           "name", "sw" + h, ns="sw")
        sh("ip", "link", "set", "sw" + h, "master", br, "up", ns="sw")
        sh("ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off", ns=h)
        sh("ip", "addr", "add", ip + "/24", "dev", dev, ns=h)
        sh("ip", "link", "set", dev, "up", ns=h)
    sh("ip", "neigh", "replace", SRV, "lladdr", MAC_S, "dev", "c0", "nud", "permanent", ns="c")
    sh("ip", "neigh", "replace", VIP, "lladdr", MAC_S, "dev", "c0", "nud", "permanent", ns="c")
    sh("ip", "neigh", "replace", CLI, "lladdr", MAC_C, "dev", "s0", "nud", "permanent", ns="s")
    sh("ip", "neigh", "replace", SNAT, "lladdr", MAC_C, "dev", "s0", "nud", "permanent", ns="s")
    for box in ("A", "B"):
        for p, br in (("0", "brc"), ("1", "brs")):
            port = f"{box}{p}"
            sh("ip", "link", "add", "p" + p, "netns", NS[box], "type", "veth", "peer", "name",
               port, ns="sw")
            sh("ip", "link", "set", port, "master", br, ns="sw")
            sh("ethtool", "-K", "p" + p, "tx", "off", "tso", "off", "gso", "off", "gro", "off",
               ns=box)
            sh("ip", "link", "set", "p" + p, "up", ns=box)
    sh("ip", "link", "add", "syA", "netns", NS["A"], "type", "veth", "peer", "name", "syB",
       "netns", NS["B"])
    for box in ("A", "B"):
        sh("ip", "addr", "add", SYNC[box][0] + "/24", "dev", "sy" + box, ns=box)
        sh("ip", "link", "set", "sy" + box, "up", ns=box)


def wire(active):
    """Only the active box's bridge ports carry traffic."""
    for box in ("A", "B"):
        for p in ("0", "1"):
            sh("ip", "link", "set", f"{box}{p}", "up" if box == active else "down", ns="sw")


def children(pid):
    """pid's child processes (timeout's: the process it bounds)"""
    try:
        return [int(x) for x in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except (OSError, ValueError):
        return []


class Box:
    """One firewall: nftdp on ports p0, p1 and conntrackd through the shim."""

    def __init__(self, tmp, name, lcores):
        self.lcores = lcores
        self.name, self.dir = name, os.path.join(tmp, name)
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(self.dir, "nl.sock")
        self.conf = os.path.join(self.dir, "conntrackd.conf")
        with open(self.conf, "w") as f:
            f.write(conf(tmp, name))
        with open(os.path.join(self.dir, "r.nft"), "w") as f:
            f.write(RULESET)
        self.env = T.nft_env(self.sock, shim=T.shim_path(BUILD))
        self.daemon = self.ctd = None

    def start(self):
        for p in (self.sock, os.path.join(self.dir, "conntrackd.ctl"),
                  os.path.join(self.dir, "conntrackd.lock")):
            if os.path.exists(p):
                os.unlink(p)
        prefix = f"nftdp-ha-{PID}-{self.name}"
        eal = T.eal_args(prefix, ["net_af_packet0,iface=p0", "net_af_packet1,iface=p1"],
                         self.lcores)
        args = ["--socket", self.sock, "--ruleset", os.path.join(self.dir, "r.nft"),
                "--wire", "0:1"]
        self.daemon = T.Daemon(BUILD, eal, args, prefix, os.path.join(self.dir, "nftdp.log"),
                               ns=NS[self.name], limit=300)
        self.daemon.wait_started(marker="worker", sock=self.sock, timeout=20)
        log = open(os.path.join(self.dir, "conntrackd.out"), "a")
        self.ctd = subprocess.Popen(
            T.in_ns(NS[self.name]) + ["sh", "-c", 'echo $$ >"$0"; exec "$@"',
                                      os.path.join(self.dir, "ctd.pid"), "timeout", "300",
                                      "conntrackd", "-C", self.conf],
            env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        ctl = os.path.join(self.dir, "conntrackd.ctl")
        end = time.monotonic() + 10
        while not os.path.exists(ctl) and time.monotonic() < end and self.ctd.poll() is None:
            time.sleep(0.05)
        check(os.path.exists(ctl), f"{self.name}: conntrackd runs through the shim")

    def ctd_pid(self):
        try:
            return int(open(os.path.join(self.dir, "ctd.pid")).read())
        except (OSError, ValueError):
            return None

    def kill(self):
        """The box dies: SIGKILL to nftdp and to conntrackd (the processes
        themselves: SIGKILL to the `timeout` that bounds them would leave
        them running)."""
        for pid in (self.ctd_pid() if self.ctd and self.ctd.poll() is None else None,
                    self.daemon.pid() if self.daemon and self.daemon.alive() else None):
            if pid:
                for p in children(pid) + [pid]:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        if self.ctd:
            self.ctd.wait(timeout=10)
        if self.daemon:
            self.daemon.stop(wait=5, sig=signal.SIGKILL)
        self.daemon = self.ctd = None

    def stop(self):
        pid = self.ctd_pid()
        if self.ctd and self.ctd.poll() is None and pid:
            os.kill(pid, signal.SIGTERM)
            try:
                self.ctd.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(pid, signal.SIGKILL)
                self.ctd.wait(timeout=10)
        if self.daemon:
            self.daemon.stop(wait=10)
        self.daemon = self.ctd = None

    def ctd_cmd(self, *args):
        """conntrackd's control commands (its unix socket; through the shim
        since -c/-R open netlink themselves)."""
        r = subprocess.run(T.in_ns(NS[self.name]) + ["conntrackd", "-C", self.conf] +
                           list(args), env=self.env, capture_output=True, text=True,
                           timeout=20)
        if VERBOSE:
            print(f"{self.name}: conntrackd {' '.join(args)} -> {r.returncode}\n"
                  f"{r.stdout}{r.stderr}", end="")
        return r

    def conntrack(self, *args):
        return subprocess.run(T.in_ns(NS[self.name]) + ["conntrack"] + list(args),
                              env=self.env, capture_output=True, text=True, timeout=15)

    def take_over(self):
        """keepalived's primary-backup.sh, `primary`: commit the external
        cache, flush the caches, resync the internal one with the table,
        send a bulk update to the peer."""
        for a in ("-c", "-f", "-R", "-B"):
            r = self.ctd_cmd(a)
            check(r.returncode == 0, f"{self.name}: conntrackd {a} ({r.stderr.strip()[-200:]})")


def in_netns(ns, fn):
    """fn() with this thread in netns ns (sockets keep it)."""
    libc = T.ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:
            raise OSError(T.ctypes.get_errno(), "setns")
        return fn()
    finally:
        libc.setns(own, 0x40000000)
        os.close(fd)
        os.close(own)


def echo_server(ls):
    """Accept and echo on a listening socket until it closes; each
    connection answers every line with `peer-address line`."""
    def serve(c, peer):
        f = c.makefile("rwb", buffering=0)
        try:
            for line in f:
                f.write(f"{peer[0]}:{peer[1]} ".encode() + line)
        except OSError:
            pass

    while True:
        try:
            c, peer = ls.accept()
        except OSError:
            return
        threading.Thread(target=serve, args=(c, peer), daemon=True).start()


class Conn:
    """One client connection: name, its socket, what the server saw as its
    peer at the first echo."""

    def __init__(self, name, dst, dport):
        self.name, self.dst, self.dport = name, dst, dport
        self.sock = in_netns(NS["c"], lambda: socket.create_connection((dst, dport), timeout=5))
        self.sport = self.sock.getsockname()[1]
        self.f = self.sock.makefile("rwb", buffering=0)
        self.peer = None

    def echo(self, what, timeout=8):
        """A line there and back within timeout: the server's view of the
        peer, or None."""
        self.sock.settimeout(timeout)
        try:
            self.f.write(what.encode() + b"\n")
            line = self.f.readline().decode()
        except OSError:
            return None
        if not line.endswith(" " + what + "\n"):
            return None
        return line.split(" ")[0]


def entries(box):
    r = box.conntrack("-L", "-p", "tcp")
    return [ln for ln in r.stdout.splitlines() if ln.startswith("tcp")]


def field(line, key, n=0):
    """the n-th value of key= in a conntrack -L line"""
    vals = [w.split("=", 1)[1] for w in line.split() if w.startswith(key + "=")]
    return vals[n] if n < len(vals) else None


def check_table(box, conns, tag):
    lines = entries(box)
    if VERBOSE:
        print(f"{box.name} table:\n" + "\n".join(lines))
    for c in conns:
        mine = [ln for ln in lines if field(ln, "sport") == str(c.sport) and
                field(ln, "dport") == str(c.dport)]
        if not check(len(mine) == 1, f"{tag}: {box.name} has {c.name}'s entry"):
            continue
        ln = mine[0]
        w = ln.split()
        check(w[3] == "ESTABLISHED" and "[ASSURED]" in ln,
              f"{tag}: {c.name} ESTABLISHED, ASSURED ({w[3]})")
        check(EST_TIMEOUT - 60 <= int(w[2]) <= EST_TIMEOUT,
              f"{tag}: {c.name} timeout {w[2]} within 60 s of {EST_TIMEOUT}")
        rsrc, rdst = field(ln, "src", 1), field(ln, "dst", 1)
        if c.name == "dnat":
            check(rsrc == SRV and field(ln, "sport", 1) == "8080",
                  f"{tag}: dnat binding kept ({rsrc}:{field(ln, 'sport', 1)})")
        elif c.name == "snat":
            check(rdst == SNAT, f"{tag}: snat binding kept ({rdst})")
        else:
            check(rsrc == SRV and rdst == CLI, f"{tag}: {c.name} not translated")
    check(len(lines) == len(conns), f"{tag}: {box.name} holds {len(lines)} TCP entries, "
          f"{len(conns)} expected")


def echo_all(conns, tag, want_peer):
    for c in conns:
        got = c.echo(tag)
        check(got is not None, f"{tag}: {c.name} echoes through the same socket")
        if got is not None and c.name in want_peer:
            check(got.split(":")[0] == want_peer[c.name],
                  f"{tag}: {c.name}: the server sees {got}, as before")


def scenario(boxes, mode):
    """Connections through A, A dies, B takes over, A comes back."""
    for b in boxes.values():
        b.start()
    wire("A")
    time.sleep(0.5)
    conns = [Conn("tcp1", SRV, 7000), Conn("tcp2", SRV, 7000), Conn("tcp3", SRV, 7000),
             Conn("dnat", VIP, 80), Conn("snat", SRV, 9000)]
    peers = {}
    for c in conns:
        got = c.echo(f"through-A ({mode})")
        check(got is not None, f"{mode}: through A: {c.name} echoes")
        peers[c.name] = got.split(":")[0] if got else None
    check(peers.get("snat") == SNAT,
          f"{mode}: through A: the server sees snat's {peers.get('snat')}")
    check(peers.get("dnat") == CLI, f"{mode}: through A: dnat's client address kept")
    time.sleep(1.5)  # conntrackd A's events reach B
    check_table(boxes["A"], conns, f"{mode}: A")

    # ---- A dies; B takes over ----
    boxes["A"].kill()
    t0 = time.monotonic()
    boxes["B"].take_over()
    check_table(boxes["B"], conns, f"{mode}: B after commit")
    wire("B")
    echo_all(conns, f"through-B ({mode})", peers)
    print(f"{mode}: failover: {time.monotonic() - t0:.2f} s from A's death to every echo via B")

    # ---- A comes back, gets the state from B, takes over again ----
    boxes["A"].start()
    time.sleep(1)
    r = boxes["A"].ctd_cmd("-n")
    check(r.returncode == 0, f"{mode}: A: conntrackd -n (resync from B)")
    time.sleep(1.5)
    boxes["A"].take_over()
    check_table(boxes["A"], conns, f"{mode}: A after commit")
    wire("A")
    boxes["B"].ctd_cmd("-t")  # B: back to backup (keepalived's `backup`)
    echo_all(conns, f"back-through-A ({mode})", peers)
    for c in conns:
        c.sock.close()


def main():
    if not T.is_root():
        T.skip("ha_failover: needs root (scratch network namespaces)")
    for tool in ("conntrackd", "conntrack", "ethtool"):
        if not shutil.which(tool):
            T.skip(f"ha_failover: no {tool}, skipped (tools/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="nftdp-ha.")
    boxes, listeners = {}, []
    try:
        setup()
        for port in (7000, 8080, 9000):
            ls = in_netns(NS["s"], lambda: socket.create_server((SRV, port)))
            listeners.append(ls)
            threading.Thread(target=echo_server, args=(ls,), daemon=True).start()
        for mode, lcores in (("one worker", ["-l", "0"]),
                             ("two workers", ["--lcores", "0@0,1@1,2@1"])):
            print(f"---- {mode} on each box")
            boxes = {b: Box(tmp, b, lcores) for b in ("A", "B")}
            scenario(boxes, mode)
            for b in boxes.values():
                b.stop()
    except Exception as e:  # noqa: BLE001 (report, then clean up)
        check(False, f"exception: {e!r}")
        for b in boxes.values():
            for f in ("nftdp.log", "conntrackd.log", "conntrackd.out"):
                p = os.path.join(b.dir, f)
                if os.path.exists(p):
                    print(f"--- {b.name} {f}\n" + open(p, errors="replace").read()[-2000:])
    finally:
        for b in boxes.values():
            b.stop()
        for ls in listeners:
            ls.close()
        cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.report("ha_failover")


if __name__ == "__main__":
    sys.exit(main())
