#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""conntrack -I/-U/-L -z (ctnetlink's CT_NEW and CTRZERO) against the kernel
and against nftdp (issue 16: what conntrackd's state sync uses).

    ct_inject.py BUILD_DIR [-v]

The kernel side and the nftdp side are ct_tool.py's (a scratch namespace
forwarding between two veths; nftdp on net_af_packet ports, --wire 0:1,
the same ruleset, nf_conntrack_acct on). On each, with conntrack -E
running, the same commands: -I of TCP (ESTABLISHED, ASSURED), UDP with a
mark, IPv6, a zone, a TCP and a UDP entry with --dst-nat, a UDP entry with
--src-nat, an -I that exists (EEXIST) and one without a timeout; -U of a
mark, of a timeout, of a missing entry; -I expect of a master without a
helper (EOPNOTSUPP) and without a master (ENOENT), -F expect, -L expect;
-L with filters, -G; then one UDP
packet from the client to the --dst-nat entry's original destination must
leave towards the server with the translated address and port, and the
server's answer must come back from the original destination; then
-L -z, -L (counters zeroed), -D, -C, -F. Outputs and exit statuses must
be equal (listings sorted, timeouts within 3 s), and so must each entry's
events. nftdp runs three times: with a worker lcore (the mailbox), -l 0,
and two workers (each entry on the shard that owns its flow).
Exit 0 when all agree, 1 otherwise, 77 when not root.
"""

import os
import select
import socket
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ct_tool as CT  # noqa: E402
from ct_tool import C4, C6, S4, S6, T  # noqa: E402
from scapy.all import IP, UDP, Ether, Raw  # noqa: E402

VIP = "10.32.0.100"  # the --dst-nat entries' original destination
KEY = bytes([0x6d, 0x5a] * 20)  # nftdp's symmetric RSS key (nftdp_ct_tuple_rss)


def owner(src, dst, sport, dport, n=2):
    """The shard of n that owns a flow (Toeplitz over the IPv4 4-tuple)."""
    data = socket.inet_aton(src) + socket.inet_aton(dst) + sport.to_bytes(2, "big") + \
        dport.to_bytes(2, "big")
    k, klen, r = int.from_bytes(KEY, "big"), len(KEY) * 8, 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            r ^= (k >> (klen - 32 - i)) & 0xffffffff
    return r % n


def first(cands, ok):
    """The first candidate for which ok holds. The hash is linear, so the
    two directions' owners differ by what differs between them (a NAT
    address or port), whatever the client port: pick that."""
    return next(c for c in cands if ok(c))


# nftdp's NAT keeps the client port, as the kernel does, when the original
# and the translated reply direction have one owner of the two shards; with
# two workers it otherwise moves the port so that replies come back to the
# entry's shard (docs/conntrack.md, NAT). The test picks such bindings.
DNAT_PORT = first(range(5353, 6000),
                  lambda q: owner(C4, VIP, 41008, 53) == owner(C4, S4, 41008, q))
SNAT = first([f"10.32.0.{x}" for x in range(3, 250)],
             lambda a: owner(C4, S4, 41004, 5000) == owner(a, S4, 41004, 5000))
assert owner(C4, VIP, 41003, 80) == owner(C4, S4, 41003, 80)  # the TCP --dst-nat entry


def exp_args(master_sport):
    """conntrack -I expect: a data connection of master C4:sport > S4:80"""
    return ["-p", "tcp", "--orig-src", C4, "--orig-dst", S4, "--orig-port-src",
            str(master_sport), "--orig-port-dst", "80", "--tuple-src", S4, "--tuple-dst", C4,
            "--tuple-port-src", "0", "--tuple-port-dst", "50000", "--mask-src",
            "255.255.255.255", "--mask-dst", "255.255.255.255", "--mask-port-src", "0",
            "--mask-port-dst", "65535", "-t", "100"]


def cmds():
    tcp = ["-p", "tcp", "-s", C4, "-d", S4, "--sport", "41001", "--dport", "80"]
    udp = ["-p", "udp", "-s", C4, "-d", S4, "--sport", "41002", "--dport", "53"]
    return [
        ("insert tcp", ["-I"] + tcp + ["--state", "ESTABLISHED", "-t", "100",
                                       "-u", "ASSURED,SEEN_REPLY"]),
        ("insert tcp again", ["-I"] + tcp + ["--state", "ESTABLISHED", "-t", "100"]),
        ("insert udp mark", ["-I"] + udp + ["-t", "50", "-m", "7"]),
        ("insert tcp dnat", ["-I", "-p", "tcp", "-s", C4, "-d", VIP, "--sport", "41003",
                             "--dport", "80", "--state", "ESTABLISHED", "-t", "120",
                             "-u", "ASSURED,SEEN_REPLY", "--dst-nat", S4]),
        ("insert udp dnat", ["-I", "-p", "udp", "-s", C4, "-d", VIP, "--sport", "41008",
                             "--dport", "53", "-t", "120", "--dst-nat", f"{S4}:{DNAT_PORT}"]),
        ("insert udp snat", ["-I", "-p", "udp", "-s", C4, "-d", S4, "--sport", "41004",
                             "--dport", "5000", "-t", "60", "--src-nat", SNAT]),
        ("insert ipv6", ["-I", "-p", "udp", "-s", C6, "-d", S6, "--sport", "41005",
                         "--dport", "53", "-t", "30"]),
        ("insert no timeout", ["-I", "-p", "udp", "-s", C4, "-d", S4, "--sport", "41006",
                               "--dport", "53"]),
        ("insert zone", ["-I", "-p", "udp", "-s", C4, "-d", S4, "--sport", "41007",
                         "--dport", "53", "-t", "40", "-w", "7"]),
        ("update mark", ["-U"] + tcp + ["-m", "5"]),
        ("update timeout", ["-U"] + udp + ["-t", "500"]),
        ("update missing", ["-U", "-p", "tcp", "-s", C4, "-d", S4, "--sport", "1",
                            "--dport", "80", "-m", "5"]),
        # expectations: a master without a helper, none at all, a flush
        ("insert expect no helper", ["-I", "expect"] + exp_args(41001)),
        ("insert expect no master", ["-I", "expect"] + exp_args(1)),
        ("flush expect", ["-F", "expect"]), ("list expect", ["-L", "expect"]),
        ("list", ["-L"]), ("list mark 7", ["-L", "-m", "7"]), ("list zone 7", ["-L", "-w", "7"]),
        ("list assured", ["-L", "-u", "ASSURED"]),
        ("get dnat", ["-G", "-p", "tcp", "-s", C4, "-d", VIP, "--sport", "41003",
                      "--dport", "80"]),
    ]


def cmds_after():
    return [
        ("list zero", ["-L", "-z"]), ("list after zero", ["-L"]),
        ("delete tcp", ["-D", "-p", "tcp", "-s", C4, "-d", S4, "--sport", "41001",
                        "--dport", "80"]),
        ("count", ["-C"]), ("flush", ["-F"]), ("list after flush", ["-L"]),
    ]


def recv_udp(sock, port, timeout=3.0):
    """The first IPv4 UDP frame to or from port seen on sock, or None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([sock], [], [], max(0.0, end - time.monotonic()))
        if not r:
            break
        data, addr = sock.recvfrom(4096)
        if addr[2] == 4:  # PACKET_OUTGOING: what this test sent
            continue
        e = Ether(data)
        if e.haslayer(UDP) and e.haslayer(IP) and port in (e[UDP].sport, e[UDP].dport):
            return e
    return None


