"""cairn-storage's metrics endpoint: a node with metrics.port set answers GET
/metrics with Prometheus text; PUT/GET/HEAD/DELETE over ZeroMQ move the
request, status, byte, latency and group-commit series by exactly what was
done; SCRUB and the store's accounting show up; the page passes a strict
parser written here and, when promtool is installed (deploy/install-deps.sh
test), `promtool check metrics`; the listener answers 404/405 to anything
but GET /metrics and refuses an oversized request."""
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snclient import StorageNode, free_port  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(r"^(%s)(?:\{(%s(?:,%s)*)\})? (\S+)$" % (NAME, LABEL, LABEL))
NUM = re.compile(r"^(?:[+-]?Inf|NaN|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)$")


def parse(page):
    """A strict reader of the text format (0.0.4) as the node writes it:
    HELP then TYPE before a family's samples, one family contiguous, every
    sample of a declared family, histogram buckets cumulative with le
    ascending and +Inf equal to _count. Returns {(name, labels): value}."""
    check(page.endswith("\n"), "page ends with a newline")
    fams, samples, current, seen = {}, {}, None, set()
    for line in page[:-1].split("\n"):
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            check(re.fullmatch(NAME, name) and name not in seen, "HELP %r" % line)
            seen.add(name)
            current = name
            continue
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ")
            check(name == current and typ in ("counter", "gauge", "histogram"), "TYPE %r" % line)
            fams[name] = typ
            continue
        m = SAMPLE.match(line)
        check(m is not None, "sample line %r" % line)
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        check(NUM.match(value), "value %r" % line)
        typ = fams.get(current)
        if typ == "histogram":
            check(name in (current + "_bucket", current + "_sum", current + "_count"), line)
        else:
            check(name == current, "sample %r outside its family %r" % (name, current))
        if typ == "counter":
            check(name.endswith("_total") and float(value) >= 0, "counter %r" % line)
        key = (name, labels)
        check(key not in samples, "duplicate %r" % line)
        samples[key] = float(value)
    # histograms: cumulative buckets, +Inf == count
    for (name, labels), v in samples.items():
        if not name.endswith("_count") or fams.get(name[:-6]) != "histogram":
            continue
        base = name[:-6]
        buckets = []
        for (n2, l2), v2 in samples.items():
            if n2 != base + "_bucket":
                continue
            le = re.search(r'le="([^"]*)"', l2).group(1)
            rest = re.sub(r',?le="[^"]*"', "", l2)
            if rest == labels:
                buckets.append((float(le), v2))
        check(buckets and buckets[-1][0] == float("inf") and buckets[-1][1] == v,
              "%s{%s}: +Inf bucket equals count" % (base, labels))
        for (a, ca), (b, cb) in zip(buckets, buckets[1:]):
            check(a < b and ca <= cb, "%s{%s}: buckets cumulative" % (base, labels))
    return samples


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        check(r.status == 200, "status %d" % r.status)
        check(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"),
              "content type %r" % r.headers["Content-Type"])
        return r.read().decode()


def val(s, name, labels=""):
    return s[(name, labels)]


def promtool(page):
    tool = shutil.which("promtool")
    if tool is None:
        print("test_storage_metrics: promtool not installed; checked with the parser only")
        return
    r = subprocess.run([tool, "check", "metrics"], input=page.encode(), capture_output=True)
    # promtool exits non-zero for errors and prints lint problems; either fails
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          "promtool check metrics: %r %r" % (r.stdout, r.stderr))


