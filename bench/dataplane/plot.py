#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""SVG bar chart of the dataplane bench: Mpps per worker core per config,
with the ratio to testpmd above each bar. No matplotlib needed.

usage: plot.py RESULTS.json OUT.svg
RESULTS.json: {"title": str, "configs": [{"name": str, "mpps": float,
               "ratio": float|null, "target": str|null}, ...]}
"""
import json
import sys
from xml.sax.saxutils import escape


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        res = json.load(f)
    cfgs = res["configs"]
    w, h = 120 + 150 * len(cfgs), 420
    top, bottom, left = 60, 70, 70
    plot_h = h - top - bottom
    peak = max([c["mpps"] for c in cfgs] + [1.0])
    scale = plot_h / (peak * 1.15)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="13">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="28" text-anchor="middle" font-size="16">'
           f'{escape(res.get("title", ""))}</text>']
    # y axis with gridlines every nice step
    step = 1
    for s in (1, 2, 5, 10, 20, 50):
        if peak / s <= 8:
            step = s
            break
    y0 = top + plot_h
    v = 0
    while v <= peak * 1.15:
        y = y0 - v * scale
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - 20}" y2="{y:.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{v}</text>')
        v += step
    out.append(f'<text x="18" y="{top + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {top + plot_h / 2})">Mpps per worker core</text>')
    colors = ["#555555", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
    for i, c in enumerate(cfgs):
        x = left + 30 + 150 * i
        bh = c["mpps"] * scale
        out.append(f'<rect x="{x}" y="{y0 - bh:.1f}" width="90" height="{bh:.1f}" '
                   f'fill="{colors[i % len(colors)]}"/>')
        label = f'{c["mpps"]:.2f}' if c["mpps"] >= 0.1 else f'{c["mpps"]:.3f}'
        if c.get("ratio") is not None:
            label += f' ({100 * c["ratio"]:.1f}%)' if c["ratio"] < 0.1 else f' ({100 * c["ratio"]:.0f}%)'
        out.append(f'<text x="{x + 45}" y="{y0 - bh - 6:.1f}" text-anchor="middle">'
                   f'{escape(label)}</text>')
        out.append(f'<text x="{x + 45}" y="{y0 + 18}" text-anchor="middle">'
                   f'{escape(c["name"])}</text>')
        if c.get("target"):
            out.append(f'<text x="{x + 45}" y="{y0 + 36}" text-anchor="middle" '
                       f'fill="#666" font-size="11">{escape(c["target"])}</text>')
    out.append(f'<line x1="{left}" y1="{y0}" x2="{w - 20}" y2="{y0}" stroke="black"/>')
    out.append('</svg>')
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
