#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Exact pass/drop check of one run of traffic through nftdp.

Compares what nftdp-gen sent and received (its --json, counts by TCP and
UDP destination port) with the rules that drop whole (protocol, port)
classes: every other class must arrive exactly as often as it was sent,
the dropped ones never; nftdp's --stats-json totals must agree, and if a
`nft -j list ruleset` listing is given, each `PROTO dport PORT counter drop`
rule's counter must equal what was sent to that class.

usage: check_counts.py GEN.json STATS.json --drop udp:5001 [--drop tcp:5003]
                       [--count N] [--listing LIST.json]
exit 0 if exact, 1 with the differences otherwise.
"""
import argparse
import json
import sys


def rule_counters(listing):
    """{(proto, port): packets} of rules 'PROTO dport PORT counter drop'"""
    out = {}
    for item in listing.get("nftables", []):
        rule = item.get("rule")
        if rule is None:
            continue
        key, packets, drop = None, None, False
        for e in rule.get("expr", []):
            m = e.get("match")
            if m and m.get("op") == "==" and isinstance(m.get("right"), int):
                left = m.get("left", {}).get("payload", {})
                if left.get("field") == "dport" and left.get("protocol") in ("tcp", "udp"):
                    key = (left["protocol"], str(m["right"]))
            if "counter" in e:
                packets = e["counter"]["packets"]
            if "drop" in e:
                drop = True
        if key and drop and packets is not None:
            out[key] = packets
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gen")
    ap.add_argument("stats")
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--count", type=int)
    ap.add_argument("--listing")
    a = ap.parse_args()
    gen = json.load(open(a.gen))
    st = json.load(open(a.stats))
    dropped = {tuple(d.split(":")) for d in a.drop}
    bd = gen["by_dport"]
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)

    if a.count is not None:
        check(gen["tx_packets"] == a.count, f"sent {gen['tx_packets']} of {a.count}")
    filtered = 0
    sent_to = {}
    for proto in ("tcp", "udp"):
        tx, rx = bd["tx_" + proto], bd["rx_" + proto]
        for port in sorted(set(tx) | set(rx), key=int):
            t, r = tx.get(port, 0), rx.get(port, 0)
            if (proto, port) in dropped:
                check(t > 0, f"{proto} dport {port}: nothing sent")
                check(r == 0, f"{proto} dport {port}: {r} of {t} passed a drop rule")
                filtered += t
                sent_to[(proto, port)] = t
            else:
                check(r == t, f"{proto} dport {port}: sent {t}, received {r}")
    passed = gen["tx_packets"] - filtered
    check(gen["rx_packets"] == passed,
          f"received {gen['rx_packets']}, expected {passed} "
          f"(sent {gen['tx_packets']} - filtered {filtered})")
    check(gen["rx_other"] == 0, f"{gen['rx_other']} unparsable frames")
    p = st["packets"]
    check(p["rx"] == gen["tx_packets"], f"nftdp rx {p['rx']} != sent {gen['tx_packets']}")
    check(p["dropped"] == filtered, f"nftdp dropped {p['dropped']} != filtered {filtered}")
    check(p["tx"] == passed, f"nftdp tx {p['tx']} != passed {passed}")
    if a.listing:
        ctr = rule_counters(json.load(open(a.listing)))
        for key, t in sent_to.items():
            check(ctr.get(key) == t, f"rule {key[0]} dport {key[1]} counter {ctr.get(key)} != sent {t}")
    lat = gen["latency_ns"]
    print(f"sent {gen['tx_packets']}  passed {passed}  filtered {filtered}  "
          f"received {gen['rx_packets']}  nftdp rx {p['rx']} tx {p['tx']} dropped {p['dropped']}  "
          f"latency p50 {lat['p50']} p99 {lat['p99']} p99.9 {lat['p99.9']} ns")
    if errors:
        print("FAIL:\n  " + "\n  ".join(errors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