def test_counts(node, url):
    before = parse(scrape(url))
    c = node.client()
    sizes = [1, 1000, 70000, 300000]
    for i, n in enumerate(sizes):
        r = c.put(b"m/%d" % i, os.urandom(n), ver=1, ts=1000 + i)
        check(r.st == 0 and r["applied"], "put %r" % r)
    got = 0
    for i, n in enumerate(sizes):
        r = c.get(b"m/%d" % i)
        check(r.st == 0 and len(r.payload) == n, "get")
        got += n
    check(c.head(b"m/0").st == 0, "head")
    check(c.delete(b"m/0", 2, 5000).st == 0, "delete")
    check(c.get(b"m/0").status == "NOT_FOUND", "deleted")
    check(c.get(b"never").status == "NOT_FOUND", "missing")
    check(c.put(b"m/bad", b"xyz", crc=1).status == "BAD_CHECKSUM", "bad crc")
    c.close()
    after = parse(scrape(url))

    def d(name, labels=""):
        return val(after, name, labels) - val(before, name, labels)

    ns = "cairn_storage_"
    check(d(ns + "requests_total", 'op="PUT"') == 5, "PUT count %r" % d(ns + "requests_total", 'op="PUT"'))
    check(d(ns + "requests_total", 'op="GET"') == 6, "GET count")
    check(d(ns + "requests_total", 'op="HEAD"') == 1, "HEAD count")
    check(d(ns + "requests_total", 'op="DELETE"') == 1, "DELETE count")
    check(d(ns + "responses_total", 'status="ok"') == 10, "ok replies %r" % d(ns + "responses_total", 'status="ok"'))
    check(d(ns + "responses_total", 'status="not_found"') == 2, "not_found replies")
    check(d(ns + "responses_total", 'status="bad_checksum"') == 1, "bad_checksum replies")
    check(d(ns + "received_payload_bytes_total") == sum(sizes) + 3, "bytes in")
    check(d(ns + "sent_payload_bytes_total") == got, "bytes out %r" % d(ns + "sent_payload_bytes_total"))
    for op, n in (("PUT", 5), ("GET", 6), ("HEAD", 1), ("DELETE", 1)):
        lab = 'op="%s"' % op
        check(d(ns + "request_duration_seconds_count", lab) == n, "latency count of %s" % op)
        check(d(ns + "request_duration_seconds_sum", lab) > 0, "latency sum of %s" % op)
    # 4 PUTs and 1 DELETE went through the writer (the bad-crc PUT did not)
    check(d(ns + "group_commit_writes_sum") == 5, "writes committed %r" % d(ns + "group_commit_writes_sum"))
    check(1 <= d(ns + "group_commit_writes_count") <= 5, "batches")
    check(d(ns + "group_commit_bytes_sum") > sum(sizes), "bytes appended incl. headers")
    check(d(ns + "fsync_duration_seconds_count") >= 1, "syncs (writethrough)")
    check(d(ns + "stored_writes_total", 'op="put"') == 4, "stored puts")
    check(d(ns + "stored_writes_total", 'op="delete"') == 1, "stored deletes")
    check(val(after, ns + "objects") == 3 and val(after, ns + "tombstones") == 1, "objects")
    check(val(after, ns + "live_bytes") > 370000, "live bytes")
    check(val(after, ns + "dead_bytes") > 0, "the deleted record is dead")
    check(val(after, ns + "filesystem_size_bytes") >= val(after, ns + "filesystem_avail_bytes") > 0,
          "filesystem")
    check(val(after, ns + "inflight_requests") == 0 and val(after, ns + "io_queue_depth") == 0,
          "idle queues")
    return after


def test_scrub(node, url):
    before = parse(scrape(url))
    c = node.client()
    r = c.call("SCRUB")
    check(r.st == 0, "scrub %r" % r)
    c.close()
    after = parse(scrape(url))
    ns = "cairn_storage_"
    check(val(after, ns + "scrubs_total") - val(before, ns + "scrubs_total") == 1, "scrubs")
    check(val(after, ns + "scrub_running") == 0, "scrub ended")
    stats = dict((s["name"].decode() if isinstance(s["name"], bytes) else s["name"], s["value"])
                 for s in r["stats"]) if isinstance(r["stats"], list) else r["stats"]
    check(val(after, ns + "scrub_records_total") - val(before, ns + "scrub_records_total") ==
          stats["records"], "scrub records %r" % stats)
    check(val(after, ns + "scrub_bytes_total") - val(before, ns + "scrub_bytes_total") ==
          stats["bytes"], "scrub bytes")
    check(val(after, ns + "corrupt_records_total", 'found_by="scrub"') == 0, "nothing corrupt")


def raw_status(port, request):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(request)
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        data = b""
    finally:
        s.close()
    m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    return int(m.group(1)) if m else None


def test_refusals(port, url):
    for method, path, want in (("POST", "/metrics", 405), ("PUT", "/metrics", 405),
                               ("DELETE", "/metrics", 405), ("GET", "/", 404),
                               ("GET", "/metrics/x", 404), ("GET", "/../etc/passwd", 404)):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method,
                                     data=b"" if method in ("POST", "PUT") else None)
        try:
            urllib.request.urlopen(req, timeout=10)
            check(False, "%s %s answered 2xx" % (method, path))
        except urllib.error.HTTPError as e:
            check(e.code == want, "%s %s: %d, want %d" % (method, path, e.code, want))
            if want == 405:
                check(e.headers.get("Allow") == "GET", "Allow header")
    # headers over the 8 KiB bound and a body over 4 KiB: refused, never 200
    big = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 20000 + b"\r\n\r\n"
    st = raw_status(port, big)
    check(st is None or 400 <= st < 500, "oversized headers: %r" % st)
    body = b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"b" * 100000
    st = raw_status(port, body)
    check(st is None or 400 <= st < 500, "oversized body: %r" % st)
    check(raw_status(port, b"garbage\r\n\r\n") in (None, 400), "garbage request line")
    # and the endpoint still serves
    parse(scrape(url))


def main():
    port = free_port()
    with StorageNode({"metrics.port": port, "obj_containers.sync_mode": "writethrough"}) as node:
        url = "http://127.0.0.1:%d/metrics" % port
        test_counts(node, url)
        test_scrub(node, url)
        test_refusals(port, url)
        promtool(scrape(url))
        rc = node.stop()
        check(rc == 0, "clean exit with the endpoint up: %r" % rc)
    # off by default: no listener, the node serves as before
    with StorageNode() as node:
        c = node.client()
        check(c.call("PING").st == 0, "ping without metrics")
        c.close()
        check("metrics on" not in node.log_text(), "no endpoint by default")
    print("test_storage_metrics: ok")


if __name__ == "__main__":
    main()
