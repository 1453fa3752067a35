#!/usr/bin/env python3
"""deploy/grafana/cairn.json against a running cluster: every metric name a
panel queries is in a real scrape of a gateway's or a node's /metrics, with
the labels the query selects and groups by; and, when Debian's prometheus
is installed, a real Prometheus scrapes the cluster and every panel's query
parses and returns series."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import Cluster, check, error_code  # noqa: E402
from snclient import free_port  # noqa: E402
from test_storage_metrics import parse  # noqa: E402

SRC = os.environ.get("CAIRN_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                               "..", ".."))
DASH = os.path.join(SRC, "deploy", "grafana", "cairn.json")
FREE_LABELS = {"job", "instance", "le"}   # added by Prometheus, or a histogram's own


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read().decode()


def panel_queries(dash):
    out = []
    for p in dash["panels"]:
        for t in p.get("targets", []):
            out.append((p["title"], t["expr"]))
    return out


def check_dashboard_shape(dash):
    ids = [p["id"] for p in dash["panels"]]
    check(len(ids) == len(set(ids)), "panel ids are unique")
    check(dash["uid"] and dash["title"], "uid and title")
    names = {v["name"] for v in dash["templating"]["list"]}
    check({"datasource", "gateway_job", "storage_job"} <= names, "variables %r" % names)
    for p in dash["panels"]:
        if p["type"] == "row":
            continue
        check(p["datasource"]["uid"] == "${datasource}", "%s: datasource" % p["title"])
        check(p.get("targets"), "%s has queries" % p["title"])
        g = p["gridPos"]
        check(0 <= g["x"] and g["x"] + g["w"] <= 24, "%s fits the grid" % p["title"])


def labels_of(samples):
    """metric name -> set of label names seen on it."""
    out = {}
    for (name, lab) in samples:
        out.setdefault(name, set()).update(re.findall(r'(\w+)="', lab))
    return out


def check_names(queries, known):
    for title, expr in queries:
        names = set(re.findall(r"\bcairn_[a-z0-9_]+", expr))
        check(names, "%s: a query with no cairn metric: %s" % (title, expr))
        for n in names:
            check(n in known, "%s: %s is not in a scrape of the cluster" % (title, n))
        for n, sel in re.findall(r"\b(cairn_[a-z0-9_]+)\{([^}]*)\}", expr):
            for lab in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", sel):
                check(lab in FREE_LABELS or lab in known[n],
                      "%s: %s has no label %s" % (title, n, lab))
        have = set().union(*(known[n] for n in names)) | FREE_LABELS
        for group in re.findall(r"\bby \(([^)]*)\)", expr):
            for lab in [x.strip() for x in group.split(",")]:
                check(lab in have, "%s: groups by %s, which no metric of it has" % (title, lab))


def prometheus_queries(queries, gport, nport, tmp):
    prom = shutil.which("prometheus")
    if prom is None:
        print("skip real Prometheus (not installed: deploy/install-deps.sh test)")
        return
    pport = free_port()
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n"
                "  - job_name: cairn-gateway\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n"
                "  - job_name: cairn-storage\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % (gport, nport))
    log = open(os.path.join(tmp, "prometheus.log"), "wb")
    p = subprocess.Popen([prom, "--config.file", cfg, "--storage.tsdb.path",
                          os.path.join(tmp, "tsdb"), "--web.listen-address",
                          "127.0.0.1:%d" % pport], stdout=log, stderr=log)

    def q(expr):
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (pport, urllib.parse.urlencode(
            {"query": expr}))
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read())
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                up = q("sum(up)")["data"]["result"]
                n = q("min(count_over_time(up[1m]))")["data"]["result"]
                if up and float(up[0]["value"][1]) == 2 and n and float(n[0]["value"][1]) >= 6:
                    break
            except OSError:
                pass
            check(p.poll() is None, "prometheus exited")
            check(time.monotonic() < deadline, "prometheus did not scrape both targets")
            time.sleep(0.5)
        for title, expr in queries:
            e = (expr.replace("$__rate_interval", "30s").replace("$gateway_job", "cairn-gateway")
                 .replace("$storage_job", "cairn-storage"))
            r = q(e)
            check(r["status"] == "success", "%s: %s: %r" % (title, e, r))
            check(r["data"]["result"], "%s: no series for %s" % (title, e))
        print("ok   %d queries answered by Prometheus %s" % (len(queries), prom))
    finally:
        p.terminate()
        p.wait(30)
        log.close()


def main():
    with open(DASH) as f:
        dash = json.load(f)
    check_dashboard_shape(dash)
    queries = panel_queries(dash)
    gport, nport = free_port(), free_port()
    tmp = tempfile.mkdtemp(prefix="cairn-grafana-")
    try:
        with Cluster(nodes=1, settings={"metrics.port": gport,
                                        "large_object.threshold_of_chunk_len": "1M",
                                        "large_object.chunked_obj_len": "1M"},
                     node_settings={"metrics.port": nport}) as c:
            s3 = c.boto()
            s3.create_bucket(Bucket="dash")
            s3.put_object(Bucket="dash", Key="small", Body=b"x" * 1000)
            s3.put_object(Bucket="dash", Key="big", Body=os.urandom(3 << 20))
            for _ in range(3):
                s3.get_object(Bucket="dash", Key="small")["Body"].read()
                s3.get_object(Bucket="dash", Key="big")["Body"].read()
            check(error_code(s3.get_object, Bucket="dash", Key="nope")[1] == 404, "404")
            samples = parse(scrape(gport))
            samples.update(parse(scrape(nport)))
            known = labels_of(samples)
            check_names(queries, known)
            print("ok   %d queries of %d panels name metrics and labels of a real scrape"
                  % (len(queries), len(dash["panels"])))
            # traffic goes on while Prometheus scrapes, so rates are not empty
            prometheus_queries(queries, gport, nport, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("all passed")


if __name__ == "__main__":
    main()
