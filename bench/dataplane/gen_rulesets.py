#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the dataplane benchmark's rulesets into OUTDIR.

empty.nft     no tables (flush ruleset)
rules20.nft   a 20-rule stateless forward chain with named and anonymous
              sets; the bench traffic (10.0.0.0/8, 2001:db8::/32, ports
              1024-1123 -> 5000-5099) matches none of the drops, so every
              packet runs all 20 rules and leaves through the last one
sets100k.nft  the same chain; its named sets hold 100 000 elements each
stateful.nft  the same 20 checks in a policy-drop chain behind conntrack:
              ct state established,related accept and ct state invalid
              drop first, as real rulesets put them, and the last rule
              accepts ct state new
commit.nft    drops a known subset: udp dport 5001 and tcp dport 5003
              (bench/dataplane/commit.sh commits against it every 100 ms)

usage: gen_rulesets.py OUTDIR [--elements N]
"""
import ipaddress
import os
import sys

CHAIN = """\
	chain forward {
		type filter hook forward priority filter; policy accept;
		ip saddr @bad4 drop
		ip daddr @bad4 drop
		ip6 saddr @bad6 drop
		ip6 daddr @bad6 drop
		ip saddr @badnet4 drop
		tcp dport @svc drop
		udp dport @svc drop
		ip saddr . tcp dport @pairs drop
		ip ttl 1 drop
		ip6 hoplimit 1 drop
		ip frag-off & 0x1fff != 0 drop
		tcp flags & (syn | fin) == (syn | fin) drop
		tcp flags & (syn | rst) == (syn | rst) drop
		ip daddr 192.0.2.0/24 drop
		ip6 daddr 2001:db8:ffff::/48 drop
		udp dport 0 drop
		tcp dport 0 drop
		meta l4proto { 47, 50, 51 } drop
		icmp type { timestamp-request, address-mask-request } drop
		counter accept
	}
"""


def elements(n):
    """n elements per named set, none of them in the bench traffic"""
    b4 = int(ipaddress.IPv4Address("172.16.0.0"))
    b6 = int(ipaddress.IPv6Address("2001:db8:bad::"))
    n4 = int(ipaddress.IPv4Address("100.64.0.0"))
    p4 = int(ipaddress.IPv4Address("172.24.0.0"))
    bad4 = [str(ipaddress.IPv4Address(b4 + i)) for i in range(n)]
    bad6 = [str(ipaddress.IPv6Address(b6 + i)) for i in range(n)]
    # /29 intervals with a gap between them, so none merge
    badnet4 = [f"{ipaddress.IPv4Address(n4 + 16 * i)}/29" for i in range(n)]
    pairs = [f"{ipaddress.IPv4Address(p4 + i // 4)} . {22 + i % 4}" for i in range(n)]
    return bad4, bad6, badnet4, pairs


def set_block(name, typ, elems, flags=None):
    out = [f"\tset {name} {{", f"\t\ttype {typ}"]
    if flags:
        out.append(f"\t\tflags {flags}")
    # one element per line: nft parses long single lines slowly
    out.append("\t\telements = {")
    out.append(",\n".join(f"\t\t\t{e}" for e in elems))
    out.append("\t\t}")
    out.append("\t}")
    return "\n".join(out) + "\n"


def stateful_chain():
    """CHAIN behind conntrack: established first, new connections last"""
    return (CHAIN.replace("policy accept;\n",
                          "policy drop;\n\t\tct state established,related accept\n"
                          "\t\tct state invalid drop\n")
            .replace("\t\tcounter accept", "\t\tct state new counter accept"))


def rules_file(n, chain=CHAIN):
    bad4, bad6, badnet4, pairs = elements(n)
    return ("flush ruleset\n"
            "table inet bench {\n"
            + set_block("bad4", "ipv4_addr", bad4)
            + set_block("bad6", "ipv6_addr", bad6)
            + set_block("badnet4", "ipv4_addr", badnet4, "interval")
            + set_block("svc", "inet_service", ["22", "23", "135", "139", "445", "3389"])
            + set_block("pairs", "ipv4_addr . inet_service", pairs)
            + chain + "}\n")


COMMIT = """\
flush ruleset
table inet commit {
	chain forward {
		type filter hook forward priority filter; policy accept;
		udp dport 5001 counter drop
		tcp dport 5003 counter drop
		counter accept
	}
}
"""


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    big = 100000
    if len(sys.argv) == 4 and sys.argv[2] == "--elements":
        big = int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    files = {
        "empty.nft": "flush ruleset\n",
        "rules20.nft": rules_file(4),
        "sets100k.nft": rules_file(big),
        "stateful.nft": rules_file(4, stateful_chain()),
        "commit.nft": COMMIT,
    }
    for name, text in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
