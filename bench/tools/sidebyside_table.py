#!/usr/bin/env python3
"""Markdown tables from bench/tools/sidebyside.sh's runs.txt.

    bench/tools/sidebyside_table.py OUT/runs.txt [more runs.txt ...]

Line format: pass system row ops_s MBps errors bytes front_ticks back_ticks clk_tck p50_us p99_us.
Rates: MB/s for the 1 GiB rows, ops/s otherwise; medians over the passes.
Ratios: per pass (same pass, so the same machine state), then the median of those.
CPU-s/GB: the process group's utime+stime over the load divided by the bytes moved.
"""
import statistics
import sys

SYSTEMS = ["nginx", "ceph", "cairn3", "cairn1"]
NAMES = {"nginx": "nginx", "ceph": "Ceph RGW", "cairn3": "cairn N=3 (3 nodes)", "cairn1": "cairn N=1 (1 node)"}
ROWS = [("get1g", "GET 1 GiB, 1 stream, MB/s"), ("get1g16", "GET 1 GiB, 16 streams, MB/s"),
        ("put1g", "PUT 1 GiB, 1 stream, MB/s"), ("get4k", "GET 4 KiB, 32 workers, ops/s"),
        ("put4k", "PUT 4 KiB, 32 workers, ops/s"), ("leofs-load", "LeoFS #766 load (64 workers), ops/s"),
        ("leofs-mix", "LeoFS #766 95/5 mix (64 workers), ops/s")]
LARGE = {"get1g", "get1g16", "put1g"}
FRONT = {"nginx": "nginx workers", "ceph": "radosgw", "cairn3": "gateway", "cairn1": "gateway"}
BACK = {"ceph": "ceph-osd", "cairn3": "3 nodes (sum)", "cairn1": "node"}


def load(paths):
    runs = {}  # (row, system) -> {pass: dict}
    for p in paths:
        for line in open(p):
            f = line.split()
            if len(f) < 12 or f[3] == "NA":
                continue
            ps, sysn, row = f[0], f[1], f[2]
            r = dict(ops=float(f[3]), mbps=float(f[4]), err=int(f[5]), bytes=int(f[6]),
                     ft=int(f[7]), bt=int(f[8]), tck=int(f[9]))
            r["rate"] = r["mbps"] if row in LARGE else r["ops"]
            gb = r["bytes"] / 1e9
            r["fcpu"] = r["ft"] / r["tck"] / gb if gb else float("nan")
            r["bcpu"] = r["bt"] / r["tck"] / gb if gb else float("nan")
            runs.setdefault((row, sysn), {})[ps] = r
    return runs


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else None


def fmt(x, nd=0):
    if x is None:
        return "—"
    return f"{x:,.{nd}f}"


def main():
    runs = load(sys.argv[1:])
    systems = [s for s in SYSTEMS if any(k[1] == s for k in runs)]
    print("| load | " + " | ".join(NAMES[s] for s in systems) + " |")
    print("|---|" + "---|" * len(systems))
    for row, title in ROWS:
        if not any((row, s) in runs for s in systems):
            continue
        cells = []
        for s in systems:
            v = runs.get((row, s), {})
            m = med([r["rate"] for r in v.values()])
            cells.append(fmt(m) if m is not None else "—")
        print(f"| {title} | " + " | ".join(cells) + " |")
    print()
    print("Ratios (per pass, then the median over passes; each pass ran every system once):")
    print()
    print("| load | cairn N=3 ÷ nginx | cairn N=1 ÷ nginx | cairn N=3 ÷ Ceph | cairn N=1 ÷ Ceph | Ceph ÷ nginx |")
    print("|---|---|---|---|---|---|")
    for row, title in ROWS:
        cells = []
        for a, b in (("cairn3", "nginx"), ("cairn1", "nginx"), ("cairn3", "ceph"), ("cairn1", "ceph"),
                     ("ceph", "nginx")):
            va, vb = runs.get((row, a), {}), runs.get((row, b), {})
            rs = [va[p]["rate"] / vb[p]["rate"] for p in va if p in vb and vb[p]["rate"]]
            m = med(rs)
            cells.append(f"{m:.2f}" if m is not None else "—")
        if any(c != "—" for c in cells):
            print(f"| {title} | " + " | ".join(cells) + " |")
    print()
    print("CPU-s per GB moved, per process (median over passes), 1 GiB rows:")
    print()
    print("| load | system | front process | CPU-s/GB | back process | CPU-s/GB | front+back |")
    print("|---|---|---|---|---|---|---|")
    for row, title in ROWS:
        if row not in LARGE:
            continue
        for s in systems:
            v = runs.get((row, s))
            if not v:
                continue
            f = med([r["fcpu"] for r in v.values()])
            b = med([r["bcpu"] for r in v.values()]) if s in BACK else None
            t = med([r["fcpu"] + r["bcpu"] for r in v.values()])
            print(f"| {title.split(',')[0] + ',' + title.split(',')[1]} | {NAMES[s]} | {FRONT[s]} | {fmt(f, 2)} | "
                  f"{BACK.get(s, '—')} | {fmt(b, 2)} | {fmt(t, 2)} |")
    small = [(row, title) for row, title in ROWS if row in ("get4k", "put4k")
             and any((row, s) in runs for s in systems)]
    if small:
        print()
        print("CPU µs per 4 KiB request, per process (median over passes; requests = bytes moved / 4096):")
        print()
        print("| load | system | front process | µs/op | back process | µs/op |")
        print("|---|---|---|---|---|---|")
        for row, title in small:
            for s in systems:
                v = runs.get((row, s))
                if not v:
                    continue
                f = med([r["ft"] / r["tck"] / (r["bytes"] / 4096) * 1e6 for r in v.values() if r["bytes"]])
                b = med([r["bt"] / r["tck"] / (r["bytes"] / 4096) * 1e6 for r in v.values() if r["bytes"]])
                print(f"| {title.split(',')[0]} | {NAMES[s]} | {FRONT[s]} | {fmt(f)} | {BACK.get(s, '—')} | "
                      f"{fmt(b) if s in BACK else '—'} |")
    print()
    print("Every run (rate; errors in brackets when not 0):")
    print()
    for row, title in ROWS:
        for s in systems:
            v = runs.get((row, s))
            if not v:
                continue
            parts = []
            for p in sorted(v, key=int):
                r = v[p]
                e = f" [{r['err']} err]" if r["err"] else ""
                c = f" ({r['fcpu']:.2f}+{r['bcpu']:.2f} CPU-s/GB)" if row in LARGE else ""
                parts.append(f"p{p} {r['rate']:,.0f}{c}{e}")
            print(f"- {title}, {NAMES[s]}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
