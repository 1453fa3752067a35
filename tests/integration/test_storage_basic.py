"""cairn-storage through its protocol: put/get/slice/head/delete/list/
overwrite, (ts, ver) ordering, tombstones, a REQ client, settings (file,
environment, bad values, --dump-config), reads answered by the socket
thread (inline_max) and a clean SIGTERM."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snclient  # noqa: E402
from snclient import StorageNode, crc32c  # noqa: E402

import zmq  # noqa: E402
import msgpack  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def test_crud(node):
    c = node.client()
    data = os.urandom(300000)
    key = b"bucket\x00dir/\xffobj"          # binary-safe key
    r = c.put(key, data, ver=1, ts=1000, etag=b"etag-1", meta=b"\x81\xa1a\x01")
    check(r.st == 0 and r["applied"] is True, "put %r" % r)
    r = c.get(key)
    check(r.st == 0 and r.payload == data and r["size"] == len(data), "get whole")
    check(r["etag"] == b"etag-1" and r["meta"] == b"\x81\xa1a\x01", "etag/meta")
    check(r["crc"] == crc32c(data) and r["ver"] == 1 and r["ts"] == 1000, "crc/ver/ts")
    # slices: within a block, across blocks, clipped, at the end, past the end
    for off, ln in ((0, 1), (65530, 20), (100000, 131072), (299000, 5000), (300000, 10)):
        r = c.get(key, off=off, length=ln)
        check(r.st == 0 and r.payload == data[off:off + ln], "slice %d+%d" % (off, ln))
        check(r["off"] == off and r["size"] == len(data), "slice fields")
    r = c.get(key, off=300001, length=1)
    check(r.status == "BAD_REQUEST" and "past the end" in r["err"], "off past end %r" % r)
    r = c.head(key)
    check(r.st == 0 and r.payload is None and r["size"] == len(data), "head")
    # 1 KiB keys, and a key at the node limit (2048) / over it
    big = b"k" * 1024
    check(c.put(big, b"x").st == 0 and c.get(big).payload == b"x", "1 KiB key")
    check(c.put(b"m" * 2048, b"y").st == 0, "2048-byte key")
    check(c.put(b"m" * 2049, b"y").status == "TOO_LARGE", "2049-byte key")
    # overwrite: newer applies, older / equal is ignored
    check(c.put(key, b"old", ver=9, ts=999)["applied"] is False, "older ts")
    check(c.put(key, b"same", ver=1, ts=1000)["applied"] is False, "same version")
    check(c.get(key).payload == data, "unchanged")
    check(c.put(key, b"new", ver=0, ts=1001)["applied"] is True, "newer ts")
    check(c.get(key).payload == b"new", "overwritten")
    check(c.put(key, b"newer", ver=1, ts=1001)["applied"] is True, "same ts newer ver")
    # delete: tombstone with its version; older delete ignored
    check(c.delete(key, 0, 500)["applied"] is False, "stale delete")
    r = c.delete(key, 7, 2000)
    check(r.st == 0 and r["applied"] is True, "delete")
    for r in (c.get(key), c.head(key)):
        check(r.status == "NOT_FOUND" and r["flags"] == snclient.FLAG_TOMBSTONE, "tombstone %r" % r)
        check(r["ver"] == 7 and r["ts"] == 2000, "tombstone version")
    check(c.put(key, b"older than tombstone", ver=1, ts=1500)["applied"] is False, "put < tombstone")
    r = c.get(b"never")
    check(r.status == "NOT_FOUND" and "flags" not in r.h, "absent key")
    r = c.delete(b"never", 1, 1)
    check(r.st == 0 and r["applied"] is True, "delete of absent key stores a tombstone")
    # empty record
    check(c.put(b"empty", b"").st == 0, "empty put")
    r = c.get(b"empty")
    check(r.st == 0 and r.payload == b"" and r["size"] == 0, "empty get")
    c.close()


def test_list(node):
    c = node.client()
    keys = [b"L/a", b"L/b", b"L/b/1", b"L/c", b"L/\x00", b"L/\xff", b"M/x"]
    for k in keys:
        check(c.put(k, k).st == 0, "put")
    check(c.delete(b"L/c", 5, 10 ** 17)["applied"], "delete")
    r = c.list(prefix=b"L/", limit=1000)
    got = [e["key"] for e in r["ents"]]
    check(got == sorted([b"L/a", b"L/b", b"L/b/1", b"L/\x00", b"L/\xff"]), "list %r" % got)
    check(r["more"] is False, "more false")
    e = r["ents"][1]
    check(e["size"] == 3 and e["etag"] == b"" and e["flags"] == 0 and e["ver"] == 1, "entry %r" % e)
    # paging
    page, after, seen = 2, None, []
    while True:
        r = c.list(prefix=b"L/", after=after, limit=page)
        seen += [e["key"] for e in r["ents"]]
        if not r["more"]:
            break
        after = r["ents"][-1]["key"]
    check(seen == got, "paged list %r" % seen)
    check(c.list(prefix=b"L/", limit=0).st != 0, "limit 0 is refused")
    c.close()


def test_req_socket(node):
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.REQ)
    s.setsockopt(zmq.LINGER, 0)
    snclient.set_curve(s)
    s.connect(node.endpoint)
    s.send(msgpack.packb({"v": 1, "id": 42, "op": 1}))
    check(s.poll(10000), "REQ reply")
    h = msgpack.unpackb(s.recv())
    check(h["id"] == 42 and h["st"] == 0 and h["node"] == "sn-test", "REQ ping %r" % h)
    s.send_multipart([msgpack.packb({"v": 1, "id": 43, "op": 3, "key": b"req", "crc": crc32c(b"zz"),
                                     "ver": 1, "ts": 1}), b"zz"])
    check(s.poll(10000), "REQ put reply")
    check(msgpack.unpackb(s.recv())["st"] == 0, "REQ put")
    s.close()


def test_settings():
    binary = os.path.join(os.environ.get("CAIRN_BIN", "build/bin"), "cairn-storage")
    env = dict(os.environ, CAIRN_IO_THREADS="3", CAIRN_OBJ_CONTAINERS_SYNC_MODE="periodic")
    out = subprocess.run([binary, "--dump-config", "--set", "max_inflight=77"], env=env,
                         capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, "dump-config rc")
    check("io_threads = 3" in out.stdout and "obj_containers.sync_mode = periodic" in out.stdout,
          "env override:\n" + out.stdout)
    check("max_inflight = 77" in out.stdout, "--set")
    for bad, key in (("io_threads=0", "io_threads"), ("obj_containers.sync_mode=sometimes",
                                                      "obj_containers.sync_mode"),
                     ("max_record_len=12Q", "max_record_len"), ("compaction.dead_ratio=101",
                                                                "compaction.dead_ratio")):
        out = subprocess.run([binary, "--set", bad], capture_output=True, text=True, timeout=60)
        check(out.returncode != 0 and key in out.stderr, "bad %s: %s" % (bad, out.stderr))
    out = subprocess.run([binary], env=dict(os.environ, CAIRN_SCRUB_THREADS="-1"),
                         capture_output=True, text=True, timeout=60)
    check(out.returncode != 0 and "scrub_threads" in out.stderr, "bad env: " + out.stderr)


def test_cpu_affinity():
    """cpu_affinity pins every thread of the node (ZeroMQ's I/O thread and
    the I/O pool too: they start after it is applied); a bad list or CPUs
    the node may not use stop it at start, naming the setting's value."""
    allowed = sorted(os.sched_getaffinity(0))
    with StorageNode({"cpu_affinity": str(allowed[-1])}) as node:
        c = node.client()
        check(c.put(b"pin", b"x").st == 0 and c.get(b"pin").payload == b"x", "pinned node serves")
        c.close()
        tasks = os.listdir("/proc/%d/task" % node.proc.pid)
        check(len(tasks) >= 4, "threads: %r" % tasks)  # main, ZeroMQ, the pool, the writer
        for t in tasks:
            cpus = os.sched_getaffinity(int(t))
            check(cpus == {allowed[-1]}, "thread %s runs on %r" % (t, cpus))
    binary = os.path.join(os.environ.get("CAIRN_BIN", "build/bin"), "cairn-storage")
    for bad, why in (("0-", "bad CPU list"), ("1,,2", "bad CPU list"), ("4096", "bad CPU list"),
                     ("1023", "cannot run on CPUs")):
        if bad == "1023" and 1023 in allowed:
            continue
        out = subprocess.run([binary, "--set", "cpu_affinity=" + bad, "--set", "data_dir=/nonexistent"],
                             capture_output=True, text=True, timeout=60)
        check(out.returncode == 2 and why in out.stderr, "cpu_affinity=%s: %s" % (bad, out.stderr))


