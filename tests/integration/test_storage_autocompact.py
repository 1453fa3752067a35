"""Automatic compaction (docs/storage.md, Compaction): the node compacts by
itself, with no COMPACT request, once a container's dead space passes
compaction.dead_ratio and compaction.min_dead_bytes, checked every
compaction.check_interval, and paces the copying to compaction.max_rate.

- write, delete: the container files' total size falls with no admin
  command; no run happens while there is no dead space; the progress shows in
  STATS and in the metrics endpoint (compaction_auto_runs_total,
  compaction_reclaimed_bytes_total);
- overwrite half of the keys under a low max_rate: the run waits for the
  rate limit (compaction_throttled_us > 0), every GET during and after it
  returns the latest bytes;
- SIGTERM during a slow automatic run: the node stops it and exits 0, and
  everything is readable after the restart."""
import os
import random
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snclient import StorageNode, free_port  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def blob(key, ver, size):
    return random.Random(key + b"/%d" % ver).randbytes(size)


def disk_usage(node):
    # The compactor runs by itself while we look: a container listed a moment
    # ago may be gone by the time we stat it, and then it holds nothing.
    total = 0
    for p in node.container_files():
        try:
            total += os.path.getsize(p)
        except FileNotFoundError:
            pass
    return total


def metric(port, name):
    page = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10).read()
    for line in page.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no %s in the metrics page" % name)


def wait_for(what, cond, timeout=90):
    deadline = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < deadline, "timed out waiting for " + what)
        time.sleep(0.1)


def test_reclaims_by_itself():
    port = free_port()
    with StorageNode({"obj_containers.max_container_len": "2M", "max_record_len": "1M",
                      "compaction.check_interval": "100ms", "metrics.port": port}) as node:
        c = node.client()
        keys = [b"d/%d" % i for i in range(40)]
        for i, k in enumerate(keys):
            check(c.put(k, blob(k, 1, 256 << 10), ver=1, ts=1000 + i).st == 0, "put")
        full = disk_usage(node)
        check(full > 10 << 20 and len(node.container_files()) >= 5, "written %d" % full)
        # no dead space: ten check periods pass without a run
        time.sleep(1.0)
        s = c.stats()
        check(s["auto_compactions"] == 0 and s["containers_reclaimed"] == 0,
              "no run without dead space: %r" % s)
        for i, k in enumerate(keys):
            check(c.delete(k, 2, 5000 + i)["applied"], "delete")
        # what the deletes left: tombstones (kept for the 10-day grace) and
        # the active container; the dead containers go, with no COMPACT
        wait_for("disk usage to fall", lambda: disk_usage(node) < full // 4)
        s = c.stats()
        check(s["auto_compactions"] >= 1 and s["containers_reclaimed"] >= 4 and
              s["ops_compact"] == 0, "automatic, not requested: %r" % s)
        check(s["records"] == 0 and s["tombstones"] == 40, "index %r" % s)
        for k in keys:
            r = c.head(k)
            check(r.status == "NOT_FOUND" and r["flags"] == 1, "deleted %r: %r" % (k, r))
        check(metric(port, "cairn_storage_compaction_auto_runs_total") >= 1, "runs metric")
        check(metric(port, "cairn_storage_compaction_reclaimed_bytes_total") >= 8 << 20,
              "reclaimed metric")
        print("reclaim: %d -> %d bytes on disk, %d bytes reclaimed" %
              (full, disk_usage(node), s["bytes_reclaimed"]))
        c.close()


def test_throttled_under_reads():
    with StorageNode({"obj_containers.max_container_len": "2M", "max_record_len": "1M",
                      "compaction.check_interval": "100ms", "compaction.dead_ratio": 30,
                      "compaction.max_rate": "1M"}) as node:
        c = node.client()
        keys = [b"h/%d" % i for i in range(32)]
        latest = {}
        for i, k in enumerate(keys):
            check(c.put(k, blob(k, 1, 128 << 10), ver=1, ts=1000 + i).st == 0, "put")
            latest[k] = 1
        stop, errors, reads = threading.Event(), [], [0]

        def reader():
            rc = node.client()
            rnd = random.Random(3)
            while not stop.is_set():
                k = keys[rnd.randrange(len(keys))]
                r = rc.get(k)
                if r.st != 0 or r.payload != blob(k, r["ver"], 128 << 10) or r["ver"] < 1:
                    errors.append((k, r))
                reads[0] += 1
            rc.close()
        t = threading.Thread(target=reader)
        t.start()
        for i, k in enumerate(keys[::2]):
            check(c.put(k, blob(k, 2, 128 << 10), ver=2, ts=9000 + i).st == 0, "overwrite")
            latest[k] = 2
        wait_for("a throttled automatic run", lambda: c.stats()["containers_reclaimed"] >= 1)
        stop.set()
        t.join()
        s = c.stats()
        check(not errors, "reads during compaction: %r" % errors[:3])
        check(s["auto_compactions"] >= 1 and s["relocations"] > 0, "moved %r" % s)
        check(s["compaction_throttled_us"] > 0, "waited for max_rate: %r" % s)
        for k, v in latest.items():
            r = c.get(k)
            check(r.st == 0 and r["ver"] == v and r.payload == blob(k, v, 128 << 10),
                  "latest of %r" % k)
        print("throttled: %d reads during, %d us waited" % (reads[0], s["compaction_throttled_us"]))
        c.close()


def test_stops_on_sigterm():
    port = free_port()
    with StorageNode({"obj_containers.max_container_len": "2M", "max_record_len": "1M",
                      "compaction.check_interval": "100ms", "compaction.dead_ratio": 30,
                      "compaction.max_rate": "16K", "metrics.port": port}) as node:
        c = node.client()
        keys = [b"s/%d" % i for i in range(32)]
        for i, k in enumerate(keys):
            check(c.put(k, blob(k, 1, 128 << 10), ver=1, ts=1000 + i).st == 0, "put")
        for i, k in enumerate(keys[::2]):
            check(c.put(k, blob(k, 2, 128 << 10), ver=2, ts=9000 + i).st == 0, "overwrite")
        # at 16 KiB/s the ~1 MiB to copy would take a minute
        wait_for("the run to start", lambda: metric(port, "cairn_storage_compaction_running") == 1)
        c.close()
        check(node.stop(timeout=20) == 0, "SIGTERM exits 0 during a throttled run")
        check("stopped" in node.log_text(), "the log says the run stopped")
        node.start()
        c = node.client()
        for k in keys:
            v = 2 if int(k.split(b"/")[1]) % 2 == 0 else 1
            r = c.get(k)
            check(r.st == 0 and r["ver"] == v and r.payload == blob(k, v, 128 << 10),
                  "after restart %r" % k)
        c.close()


def main():
    test_reclaims_by_itself()
    test_throttled_under_reads()
    test_stops_on_sigterm()
    print("test_storage_autocompact: ok")


if __name__ == "__main__":
    main()
