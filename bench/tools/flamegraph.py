#!/usr/bin/env python3
"""A flame graph of a perf profile, with nothing beyond python3 and perf.

Reads `perf script` text (from stdin or a file), folds each sample's call
stack into one line "root;caller;...;leaf COUNT" (the folded-stacks format
other flame graph tools read too) and draws it as an SVG: one box per frame,
its width the share of samples under it, callers below callees, siblings in
name order; hovering a box shows its name, samples and share.

    perf record -g -p PID -o gw.perf.data -- sleep 8
    perf script -i gw.perf.data | bench/tools/flamegraph.py --folded gw.folded \
        --title "gateway, 1 GiB GET" > gw.svg
    bench/tools/flamegraph.py --from-folded gw.folded > gw.svg   # redraw

Samples are counted per stack (perf's -F or default frequency); frames are
the symbol names perf printed (offsets and DSOs dropped), the command name
(thread) is the root, so the gateway's worker loops, ZeroMQ I/O threads
and hasher show apart.
"""
import argparse
import html
import re
import sys
from collections import defaultdict

FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.+?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def fold(lines):
    """perf script text -> {stack (tuple root..leaf): samples}."""
    stacks = defaultdict(int)
    comm, frames = None, []

    def flush():
        if comm is not None:
            stacks[tuple([comm] + frames[::-1])] += 1

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if comm is None and not line.startswith((" ", "\t")):
            comm = line.split()[0]  # "cairn-gateway  1234 [001] ..." or "gw-worker-0 ..."
            continue
        m = FRAME.match(line)
        if m and comm is not None:
            sym = m.group(1)
            dso = m.group(2).rsplit("/", 1)[-1]
            if sym == "[unknown]" and dso != "[unknown]":
                sym = "[%s]" % dso
            frames.append(sym)
    flush()
    return stacks


def read_folded(lines):
    stacks = defaultdict(int)
    for line in lines:
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if stack:
            stacks[tuple(stack.split(";"))] += int(n)
    return stacks


def tree(stacks):
    root = {"n": 0, "kids": {}}
    for stack, n in stacks.items():
        node = root
        node["n"] += n
        for f in stack:
            node = node["kids"].setdefault(f, {"n": 0, "kids": {}})
            node["n"] += n
    return root


def colour(name):
    h = sum(ord(c) * (i + 1) for i, c in enumerate(name)) % 60
    if name.startswith(("__", "do_", "sys_", "tcp_", "ip_", "sock_", "skb_", "entry_")) or \
            name.endswith("_[k]") or name.startswith(("_copy", "copy_", "clear_page", "asm_")):
        return "rgb(%d,%d,%d)" % (230, 140 + h, 60)   # kernel-ish: orange
    return "rgb(%d,%d,%d)" % (200 + h // 2, 80 + h, 60)


def svg(root, title, width=1200, row=16):
    depth = [0]

    def measure(node, d):
        depth[0] = max(depth[0], d)
        for k in node["kids"].values():
            measure(k, d + 1)

    measure(root, 0)
    height = (depth[0] + 3) * row
    total = root["n"] or 1
    out = ['<?xml version="1.0" standalone="no"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="monospace" font-size="11">' % (width, height),
           '<rect width="100%%" height="100%%" fill="#f8f8f0"/>',
           '<text x="%d" y="14" text-anchor="middle" font-size="14">%s (%d samples)</text>'
           % (width // 2, html.escape(title), total)]
    scale = (width - 20) / total

    def draw(node, name, x, d):
        w = node["n"] * scale
        if w < 0.3:
            return
        y = height - (d + 1) * row
        share = 100.0 * node["n"] / total
        label = "%s (%d samples, %.2f%%)" % (name, node["n"], share)
        out.append('<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" '
                   'fill="%s" stroke="#fff" stroke-width="0.3"/>'
                   % (html.escape(label), x, y, w, row - 1, colour(name)))
        chars = int(w / 7)
        if chars >= 3:
            text = name if len(name) <= chars else name[:chars - 2] + ".."
            out.append('<text x="%.1f" y="%d">%s</text>' % (x + 2, y + row - 4, html.escape(text)))
        out.append("</g>")
        cx = x
        for k in sorted(node["kids"]):
            draw(node["kids"][k], k, cx, d + 1)
            cx += node["kids"][k]["n"] * scale

    draw(root, "all", 10, 0)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", nargs="?", help="perf script text (default stdin)")
    ap.add_argument("--from-folded", action="store_true", help="input is folded stacks")
    ap.add_argument("--folded", help="also write the folded stacks here")
    ap.add_argument("--title", default="flame graph")
    ap.add_argument("--width", type=int, default=1200)
    a = ap.parse_args()
    src = open(a.input, errors="replace") if a.input else sys.stdin
    stacks = read_folded(src) if a.from_folded else fold(src)
    if a.folded:
        with open(a.folded, "w") as f:
            for stack, n in sorted(stacks.items()):
                f.write("%s %d\n" % (";".join(stack), n))
    sys.stdout.write(svg(tree(stacks), a.title, a.width))


if __name__ == "__main__":
    main()