def test_inline_reads(node, inline_max):
    """GET/HEAD of cached records of up to inline_max bytes are answered
    by the socket thread (STATS inline_reads), small PUTs and DELETEs handed
    by it to the writer (inline_writes); larger ones go through the I/O
    threads; the answers are the same either way."""
    c = node.client()
    small, big = os.urandom(4096), os.urandom(300000)
    w0 = c.stats()["inline_writes"]
    check(c.put(b"in/small", small).st == 0 and c.put(b"in/big", big).st == 0, "puts")
    check(c.delete(b"in/gone", 1, 1).st == 0, "delete")
    # the small PUT and the DELETE went from the socket thread to the writer
    check(c.stats()["inline_writes"] - w0 == (2 if inline_max else 0), "inline writes")
    check(c.put(b"in/bad", b"x" * 10, crc=1).status == "BAD_CHECKSUM", "a bad crc, inline too")
    n0 = c.stats()["inline_reads"]
    for _ in range(20):
        r = c.get(b"in/small")
        check(r.st == 0 and r.payload == small and r["crc"] == crc32c(small), "small get")
        check(c.head(b"in/small")["size"] == 4096, "small head")
    check(c.get(b"in/none").status == "NOT_FOUND", "absent key")
    n1 = c.stats()["inline_reads"]
    check(n1 - n0 == (41 if inline_max else 0), "inline reads %d -> %d" % (n0, n1))
    r = c.get(b"in/big")
    check(r.st == 0 and r.payload == big, "big get")
    n2 = c.stats()["inline_reads"]
    check(n2 == n1, "a read of more than inline_max went to the I/O threads")
    r = c.get(b"in/big", off=1000, length=5000)
    check(r.st == 0 and r.payload == big[1000:6000], "slice")
    check(c.stats()["inline_reads"] == n2 + (1 if inline_max else 0), "a small slice")
    c.close()


def main():
    test_settings()
    test_cpu_affinity()
    with StorageNode({"inline_max": "0"}) as node:
        test_inline_reads(node, 0)
    with StorageNode({"obj_containers.max_container_len": "1M", "max_record_len": "1M", "obj_containers.sync_mode": "writethrough"}) as node:
        test_crud(node)
        test_list(node)
        test_req_socket(node)
        test_inline_reads(node, 65536)
        rc = node.stop()
        check(rc == 0, "clean exit on SIGTERM: %r" % rc)
        check("stopped" in node.log_text(), "shutdown logged")
        # everything is there after a restart
        node.start()
        c = node.client()
        check(c.get(b"empty").st == 0 and c.get(b"L/a").payload == b"L/a", "after restart")
        st = c.stats()
        check(st["recovered_records"] == 0 and st["torn_tails"] == 0, "clean restart %r" % st)
        c.close()
    print("test_storage_basic: ok")


if __name__ == "__main__":
    main()
