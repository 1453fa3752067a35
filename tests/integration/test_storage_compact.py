"""Compaction under load: while a writer overwrites and deletes and readers
verify every GET, COMPACT reclaims dead space (container files unlinked,
bytes_dead down) and purges old tombstones (compaction.tombstone_gc_after
1ms; the writes carry tiny timestamps), no read fails or returns wrong bytes,
STATS records/tombstones match what was written, and everything is still
right after a restart. Then tombstone GC alone: DELETE, compaction purges
the tombstone and reclaims its container, the key stays absent after kill -9
and a restart, also with an older record of it left in an older container."""
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snclient import StorageNode  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def blob(key, ver):
    return random.Random(key + b"/%d" % ver).randbytes(20000 + (ver * 7919) % 60000)


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.latest = {}     # key -> ver (None once deleted)
        self.errors = []
        self.reads = 0


def writer(node, st, stop, start_ver):
    c = node.client()
    ver = start_ver
    rnd = random.Random(start_ver)
    while not stop.is_set():
        key = b"k/%d" % rnd.randrange(60)
        ver += 1
        if rnd.random() < 0.1:
            r = c.delete(key, ver, ver)
            with st.lock:
                if r.st != 0:
                    st.errors.append(("delete", r))
                st.latest[key] = None
        else:
            r = c.put(key, blob(key, ver), ver=ver, ts=ver)
            with st.lock:
                if r.st != 0:
                    st.errors.append(("put", r))
                st.latest[key] = ver
    c.close()


def reader(node, st, stop):
    c = node.client()
    rnd = random.Random(7)
    while not stop.is_set():
        key = b"k/%d" % rnd.randrange(60)
        r = c.get(key)
        if r.st == 0:
            if r.payload != blob(key, r["ver"]):
                st.errors.append(("wrong bytes", key, r["ver"]))
        elif r.status != "NOT_FOUND":
            st.errors.append(("get", key, r))
        st.reads += 1
    c.close()


def main():
    with StorageNode({"obj_containers.max_container_len": "1M", "max_record_len": "1M",
                      "compaction.dead_ratio": 20, "io_threads": 4,
                      "compaction.tombstone_gc_after": "1ms"}) as node:
        st = State()
        stop = threading.Event()
        w = threading.Thread(target=writer, args=(node, st, stop, 0))
        w.start()
        probe = node.client()
        while True:   # build up dead space first
            s = probe.stats()
            if s["containers"] >= 8 and s["bytes_dead"] > s["bytes_live"]:
                break
        probe.close()
        readers = [threading.Thread(target=reader, args=(node, st, stop)) for _ in range(2)]
        for t in readers:
            t.start()
        c = node.client(timeout_ms=120000)
        before = c.stats()
        files_before = len(node.container_files())
        total = {"containers_reclaimed": 0, "records_moved": 0}
        # three compactions at least, and more until the readers have read
        # through them (on a loaded machine three passes can end within a
        # few dozen reads)
        rounds, t0 = 0, time.monotonic()
        while rounds < 3 or (st.reads <= 50 and time.monotonic() - t0 < 60):
            r = c.call("COMPACT")
            check(r.st == 0, "compact %r" % r)
            for k in total:
                total[k] += r["stats"][k]
            rounds += 1
        stop.set()
        w.join()
        for t in readers:
            t.join()
        check(not st.errors, "errors under compaction: %r" % st.errors[:5])
        check(st.reads > 50, "readers ran (%d reads)" % st.reads)
        check(total["containers_reclaimed"] > 0 and total["records_moved"] > 0, "work done %r" % total)
        check(c.stats()["tombstones_purged"] > 0, "tombstones purged under load")
        # one more pass without load, to measure the end state
        c.call("COMPACT")
        after = c.stats()
        check(after["containers_reclaimed"] >= total["containers_reclaimed"], "counted")
        check(len(node.container_files()) < files_before + 3, "container files unlinked")
        check(after["bytes_dead"] < before["bytes_dead"], "dead bytes reclaimed %d -> %d" %
              (before["bytes_dead"], after["bytes_dead"]))

        def verify_all():
            tombstones = 0
            for key, ver in st.latest.items():
                r = c.get(key)
                if ver is None:
                    # a tombstone, or nothing once GC purged it
                    check(r.status == "NOT_FOUND" and r.get("flags", 0) in (0, 1),
                          "deleted %r" % key)
                    tombstones += r.get("flags", 0)
                else:
                    check(r.st == 0 and r["ver"] == ver and r.payload == blob(key, ver),
                          "latest of %r" % key)
            s = c.stats()
            live = sum(1 for v in st.latest.values() if v is not None)
            check(s["records"] == live and s["tombstones"] == tombstones,
                  "records %d tombstones %d, want %d %d" % (s["records"], s["tombstones"],
                                                            live, tombstones))
        verify_all()
        c.close()
        node.stop()
        node.start()
        c = node.client(timeout_ms=60000)
        verify_all()
        r = c.call("SCRUB")
        check(r.st == 0 and r["stats"]["corrupt"] == 0 and r["stats"]["headers_corrupt"] == 0, "scrub %r" % r)
        c.close()
    test_auto_compaction()
    test_tombstone_gc()
    print("test_storage_compact: ok")


