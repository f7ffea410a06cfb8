#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""HA measurements (issue 16): an nftdp pair with conntrackd (FTFW) through
the shim, on the topology of tests/integration/conntrack/ha_failover.py
(af_packet ports behind bridges, one worker per box, a sync veth).

    sudo bench/ha/run.py BUILD_DIR [--rates 100,1000,3000] [--seconds 2]
                           [--no-external-cache]

1. sync: the client opens new TCP connections through A at each rate for
   --seconds; B's conntrackd external cache is read every 50 ms
   (`conntrackd -s`): entries replicated per second while they arrive, and
   the lag from the last connection made to the last one on B. CPU
   seconds of A's conntrackd and of A's nftdp control thread (the one that
   turns shard events into netlink messages) per 1000 connections.
2. failover: one connection echoes a line every 5 ms; A is killed, B
   commits (conntrackd -c -f -R -B) and the wire moves to B; the longest
   gap between two echoes is the failover gap the stream sees, with the
   commit's share. --no-external-cache: conntrackd writes each update into
   B's table as it arrives (DisableExternalCache On); the rows then count
   B's table (conntrack -C) and the commit at the failover has nothing to
   do.
Prints a markdown table; bench/results/ha.md says what was measured where.
"""

import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration", "conntrack"))
import ha_failover as H  # noqa: E402

T = H.T


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


RATES = [int(x) for x in arg("--rates", "100,1000,3000").split(",")]
SECONDS = float(arg("--seconds", "2"))
NO_EXT = "--no-external-cache" in sys.argv
if NO_EXT:
    H.FTFW_EXTRA = "\t\tDisableExternalCache On\n"


def ext_count(box):
    """B's conntrackd external cache: current active connections; without
    one (DisableExternalCache), B's conntrack table."""
    if NO_EXT:
        r = box.conntrack("-C")
        return int(r.stdout.strip() or -1)
    r = subprocess.run(T.in_ns(H.NS[box.name]) + ["conntrackd", "-C", box.conf, "-s"],
                       capture_output=True, text=True, timeout=10)
    part = r.stdout.split("cache external:", 1)
    if len(part) < 2:
        return -1
    for ln in part[1].splitlines():
        if ln.startswith("current active connections:"):
            return int(ln.split(":")[1])
    return -1


def cpu_s(pid, tid=None):
    """user+system CPU seconds of a process (or one of its threads)"""
    p = f"/proc/{pid}/task/{tid}/stat" if tid else f"/proc/{pid}/stat"
    f = open(p).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def real(pid):
    """the process a `timeout` wrapper runs"""
    kids = H.children(pid)
    return kids[0] if kids else pid


ACCEPTED, KEEP = [], []


def sink(ls):
    """accept and hold (the sync rows' connections say nothing)"""
    while True:
        try:
            ACCEPTED.append(ls.accept()[0])
        except OSError:
            return


