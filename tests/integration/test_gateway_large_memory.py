"""The gateway's memory stays bounded on large objects, whatever their size:
its RSS (sampled every 50 ms from /proc) stays under 64 MiB
- during a large PUT streamed at full speed,
- during a GET of that object by a deliberately slow client (20 MB/s),
- with 8 such slow GETs at once,
and a slow but live client is never cut off (each slow reader gets every
byte it asked for, in order and intact).

Default settings (5 MiB chunks, 512 KiB slices, 4 in flight, 4 MiB output
high-water mark) on 3 nodes with one replica and obj_containers.sync_mode =
none: durability is not what is tested, and one replica keeps the disk
traffic of a 2 GiB object at 2 GiB.

Cost. A 2 GiB GET at 20 MB/s takes 100 s, so the slow reads sample RSS over
a prefix of the transfer: the bound is reached within the first second
(output buffer and slices in flight are full once the client falls behind)
and does not grow with the bytes sent, so a prefix long enough for several
hundred slices shows the steady state. The 8 slow readers run concurrently,
over the same window. By default (CI) the object is 512 MiB and the windows
8 s: about 30 s in all. CAIRN_LO_HEAVY=1 runs the issue's full size (2 GiB
object, 20 s windows): about 2 minutes on 2 cores."""
import hashlib
import http.client
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import Cluster, check  # noqa: E402
from test_gateway_chunked import sign_v4  # noqa: E402

HEAVY = os.environ.get("CAIRN_LO_HEAVY") == "1"
MIB = 1024 * 1024
SIZE = (2048 if HEAVY else 512) * MIB
WINDOW = 20.0 if HEAVY else 8.0
RATE = 20e6                      # bytes/s of a slow reader
RSS_LIMIT = 64 * MIB
BLOCK = os.urandom(MIB)


def block(i):
    """1 MiB block i of the object: deterministic, different per block."""
    return i.to_bytes(8, "big") + BLOCK[8:]


class RssSampler:
    def __init__(self, pid):
        self.pid = pid
        self.peak = 0
        self.samples = 0
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def rss(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, self.rss())
            self.samples += 1
            time.sleep(0.05)

    def done(self):
        self.stop.set()
        self.t.join()
        return self.peak


def put_stream(c, key):
    path = "/mem/" + key
    hdrs = sign_v4("PUT", path, {"x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                                 "content-length": str(SIZE)}, c.port)
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=120)
    conn.putrequest("PUT", path, skip_accept_encoding=True, skip_host=True)
    for k, v in hdrs.items():
        conn.putheader(k, v)
    conn.endheaders()
    md5 = hashlib.md5()
    for i in range(SIZE // MIB):
        b = block(i)
        md5.update(b)
        conn.send(b)
    r = conn.getresponse()
    body = r.read()
    conn.close()
    check(r.status == 200, "PUT %d %r" % (r.status, body))
    check(r.getheader("ETag") == '"%s"' % md5.hexdigest(), "etag")


def slow_get(c, key, seconds, out, idx):
    """Reads at RATE for `seconds`, checking every byte; out[idx] = bytes."""
    path = "/mem/" + key
    hdrs = sign_v4("GET", path, {"x-amz-content-sha256": hashlib.sha256(b"").hexdigest()},
                   c.port)
    s = socket.create_connection(("127.0.0.1", c.port), timeout=60)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 * 1024)
    s.sendall(b"GET %s HTTP/1.1\r\n" % path.encode() +
              b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in hdrs.items()) +
              b"\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(65536)
    head, buf = buf.split(b"\r\n\r\n", 1)
    check(head.startswith(b"HTTP/1.1 200"), "slow GET %r" % head[:200])
    got, pos, t0 = 0, 0, time.monotonic()
    ok = True
    while time.monotonic() - t0 < seconds:
        if not buf:
            buf = s.recv(65536)
            if not buf:
                ok = False      # cut off
                break
        # compare with the expected bytes
        bi, off = divmod(pos, MIB)
        want = block(bi)[off:off + len(buf)]
        n = len(want)
        if buf[:n] != want:
            ok = False
            break
        pos += n
        got += n
        buf = buf[n:]
        ahead = got / RATE - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
    s.close()
    out[idx] = got if ok else -got - 1


def test_memory(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="mem")
    rss = RssSampler(c.proc.pid)
    base = rss.rss()
    t0 = time.monotonic()
    put_stream(c, "big")
    peak_put = rss.done()
    put_s = time.monotonic() - t0
    print("PUT %d MiB in %.1fs (%.0f MB/s): gateway RSS baseline %.1f MiB, peak %.1f MiB" %
          (SIZE // MIB, put_s, SIZE / put_s / 1e6, base / MIB, peak_put / MIB), flush=True)
    check(peak_put < RSS_LIMIT, "RSS during the PUT %.1f MiB" % (peak_put / MIB))

    for n in (1, 8):
        rss = RssSampler(c.proc.pid)
        out = [0] * n
        ts = [threading.Thread(target=slow_get, args=(c, "big", WINDOW, out, i))
              for i in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        peak = rss.done()
        print("%d slow GET(s) at %.0f MB/s for %.0fs: read %s MiB, gateway RSS peak %.1f MiB" %
              (n, RATE / 1e6, WINDOW, [round(x / MIB) for x in out], peak / MIB), flush=True)
        # a negative count means cut off or wrong bytes; the floor only shows
        # progress (these Python readers check every byte and fall behind
        # RATE on a loaded 2-core machine, which is not the gateway's doing:
        # a CI run beside other work read 32 of the 160 MB in 8 s); 10 % of
        # RATE is still several times what one stream's read-ahead holds
        check(all(x >= 0 for x in out), "slow readers cut off or wrong: %r" % out)
        check(all(x > 0.1 * RATE * WINDOW for x in out), "slow readers stalled: %r" % out)
        check(peak < RSS_LIMIT, "RSS with %d slow GETs %.1f MiB" % (n, peak / MIB))
    s3.delete_object(Bucket="mem", Key="big")


if __name__ == "__main__":
    with Cluster(settings={"consistency.num_of_replicas": 1, "consistency.write": 1,
                           "large_object.reclaim_delay": "0s"},
                 node_settings={"obj_containers.sync_mode": "none", "io_threads": 2}) as c:
        t0 = time.monotonic()
        test_memory(c)
        print("ok   test_memory (%.1fs)" % (time.monotonic() - t0))
    print("all 1 passed")
