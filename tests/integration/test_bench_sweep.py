"""bench/sweep end to end in --smoke mode: a small matrix (read_prefetch 1
and 2, warm and cold cache, unthrottled and a 50 MiB/s client limit, 6 MiB
chunked objects) over real cairn-local clusters; checks the markdown table
(rows, columns, one bold best cell per row, ratios to the default), the CSV
(one row per run, numbers that match the table's medians), machine.txt and
command.txt; that every committed matrix in bench/sweeps parses (--plan);
that a bad matrix is refused with its reason; and that SIGTERM mid-sweep
stops and removes the cluster. Skips, saying why, when
the daemons are not built. Finds binaries through CAIRN_BIN, the source via
CAIRN_SRC."""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SRC = os.environ.get("CAIRN_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.environ.get("CAIRN_BIN", os.path.join(SRC, "build", "bin"))
SWEEP = os.path.join(SRC, "bench", "sweep")

MATRIX = {
    "name": "smoke",
    "description": "test matrix",
    "param": "large_object.read_prefetch",
    "values": [1, 2, 4],
    "default": 2,
    "nodes": 3,
    "repetitions": 3,
    "duration_s": 30,
    "fixed": {"obj_containers.sync_mode": "none"},
    "cache": ["warm", "cold"],
    "throttle": ["none", "50M"],
    "base_flags": ["--concurrent", "2", "--http_raw_request_timeout", "0",
                   "--value_generator", "{fixed_bin,6291456}"],
    "setup": [["--operations", "[{put,1}]", "--key_generator",
               "{partitioned_sequential_int,1,2}", "--duration_s", "60"]],
    "steps": [{"name": "GET 6 MiB", "metric": "mb_s",
               "flags": ["--operations", "[{get,1}]", "--key_generator", "{uniform_int,2}",
                         "--not_found_ok", "false"]}],
}


def sweep(*args, check=True, tmp=None):
    env = dict(os.environ, CAIRN_BIN=BIN)
    if tmp:
        env["TMPDIR"] = tmp     # the sweep's clusters go there
    p = subprocess.run([sys.executable, SWEEP, *args], capture_output=True, text=True,
                       env=env, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError("sweep %s failed (%d):\n%s\n%s" % (args, p.returncode, p.stdout,
                                                               p.stderr))
    return p


def main():
    missing = [p for p in ("cairn-gateway", "cairn-storage", "cairn-bench")
               if not os.access(os.path.join(BIN, p), os.X_OK)]
    if missing or not os.access("/usr/bin/aws", os.X_OK):
        print("SKIP: bench/sweep test needs %s" % ", ".join(missing or ["/usr/bin/aws"]))
        return
    for f in sorted(os.listdir(os.path.join(SRC, "bench", "sweeps"))):
        if f.endswith(".json"):
            sweep(os.path.join(SRC, "bench", "sweeps", f), "--plan")
    d = tempfile.mkdtemp(prefix="sweep-test-")
    try:
        bad = os.path.join(d, "bad.json")
        with open(bad, "w") as f:
            json.dump(dict(MATRIX, default=3), f)
        p = sweep(bad, "--plan", check=False)
        assert p.returncode == 2 and "default 3 is not among the values" in p.stderr, p.stderr
        with open(bad, "w") as f:
            json.dump(dict(MATRIX, cache=["tepid"]), f)
        p = sweep(bad, "--plan", check=False)
        assert p.returncode == 2 and "tepid" in p.stderr, p.stderr

        # a key no daemon has would be ignored in the environment: refused
        with open(bad, "w") as f:
            json.dump(dict(MATRIX, param="large_object.read_prefetchh"), f)
        p = sweep(bad, "--smoke", "--out", os.path.join(d, "bad"), check=False)
        assert p.returncode != 0 and "neither cairn-gateway nor cairn-storage" in p.stderr, \
            p.stderr
        # a value the gateway refuses (slice above the chunk length): its reason, no leftovers
        with open(bad, "w") as f:
            json.dump(dict(MATRIX, param="large_object.reading_chunked_obj_len",
                           values=["6M", "512K"], default="512K"), f)
        p = sweep(bad, "--smoke", "--out", os.path.join(d, "bad"), check=False, tmp=d)
        assert p.returncode == 1 and "a slice never crosses a chunk" in p.stderr, p.stderr
        assert "Traceback" not in p.stderr, p.stderr
        assert not [x for x in os.listdir(d) if x.startswith("cairn-sweep-")], \
            "a failed cell left its cluster behind"

        mpath = os.path.join(d, "smoke.json")
        with open(mpath, "w") as f:
            json.dump(MATRIX, f)
        out = os.path.join(d, "out")
        sweep(mpath, "--smoke", "--out", out)
        for f in ("table.md", "results.csv", "machine.txt", "command.txt"):
            assert os.path.getsize(os.path.join(out, f)) > 0, f
        with open(os.path.join(out, "command.txt")) as f:
            cmd = f.read()
        assert re.search(r"^bench/sweep \S*smoke\.json --smoke$", cmd, re.M), cmd
        with open(os.path.join(out, "machine.txt")) as f:
            mach = f.read()
        assert "cpu:" in mach and "cairn:" in mach, mach
        with open(os.path.join(out, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        # --smoke: values 2 (default) and 1, K=1, 2 caches x 2 throttles
        assert len(rows) == 2 * 4, rows
        assert sorted({r["value"] for r in rows}) == ["1", "2"], rows
        for r in rows:
            assert int(r["errors"]) == 0, r
            assert float(r["result"]) > 0, r
            if r["cache"] == "cold":
                assert r["cold_method"] in ("drop_caches", "fadvise"), r
        # the 50 MiB/s client limit holds: 2 clients, so at most ~2 x 52 MB/s
        for r in rows:
            if r["throttle"] == "50M":
                assert float(r["mb_per_sec"]) < 2 * 52.5 * 1.3, r
        with open(os.path.join(out, "table.md")) as f:
            md = f.read()
        lines = [l for l in md.splitlines() if l.startswith("| ")]
        assert lines[0].startswith("| scenario (large_object.read_prefetch) | 2 (default) | 1 |") \
            or lines[0].startswith("| scenario (large_object.read_prefetch) | 1 | 2 (default) |"), \
            lines[0]
        body = lines[1:]
        assert len(body) == 4, md
        by = {(r["scenario"], r["value"]): float(r["result"]) for r in rows}
        head = [c.strip() for c in lines[0].strip("|").split("|")]
        for line in body:
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert len(cells) == 3, line
            name = re.sub(r" \[MB/s\]$", "", cells[0])
            assert sum(c.startswith("**") for c in cells[1:]) == 1, line
            for col, cell in zip(head[1:], cells[1:]):
                v = col.split()[0]
                num, ratio = re.match(r"\**([\d.]+) \(([\d.]+)×\)", cell).groups()
                want = by[(name, v)]
                assert abs(float(num) - want) <= max(0.051, want * 0.005), (cell, want)
                if "(default)" in col:
                    assert ratio == "1.00", line
                else:
                    dflt = by[(name, "2")]
                    assert abs(float(ratio) - want / dflt) < 0.006, (line, want, dflt)

        # SIGTERM in the middle of a cell stops its cluster and removes it
        term = os.path.join(d, "term")
        os.mkdir(term)
        p = subprocess.Popen([sys.executable, SWEEP, mpath, "--smoke", "--out",
                              os.path.join(term, "out")], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, CAIRN_BIN=BIN, TMPDIR=term))
        try:
            for line in p.stdout:
                if line.startswith("  GET 6 MiB"):
                    break
            p.send_signal(signal.SIGTERM)
            assert p.wait(60) == 143, p.returncode
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        left = [x for x in os.listdir(term) if x.startswith("cairn-sweep-")]
        assert not left, "SIGTERM left a cluster behind: %s" % left
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("ok: bench/sweep --smoke over cairn-local (table, CSV, machine, command), matrices parse, "
          "bad matrices refused, SIGTERM cleans up")


if __name__ == "__main__":
    main()