def translate(socks, macs, tag):
    """One request to VIP:53 through the injected dnat entry, its answer back."""
    out = []
    CT.send_all(socks, macs, [(0, IP(src=C4, dst=VIP, ttl=64) / UDP(sport=41008, dport=53) /
                               Raw(b"q" * 16))])
    e = recv_udp(socks[1], 41008)
    out.append(f"{tag}: request leaves as " +
               (f"{e[IP].src}:{e[UDP].sport} > {e[IP].dst}:{e[UDP].dport}" if e else "nothing"))
    CT.send_all(socks, macs, [(1, IP(src=S4, dst=C4, ttl=64) /
                               UDP(sport=DNAT_PORT, dport=41008) /
                               Raw(b"a" * 16))])
    e = recv_udp(socks[0], 41008)
    out.append(f"{tag}: answer arrives as " +
               (f"{e[IP].src}:{e[UDP].sport} > {e[IP].dst}:{e[UDP].dport}" if e else "nothing"))
    return out


def run_side(run_ct, socks, macs, tmp, tag):
    evpath = os.path.join(tmp, tag + ".events")
    evf = open(evpath, "w")
    ev = run_ct(["-E"], popen=evf)
    # -E listens once its probe entry's event shows
    for i in range(100):
        run_ct(["-I", "-p", "udp", "-s", C4, "-d", S4, "--sport", str(20000 + i), "--dport",
                str(CT.PROBE_PORT), "-t", "30"])
        time.sleep(0.1)
        if f"dport={CT.PROBE_PORT}" in open(evpath).read():
            break
    run_ct(["-D", "-p", "udp", "--dport", str(CT.PROBE_PORT)])
    out = {}
    for name, args in cmds():
        r = run_ct(args)
        out[name] = (r.returncode, r.stdout, r.stderr)
    out["translate"] = translate(socks, macs, tag)
    time.sleep(0.5)
    for name, args in cmds_after():
        r = run_ct(args)
        out[name] = (r.returncode, r.stdout, r.stderr)
    time.sleep(0.3)
    ev.send_signal(signal.SIGINT)
    try:
        ev.wait(timeout=5)
    except subprocess.TimeoutExpired:
        ev.kill()
        ev.wait()
    evf.close()
    out["events"] = "".join(x for x in open(evpath).readlines()
                            if f"port={CT.PROBE_PORT}" not in x)
    return out


