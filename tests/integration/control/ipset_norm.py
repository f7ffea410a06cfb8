#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Normalise ipset output for 0009_ipset_tool_0.sh: mask initval, Size in
memory and running timeouts (not 0, which is permanent); sort the members
of each listed set and the add lines of each saved set (the kernel lists a
hash set in hash order)."""
import re
import sys


def norm_line(s):
    s = re.sub(r"initval 0x[0-9a-f]+", "initval X", s)
    s = re.sub(r"^Size in memory: \d+", "Size in memory: X", s)
    if not s.startswith(("Header:", "create ")):
        s = re.sub(r"timeout [1-9]\d*", "timeout T", s)
    return s


def main():
    out, block = [], []
    mode = None

    def flush():
        out.extend(sorted(block))
        block.clear()

    for raw in open(sys.argv[1], encoding="utf-8", errors="replace"):
        s = norm_line(raw.rstrip("\n"))
        if mode == "members":
            if s == "" or s.startswith(("$ ", "rc ", "Name: ")):
                flush()
                mode = None
            else:
                block.append(s)
                continue
        if mode == "save":
            if s.startswith("add "):
                block.append(s)
                continue
            flush()
            mode = None
        out.append(s)
        if s == "Members:":
            mode = "members"
        elif s.startswith("create "):
            mode = "save"
    flush()
    print("\n".join(out))


main()