def test_auto_compaction():
    """compaction.interval (the older name of compaction.check_interval)
    still runs compaction without a COMPACT request (these 1 MiB containers
    hold less than the default compaction.min_dead_bytes of dead bytes)."""
    with StorageNode({"obj_containers.max_container_len": "1M", "max_record_len": "1M",
                      "compaction.dead_ratio": 50, "compaction.interval": "300ms",
                      "compaction.min_dead_bytes": 0}) as node:
        c = node.client()
        for rnd in range(3):
            for i in range(40):
                check(c.put(b"a/%d" % i, blob(b"a", rnd), ver=rnd + 1).st == 0, "put")
        deadline = time.monotonic() + 30
        while c.stats()["containers_reclaimed"] == 0:
            check(time.monotonic() < deadline, "automatic compaction reclaimed nothing")
            time.sleep(0.1)
        for i in range(40):
            check(c.get(b"a/%d" % i).payload == blob(b"a", 2), "data after automatic compaction")
        c.close()


def container_ids(node):
    return [int(os.path.basename(p)[:8], 16) for p in node.container_files()]


def test_tombstone_gc():
    """DELETE, then COMPACT with compaction.tombstone_gc_after = 1ms: the
    tombstones are purged (HEAD: NOT_FOUND without flags, STATS tombstones
    back to 0), their container file is reclaimed although its plain dead
    share is below compaction.dead_ratio, an older record of a deleted key in
    an older container that stays does not come back, also after kill -9."""
    one_m = 1 << 20
    with StorageNode({"obj_containers.max_container_len": "1M", "max_record_len": "1M",
                      "compaction.dead_ratio": 50,
                      "compaction.tombstone_gc_after": "1ms"}) as node:
        c = node.client()
        now_us = int(time.time() * 1e6)
        # container 1: k (dead after the DELETE) and keep (live, most bytes);
        # a record of max_container_len goes alone into its own container
        check(c.put(b"k", b"x" * 10, ver=1, ts=now_us - 2000).st == 0, "put k")
        check(c.put(b"keep", b"y" * 5000, ver=1, ts=now_us).st == 0, "put keep")
        check(c.put(b"fill/1", b"f" * one_m, ver=1, ts=now_us).st == 0, "fill 1")
        # container 3: the tombstones only
        check(c.delete(b"k", 1, now_us - 1000)["applied"], "delete k")
        check(c.delete(b"ghost", 1, now_us - 1000)["applied"], "delete ghost")
        check(c.put(b"fill/2", b"f" * one_m, ver=1, ts=now_us).st == 0, "fill 2")
        check(c.put(b"fill/3", b"f" * one_m, ver=1, ts=now_us).st == 0, "fill 3")
        s = c.stats()
        check(s["records"] == 4 and s["tombstones"] == 2, "before: %r" % s)
        r = c.head(b"k")
        check(r.status == "NOT_FOUND" and r["flags"] == 1, "tombstone %r" % r)
        ids = container_ids(node)
        check(1 in ids and 3 in ids, "containers %r" % ids)
        time.sleep(0.05)
        r = c.call("COMPACT")
        check(r.st == 0 and r["stats"]["tombstones_purged"] == 2 and
              r["stats"]["containers_reclaimed"] == 1, "compact %r" % r)
        s = c.stats()
        check(s["records"] == 4 and s["tombstones"] == 0 and s["tombstones_purged"] == 2,
              "after: %r" % s)
        ids = container_ids(node)
        check(3 not in ids and 1 in ids, "tombstones' container reclaimed, k's old one kept %r" % ids)
        for key in (b"k", b"ghost"):
            r = c.head(key)
            check(r.status == "NOT_FOUND" and "flags" not in r.h, "purged %r: %r" % (key, r))
        c.close()
        node.kill9()
        node.start()
        c = node.client()
        for key in (b"k", b"ghost"):
            r = c.head(key)
            check(r.status == "NOT_FOUND" and "flags" not in r.h, "after kill -9 %r: %r" % (key, r))
        s = c.stats()
        check(s["records"] == 4 and s["tombstones"] == 0 and s["recovered_records"] == 0,
              "after kill -9: %r" % s)
        check(c.get(b"keep").payload == b"y" * 5000, "keep")
        c.close()


if __name__ == "__main__":
    main()