def compare(kout, oout, mode):
    check = CT.check
    for name, _ in cmds() + cmds_after():
        krc, kso, kse = kout[name]
        orc, oso, ose = oout[name]
        ordered = not name.startswith("list")
        ok = krc == orc and CT.same_lines(kso, oso, ordered) and CT.same_lines(kse, ose, True)
        check(ok, f"{mode}: conntrack {name}: same output and exit status ({krc})")
        if not ok or CT.VERBOSE:
            CT.show(name, f"rc {krc}\n{kso}{kse}", f"rc {orc}\n{oso}{ose}")
    kt = [x.split(": ", 1)[1] for x in kout["translate"]]
    ot = [x.split(": ", 1)[1] for x in oout["translate"]]
    check(kt == [f"request leaves as {C4}:41008 > {S4}:{DNAT_PORT}",
                 f"answer arrives as {VIP}:53 > {C4}:41008"],
          f"{mode}: the kernel translates through its injected dnat entry: {kt}")
    check(ot == kt, f"{mode}: nftdp translates through the injected dnat entry: {ot}")
    kc, oc = {}, {}
    for ev, d in ((kout["events"], kc), (oout["events"], oc)):
        for x in ev.splitlines():
            m = CT.CONN_RE.search(x)
            d.setdefault(m.group(1) + " " + m.group(2) if m else "", []).append(x)
    ok = sorted(kc) == sorted(oc) and \
        all(CT.same_lines("\n".join(kc[c]), "\n".join(oc[c]), True) for c in kc)
    check(ok, f"{mode}: conntrack -E: the same events "
              f"({len(kout['events'].splitlines())}), each entry's in the same order")
    if not ok or CT.VERBOSE:
        CT.show("events", kout["events"], oout["events"])


def main():
    if not T.is_root():
        T.skip("ct_inject: needs root (scratch network namespaces)")
    if not shutil.which("conntrack"):
        T.skip("ct_inject: no conntrack tool, skipped")
    CT.BUILD = os.path.abspath(sys.argv[1])
    NS = CT.NS
    tmp = tempfile.mkdtemp(prefix="nftdp-ctinj.")
    prefix = f"nftdp-ctt-{CT.PID}"
    daemon = None
    try:
        CT.setup_kernel()
        ksocks = {0: CT.packet_socket(NS["c"], "c0"), 1: CT.packet_socket(NS["s"], "s0")}
        kmac = {0: (CT.MAC_C, CT.sh("cat", "/sys/class/net/f0/address", ns="fw").stdout.strip()),
                1: (CT.MAC_S, CT.sh("cat", "/sys/class/net/f1/address", ns="fw").stdout.strip())}

        def kernel_ct(args, popen=None):
            cmd = ["ip", "netns", "exec", NS["fw"], "conntrack"] + args
            if popen:
                return subprocess.Popen(cmd, stdout=popen, stderr=subprocess.DEVNULL)
            return subprocess.run(cmd, capture_output=True, text=True, timeout=15)

        kout = run_side(kernel_ct, ksocks, kmac, tmp, "kernel")
        CT.setup_nftdp_ns()
        # two workers: entries go to the shard that owns their flow, where
        # the steering brings the dnat entry's packets
        for mode, lcores in (("worker", ["--lcores", "0@0,1@1"]), ("main lcore", ["-l", "0"]),
                             ("two workers", ["--lcores", "0@0,1@1,2@1"])):
            daemon = CT.start_nftdp(tmp, prefix, lcores, mode)
            if daemon is None:
                return 1
            env = T.nft_env(os.path.join(tmp, "nl.sock"), shim=T.shim_path(CT.BUILD))

            def nftdp_ct(args, popen=None):
                cmd = ["ip", "netns", "exec", NS["d"], "conntrack"] + args
                if popen:
                    return subprocess.Popen(cmd, stdout=popen, stderr=subprocess.DEVNULL,
                                            env=env)
                return subprocess.run(cmd, capture_output=True, text=True, timeout=15, env=env)

            dsocks = {0: CT.packet_socket(NS["d"], "da0"), 1: CT.packet_socket(NS["d"], "db0")}
            dmac = {0: (CT.MAC_C, "02:00:00:00:31:01"), 1: (CT.MAC_S, "02:00:00:00:32:01")}
            oout = run_side(nftdp_ct, dsocks, dmac, tmp, "nftdp")
            for sk in dsocks.values():
                sk.close()
            CT.stop_nftdp(daemon, tmp)
            daemon = None
            log = open(os.path.join(tmp, "nftdp.log")).read()
            CT.check("Sanitizer" not in log and "runtime error" not in log,
                     mode + ": no sanitizer report in the daemon's log")
            if CT.VERBOSE:
                print(log)
            compare(kout, oout, mode)
    finally:
        if daemon:
            CT.stop_nftdp(daemon, tmp)
        CT.cleanup()
        T.rm_runtime(prefix)
        shutil.rmtree(tmp, ignore_errors=True)
    return CT.checks.report("ct_inject")


if __name__ == "__main__":
    sys.exit(main())
