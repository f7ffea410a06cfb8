#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Debian's conntrackd against the kernel and against nftdp through the
shim (issue 16): what conntrackd learns and reports must be the same.

    ct_conntrackd.py BUILD_DIR [-v]      (env SHIM: another shim)

In a scratch namespace (veths for nftdp's af_packet ports and a sync veth
pair), conntrackd (FTFW, NetlinkEventsReliable On, ExpectationSync On)
runs first on the kernel's table, then through the shim on nftdp's. On
each: conntrack -I of a TCP entry with a mark and of a UDP entry with
--dst-nat; then conntrackd -i (its internal cache, learnt from events),
-s runtime (netlink counters: no overrun, no failure), -s expect, -R
(a resync: conntrack and expectation dumps) and -i again, and -k. The
outputs must be equal (ages blanked; the sync link's byte counters, which
count conntrackd's timer messages, are left out). Exit 0 when equal, 1
otherwise, 77 when not root or without conntrackd.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
VERBOSE = "-v" in sys.argv
NS = f"nftdp-ctd-{os.getpid()}"
checks = T.Checks(flush=True)
INJECT = [["-I", "-p", "tcp", "-s", "10.1.0.2", "-d", "10.2.0.2", "--sport", "40000", "--dport",
           "80", "--state", "ESTABLISHED", "-u", "ASSURED", "-t", "300", "-m", "7"],
          ["-I", "-p", "udp", "-s", "10.1.0.2", "-d", "10.2.0.9", "--sport", "40001", "--dport",
           "53", "-t", "30", "--dst-nat", "10.2.0.3:5353"]]


def conf(d):
    return f"""Sync {{
	Options {{
		ExpectationSync On
	}}
	Mode FTFW {{
		ResendQueueSize 131072
	}}
	UDP {{
		IPv4_address 10.99.0.1
		IPv4_Destination_Address 10.99.0.2
		Port 3780
		Interface sy0
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


def side(tmp, tag, env):
    """conntrackd on the table env reaches; its answers, normalised."""
    d = os.path.join(tmp, tag)
    os.makedirs(d)
    cfg = os.path.join(d, "conntrackd.conf")
    with open(cfg, "w") as f:
        f.write(conf(d))
    ctl = os.path.join(d, "conntrackd.ctl")
    log = open(os.path.join(d, "out"), "w")
    p = subprocess.Popen(T.in_ns(NS) + ["timeout", "60", "conntrackd", "-C", cfg], env=env,
                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()
    end = time.monotonic() + 10
    while not os.path.exists(ctl) and p.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    checks.check(os.path.exists(ctl), f"{tag}: conntrackd up")
    time.sleep(0.5)
    for a in INJECT:
        r = subprocess.run(T.in_ns(NS) + ["conntrack"] + a, env=env, capture_output=True,
                           text=True, timeout=10)
        checks.check(r.returncode == 0, f"{tag}: conntrack {' '.join(a[:3])}")
    time.sleep(1)
    out = []

    def cmd(*a):
        r = subprocess.run(T.in_ns(NS) + ["conntrackd", "-C", cfg] + list(a), env=env,
                           capture_output=True, text=True, timeout=10)
        text = re.sub(r"\[active since \d+s\]", "", r.stdout + r.stderr)
        text = re.sub(r"daemon uptime: \d+ min", "daemon uptime", text)
        lines = [ln.rstrip() for ln in text.splitlines()
                 if "Bytes sent" not in ln and "Pckts sent" not in ln]
        if a[0] == "-i":
            lines.sort()
        out.append(f"== conntrackd {' '.join(a)} -> {r.returncode}")
        out.extend(lines)

    cmd("-i")
    cmd("-s", "runtime")
    cmd("-s", "expect")
    cmd("-R")
    time.sleep(1)
    cmd("-i")
    cmd("-i", "expect")
    cmd("-k")
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return out


def main():
    if not T.is_root():
        T.skip("ct_conntrackd: needs root (scratch network namespaces)")
    for tool in ("conntrackd", "conntrack"):
        if not shutil.which(tool):
            T.skip(f"ct_conntrackd: no {tool}, skipped (tools/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="nftdp-ctd.")
    daemon = None
    try:
        T.sh("ip", "netns", "add", NS)
        for a, b in (("da0", "da1"), ("db0", "db1"), ("sy0", "sy1")):
            T.sh("ip", "link", "add", a, "type", "veth", "peer", "name", b, ns=NS)
            T.sh("ip", "link", "set", a, "up", ns=NS)
            T.sh("ip", "link", "set", b, "up", ns=NS)
        T.sh("ip", "link", "set", "lo", "up", ns=NS)
        T.sh("ip", "addr", "add", "10.99.0.1/24", "dev", "sy0", ns=NS)
        T.sh("ip", "addr", "add", "10.99.0.2/24", "dev", "sy1", ns=NS)
        kout = side(tmp, "kernel", None)
        T.sh("conntrack", "-F", ns=NS, check=False)

        sock = os.path.join(tmp, "nl.sock")
        prefix = f"nftdp-ctd-{os.getpid()}"
        eal = T.eal_args(prefix, ["net_af_packet0,iface=da1", "net_af_packet1,iface=db1"],
                         ["-l", "0"])
        daemon = T.Daemon(BUILD, eal, ["--socket", sock, "--wire", "0:1"], prefix,
                          os.path.join(tmp, "nftdp.log"), ns=NS, limit=90)
        daemon.wait_started(marker="worker", sock=sock, timeout=20)
        oout = side(tmp, "nftdp", T.nft_env(sock, shim=T.shim_path(BUILD)))
        if VERBOSE or kout != oout:
            print("--- kernel\n" + "\n".join(kout) + "\n--- nftdp\n" + "\n".join(oout))
        checks.check(kout == oout, "conntrackd's answers are the kernel's")
        checks.check(any("mark=7" in ln for ln in oout) and
                     any("sport=5353" in ln for ln in oout),
                     "nftdp: conntrackd learnt both entries (mark, dnat binding)")
        checks.check(any(re.match(r"\s*netlink overrun:\s+0$", ln) for ln in oout),
                     "nftdp: no netlink overrun")
        log = daemon.log()
        checks.check("Sanitizer" not in log and "runtime error" not in log,
                     "no sanitizer report in the daemon's log")
    finally:
        if daemon:
            daemon.stop(wait=10)
        T.netns_del(NS)
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.report("ct_conntrackd")


if __name__ == "__main__":
    sys.exit(main())
