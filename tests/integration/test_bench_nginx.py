"""Integration test of cairn-bench against a private nginx (GET and WebDAV).

Runs short benchmarks (a few seconds each) and checks the result files the
way basho_bench writes them: the results folder and its `current` link,
summary.csv, <op>_latencies.csv, errors.csv, bytes.csv, summary.json and
summary.png; integrity checking with and without corruption; the end of a
sequential key space; rate mode; the per-connection receive limit; and the
error reports of a bad config. Needs nginx-light; finds cairn-bench through
CAIRN_BIN and the source through CAIRN_SRC.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

SRC = os.environ.get("CAIRN_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CAIRN_BIN", os.path.join(SRC, "build", "bin"))
BENCH = os.path.join(BIN, "cairn-bench")
sys.path.insert(0, os.path.join(SRC, "bench", "tools"))
from nginx_fixture import Nginx, free_port  # noqa: E402

FLOAT = r"\d+\.\d+(e-\d+)?"
LAT_HEADER = "elapsed, window, n, min, mean, median, 95th, 99th, 99_9th, max, errors"


def read_csv(path):
    with open(path) as f:
        lines = f.read().splitlines()
    return lines[0], [[c.strip() for c in line.split(",")] for line in lines[1:]]


class BenchNginx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(BENCH, os.X_OK):
            raise unittest.SkipTest(f"{BENCH} not built")
        cls.nginx = Nginx(nsmall=20, small_size=100, large_size=20 << 20).__enter__()
        cls.tmp = tempfile.mkdtemp(prefix="test_bench_nginx_")

    @classmethod
    def tearDownClass(cls):
        cls.nginx.__exit__(None, None, None)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def bench(self, *args, timeout=60, check=True, create_bucket=False):
        # nginx is no S3 server: no CreateBucket before the runs that PUT
        cmd = [BENCH, "--report_interval", "1", "--progress", "false",
               "--create_bucket", "true" if create_bucket else "false"] + list(args)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            self.fail(f"{cmd} exited {r.returncode}: {r.stderr}")
        return r

    def outdir(self, name):
        return os.path.join(self.tmp, name)

    def summary_json(self, d):
        with open(os.path.join(d, "summary.json")) as f:
            return json.load(f)

    def test_get_files_like_basho_bench(self):
        test_dir = self.outdir("basho")
        start = time.time()
        self.bench("--endpoint", self.nginx.endpoint + "/small", "--duration", "3s",
                   "--concurrent", "4", "--key_generator", "{uniform_int,20}",
                   "--test_dir", test_dir)
        self.assertLess(time.time() - start, 20)
        # <test_dir>/<YYYYMMDD_HHMMSS>/ and current -> it
        link = os.path.join(test_dir, "current")
        self.assertTrue(os.path.islink(link))
        self.assertRegex(os.readlink(link), r"^\d{8}_\d{6}$")
        d = os.path.realpath(link)
        header, rows = read_csv(os.path.join(d, "summary.csv"))
        self.assertEqual(header, "elapsed, window, total, successful, failed")
        self.assertGreaterEqual(len(rows), 3)
        for row in rows:
            self.assertEqual(len(row), 5)
            self.assertRegex(row[0], "^" + FLOAT + "$")
            self.assertRegex(row[1], "^" + FLOAT + "$")
            self.assertEqual(int(row[2]), int(row[3]) + int(row[4]))
            self.assertEqual(row[4], "0")
        elapsed = [float(r[0]) for r in rows]
        self.assertEqual(elapsed, sorted(elapsed))
        self.assertAlmostEqual(elapsed[-1], 3.0, delta=0.5)
        self.assertAlmostEqual(sum(float(r[1]) for r in rows), elapsed[-1], delta=0.01)
        header, lat = read_csv(os.path.join(d, "get_latencies.csv"))
        self.assertEqual(header, LAT_HEADER)
        self.assertEqual(len(lat), len(rows))
        for row, srow in zip(lat, rows):
            self.assertEqual(len(row), 11)
            self.assertEqual(row[:2], srow[:2])
            n, mn, mean, med, p95, p99, p999, mx = row[2:10]
            self.assertEqual(int(n), int(srow[3]))
            self.assertRegex(mean, r"^\d+\.\d$")
            vals = [int(mn), int(med), int(p95), int(p99), int(p999), int(mx)]
            self.assertEqual(vals, sorted(vals))
            self.assertLessEqual(int(mn), float(mean))
            self.assertLessEqual(float(mean), int(mx))
        with open(os.path.join(d, "errors.csv")) as f:
            self.assertEqual(f.read(), '"error","count"\n')
        header, brows = read_csv(os.path.join(d, "bytes.csv"))
        self.assertTrue(header.startswith("elapsed, window, bytes_received, bytes_sent"))
        total_ok = sum(int(r[3]) for r in rows)
        # nginx sends 100-byte bodies: received bytes are exactly 100 per GET
        self.assertEqual(sum(int(r[2]) for r in brows), 100 * total_ok)
        js = self.summary_json(d)
        self.assertEqual(js["ops"]["get"]["ok"], total_ok)
        self.assertEqual(js["total"]["errors"], 0)
        self.assertGreater(js["ops"]["get"]["latency_us"]["p99"], 0)
        if shutil.which("gnuplot"):
            with open(os.path.join(d, "summary.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_dav_mixed_ops_with_integrity(self):
        d = self.outdir("dav")
        r = self.bench("--endpoint", self.nginx.endpoint + "/dav", "--duration", "3s",
                       "--concurrent", "4", "--key_generator", "{uniform_int,30}",
                       "--operations", "[{put,3},{get,5},{range_get,2},{head,1},{delete,1}]",
                       "--range_len", "1000", "--value_generator", "{uniform_bin,1000,200000}",
                       "--integrity", "true", "--out", d, "--json", "-")
        js = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertEqual(js["results_dir"], d)
        for op in ("put", "get", "range_get", "head", "delete"):
            self.assertGreater(js["ops"][op]["ok"], 0, op)
            self.assertTrue(os.path.exists(os.path.join(d, op + "_latencies.csv")))
        self.assertGreater(js["integrity"]["verified"], 100)
        # nothing but 416 (a range past a smaller object) may fail here
        for name in js["errors"]:
            self.assertIn("416", name)
        self.assertGreater(js["ops"]["put"]["bytes_sent"], 0)
        self.assertGreater(js["ops"]["range_get"]["bytes_received"], 0)

    def test_create_bucket_refused_stops_the_run(self):
        # a run with put sends PUT /dav first; nginx answers 405 and no S3
        # error: the run stops before any worker, saying so
        d = self.outdir("nobucket")
        r = self.bench("--endpoint", self.nginx.endpoint + "/dav", "--duration", "2s",
                       "--operations", "[{put,1},{get,1}]", "--out", d, check=False,
                       create_bucket=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("could not create bucket 'dav' at %s/dav: HTTP 405, not an S3 answer"
                      % self.nginx.endpoint, r.stderr)
        self.assertIn("{create_bucket, false}", r.stderr)
        self.assertFalse(os.path.exists(d))
        # a GET-only run writes nothing, so it makes no bucket
        r = self.bench("--endpoint", self.nginx.endpoint + "/small", "--duration", "1s",
                       "--key_generator", "{uniform_int,20}", "--out", self.outdir("getonly"),
                       create_bucket=True)
        self.assertEqual(self.summary_json(self.outdir("getonly"))["total"]["errors"], 0)

    def test_integrity_detects_corruption(self):
        d = self.outdir("corrupt")
        dav = os.path.join(self.nginx.dir, "www", "dav")
        stop = threading.Event()

        def corrupt():
            # overwrite every stored body behind cairn-bench's back
            time.sleep(1.0)
            while not stop.is_set():
                for name in os.listdir(dav):
                    if name.startswith("9") and len(name) == 4:
                        p = os.path.join(dav, name)
                        try:
                            with open(p, "r+b") as f:
                                f.write(b"X" * 64)
                        except OSError:
                            pass
                time.sleep(0.05)

        t = threading.Thread(target=corrupt)
        t.start()
        try:
            self.bench("--endpoint", self.nginx.endpoint + "/dav", "--duration", "3s",
                       "--concurrent", "2", "--key_generator", "{uniform_int,9000,10}",
                       "--operations", "[{put,1},{get,10}]",
                       "--value_generator", "{fixed_bin,4096}", "--integrity", "true",
                       "--out", d)
        finally:
            stop.set()
            t.join()
        with open(os.path.join(d, "errors.csv")) as f:
            errors = f.read()
        m = re.search(r'"\{get,integrity_mismatch\}","(\d+)"', errors)
        self.assertIsNotNone(m, errors)
        self.assertGreater(int(m.group(1)), 0)
        js = self.summary_json(d)
        self.assertEqual(js["errors"]["{get,integrity_mismatch}"], int(m.group(1)))
        _, lat = read_csv(os.path.join(d, "get_latencies.csv"))
        self.assertEqual(sum(int(r[10]) for r in lat), int(m.group(1)))

    def test_sequential_keys_end_the_run(self):
        d = self.outdir("seq")
        start = time.time()
        self.bench("--endpoint", self.nginx.endpoint + "/dav/seq", "--duration", "1",
                   "--concurrent", "2", "--key_generator", "{partitioned_sequential_int,100}",
                   "--operations", "[{put,1}]", "--value_generator", "{fixed_bin,10}",
                   "--out", d)
        self.assertLess(time.time() - start, 30)  # not the full minute
        js = self.summary_json(d)
        self.assertEqual(js["ops"]["put"]["ok"], 100)
        files = os.listdir(os.path.join(self.nginx.dir, "www", "dav", "seq"))
        self.assertEqual(sorted(int(f) for f in files), list(range(100)))

    def test_rate_mode(self):
        d = self.outdir("rate")
        self.bench("--endpoint", self.nginx.endpoint + "/small", "--duration", "4s",
                   "--concurrent", "2", "--mode", "{rate,25}",
                   "--key_generator", "{uniform_int,20}", "--out", d)
        ok = self.summary_json(d)["ops"]["get"]["ok"]
        # 2 workers x 25/s x 4 s = 200, Poisson: well within +-25 %
        self.assertGreater(ok, 150)
        self.assertLess(ok, 250)

    def test_receive_rate_limit(self):
        d = self.outdir("slow")
        self.bench("--endpoint", self.nginx.endpoint + "/large", "--duration", "4s",
                   "--concurrent", "1", "--key_generator", "{uniform_int,1}",
                   "--recv_rate", "5M", "--http_raw_request_timeout", "60000", "--out", d)
        _, rows = read_csv(os.path.join(d, "bytes.csv"))
        got = sum(int(r[2]) for r in rows) / sum(float(r[1]) for r in rows)
        self.assertGreater(got, 0.6 * 5 * 2**20)
        self.assertLess(got, 1.3 * 5 * 2**20)

    def test_errors_are_counted_and_named(self):
        d = self.outdir("errs")
        self.bench("--endpoint", self.nginx.endpoint + "/nothing-here", "--duration", "2s",
                   "--concurrent", "2", "--not_found_ok", "false", "--out", d)
        js = self.summary_json(d)
        self.assertEqual(js["ops"]["get"]["ok"], 0)
        self.assertGreater(js["errors"]["{get,{http,404}}"], 0)
        _, rows = read_csv(os.path.join(d, "summary.csv"))
        self.assertEqual(sum(int(r[4]) for r in rows), js["total"]["errors"])
        _, lat = read_csv(os.path.join(d, "get_latencies.csv"))
        for row in lat:  # an empty window, basho_bench style
            self.assertEqual(row[2:10], ["0"] * 8)
        d2 = self.outdir("refused")
        self.bench("--endpoint", f"http://127.0.0.1:{free_port()}/b", "--duration", "1s",
                   "--concurrent", "1", "--out", d2)
        with open(os.path.join(d2, "errors.csv")) as f:
            self.assertIn('"{get,{curl,couldnt_connect}}"', f.read())

    def test_sigterm_finishes_the_files(self):
        d = self.outdir("term")
        p = subprocess.Popen([BENCH, "--endpoint", self.nginx.endpoint + "/small",
                              "--duration", "10", "--concurrent", "2", "--report_interval", "1",
                              "--key_generator", "{uniform_int,20}", "--progress", "false",
                              "--plot", "false", "--out", d],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(2.5)
        p.terminate()
        self.assertEqual(p.wait(10), 0)
        p.stderr.close()
        js = self.summary_json(d)
        self.assertAlmostEqual(js["elapsed_s"], 2.5, delta=1.0)
        _, rows = read_csv(os.path.join(d, "summary.csv"))
        self.assertEqual(sum(int(r[3]) for r in rows), js["ops"]["get"]["ok"])
        self.assertTrue(os.path.exists(os.path.join(d, "errors.csv")))

    def test_bad_config(self):
        cfg = os.path.join(self.tmp, "bad.config")
        with open(cfg, "w") as f:
            f.write("{mode, max}.\n{concurrent, 4}.\n{duration 5}.\n")
        r = self.bench(cfg, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("bad.config: line 3, column 11: expected ','", r.stderr)
        with open(cfg, "w") as f:
            f.write("{mode, max}.\n{frobnicate, 1}.\n{concurrent, -1}.\n")
        r = self.bench(cfg, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown key 'frobnicate' ignored", r.stderr)
        self.assertIn("line 3, column 14: concurrent: -1 is out of range", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
