#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate benchmark rulesets for the control plane: N rules spread over
chains, with anonymous sets every tenth rule, or one interval set of N
elements."""
import sys


def rules(n, out):
    chains = max(1, n // 1000)
    out.write("table inet bench {\n")
    out.write("\tset svc {\n\t\ttype inet_service\n\t\telements = { %s }\n\t}\n"
              % ", ".join(str(p) for p in range(1000, 2000)))
    out.write("\tchain base {\n\t\ttype filter hook forward priority 0; policy accept;\n")
    for c in range(chains):
        out.write(f"\t\tip daddr 10.{c // 256}.{c % 256}.0/24 jump c{c}\n")
    out.write("\t}\n")
    per = n // chains
    k = 0
    for c in range(chains):
        out.write(f"\tchain c{c} {{\n")
        for i in range(per):
            a, b = (k >> 8) & 255, k & 255
            if k % 10 == 0:
                out.write(f"\t\tip saddr {{ 172.16.{a}.{b}, 172.17.{a}.{b} }} tcp dport {{ 22, 80, 443 }} counter drop\n")
            else:
                out.write(f"\t\tip saddr 192.168.{a}.{b} tcp dport {1024 + (k % 60000)} counter accept\n")
            k += 1
        out.write("\t}\n")
    out.write("}\n")


def interval_set(n, out):
    out.write("table ip bench {\n\tset big {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\telements = {\n")
    for i in range(n):
        a = 0x0b000000 + i * 4
        out.write(f"\t\t\t{a >> 24}.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}-"
                  f"{a >> 24}.{(a >> 16) & 255}.{(a >> 8) & 255}.{(a & 255) + 1},\n")
    out.write("\t\t}\n\t}\n}\n")


if __name__ == "__main__":
    kind, n = sys.argv[1], int(sys.argv[2])
    (rules if kind == "rules" else interval_set)(n, sys.stdout)