def open_at(rate, seconds, port=7001):
    """rate new TCP connections a second through the wire, kept open."""
    socks, n, t0 = [], int(rate * seconds), time.monotonic()
    for i in range(n):
        due = t0 + i / rate
        d = due - time.monotonic()
        if d > 0:
            time.sleep(d)
        s = H.in_netns(H.NS["c"], lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        s.setblocking(False)
        try:
            s.connect((H.SRV, port))
        except BlockingIOError:
            pass
        socks.append(s)
    return socks, time.monotonic() - t0


def sync_rows(boxes):
    rows = []
    a, b = boxes["A"], boxes["B"]
    # nftdp's main thread is its control thread (--lcores 0@0,1@1: the
    # worker is lcore 1's thread)
    apid, cpid = real(a.daemon.pid()), real(a.ctd_pid())
    base = ext_count(b)
    for rate in RATES:
        c0, n0 = cpu_s(cpid), cpu_s(apid, apid)
        samples, stop = [], threading.Event()

        def poll():
            while not stop.is_set():
                samples.append((time.monotonic(), ext_count(b)))
                time.sleep(0.05)

        th = threading.Thread(target=poll, daemon=True)
        t0 = time.monotonic()
        th.start()
        socks, took = open_at(rate, SECONDS)
        t_last = time.monotonic()
        want = base + len(socks)
        end = t_last + 20
        while time.monotonic() < end and (not samples or samples[-1][1] < want):
            time.sleep(0.05)
        stop.set()
        th.join()
        c1, n1 = cpu_s(cpid), cpu_s(apid, apid)
        if "-v" in sys.argv:
            print(f"pids {apid} {cpid}: conntrackd {c0}->{c1} s, nftdp main {n0}->{n1} s")
        got = samples[-1][1] - base
        done = next((t for t, c in samples if c >= want), None)
        # replicated per second while connections arrive: B's growth over
        # the sending window
        in_win = [c for t, c in samples if t <= t_last]
        rep_rate = (in_win[-1] - base) / (t_last - t0) if in_win else 0
        rows.append((rate, len(socks), len(socks) / took, rep_rate, got,
                     max(0.0, done - t_last) if done else None,
                     (c1 - c0) * 1e6 / len(socks), (n1 - n0) * 1e6 / len(socks)))
        KEEP.extend(socks)  # open: B's commit at the failover takes them all
        time.sleep(1)
        base = ext_count(b)
    return rows


def failover(boxes):
    c = H.Conn("stream", H.SRV, 7000)
    stamps, stop = [], threading.Event()

    def run():
        i = 0
        while not stop.is_set():
            if c.echo(f"s{i}", timeout=30) is not None:
                stamps.append(time.monotonic())
            i += 1
            time.sleep(0.005)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    time.sleep(1.5)
    t_kill = time.monotonic()
    boxes["A"].kill()
    t0 = time.monotonic()
    boxes["B"].take_over()
    t_commit = time.monotonic() - t0
    H.wire("B")
    t_wire = time.monotonic()
    time.sleep(3)
    stop.set()
    th.join(timeout=35)
    gaps = [(b - a, a) for a, b in zip(stamps, stamps[1:])]
    gap, at = max(gaps) if gaps else (None, None)
    after = [s for s in stamps if s > t_wire]
    log = open(os.path.join(boxes["B"].dir, "conntrackd.log")).read().splitlines()
    com = [ln.split("]")[-1].strip() for ln in log if "Committed" in ln or "commit has taken" in ln]
    return gap, t_commit, (after[0] - t_wire) if after else None, com


def main():
    if not T.is_root():
        T.skip("bench/ha: needs root")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tmp = tempfile.mkdtemp(prefix="nftdp-habench.")
    boxes, listeners = {}, []
    try:
        H.setup()
        for port in (7000,):
            ls = H.in_netns(H.NS["s"], lambda: socket.create_server((H.SRV, port), backlog=4096))
            listeners.append(ls)
            threading.Thread(target=H.echo_server, args=(ls,), daemon=True).start()
        ls = H.in_netns(H.NS["s"], lambda: socket.create_server((H.SRV, 7001), backlog=4096))
        listeners.append(ls)
        threading.Thread(target=sink, args=(ls,), daemon=True).start()
        boxes = {b: H.Box(tmp, b, ["--lcores", "0@0,1@1"]) for b in ("A", "B")}
        for b in boxes.values():
            b.start()
        H.wire("A")
        time.sleep(0.5)
        rows = sync_rows(boxes)
        gap, commit, after_wire, com = failover(boxes)
        print("| new conn/s asked | made | made/s | replicated/s while arriving | on B "
              "| lag after last (s) | A conntrackd CPU ms/1000 | A nftdp main thread "
              "CPU ms/1000 |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            lag = f"{r[5]:.2f}" if r[5] is not None else "not all"
            print(f"| {r[0]} | {r[1]} | {r[2]:.0f} | {r[3]:.0f} | {r[4]} | {lag} | {r[6]:.0f} "
                  f"| {r[7]:.0f} |")
        print()
        print(f"failover: longest gap between echoes {gap:.3f} s; B's commit "
              f"(conntrackd -c -f -R -B) {commit:.3f} s; first echo "
              f"{after_wire:.3f} s after the wire moved" if gap is not None and after_wire
              is not None else f"failover: no echo after the wire moved (gap {gap})")
        print("B's conntrackd: " + "; ".join(com[-2:]))
    finally:
        for b in boxes.values():
            b.stop()
        for ls in listeners:
            ls.close()
        H.cleanup()
        subprocess.run(["rm", "-rf", tmp], timeout=30)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    sys.exit(main())
