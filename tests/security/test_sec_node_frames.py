"""Oversized frames straight to a storage node (tests/security/).

libzmq allocates a frame whole as soon as it has read the frame's length,
so before ZMQ_MAXMSGSIZE a client could make a node allocate as much as it
claimed (a 512 MiB PUT frame raised the node's peak RSS by 460 MB before the
TOO_LARGE answer). The node now bounds frames by its own limits plus
MSG_FRAME_SLACK (1 MiB): a larger frame is cut off (libzmq drops that
connection). Checks, on a node with max_record_len = 4M (frame bound
4M + 1M; the 4 MiB header limit is the same):
- a PUT payload a little over max_record_len (within the slack) is still
  read and answered TOO_LARGE;
- 128 MiB PUT frames, three times on fresh connections, raise the node's
  peak RSS (VmHWM) by far less than one frame;
- the node answers PING, PUT and GET normally afterwards."""
import os
import time

import msgpack
import zmq

from secutil import check  # noqa: F401 (sets up the import path)
import snclient  # noqa: E402
from snclient import OPS, Client, StorageNode, crc32c

MAX_RECORD = 4 << 20
BIG = 128 << 20


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM for %d" % pid)


def put_frames(key, payload, rid=1):
    hdr = {"v": 1, "id": rid, "op": OPS["PUT"], "key": key, "crc": 0, "ver": 1,
           "ts": int(time.time() * 1e6), "etag": b""}
    return [msgpack.packb(hdr, use_bin_type=True), payload]


def send_oversized(endpoint, payload, wait_s=4):
    """Sends one PUT frame of len(payload) on a fresh DEALER; returns the
    reply's status, or None when the node dropped the connection (no reply
    within wait_s)."""
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    snclient.set_curve(s)
    s.connect(endpoint)
    try:
        s.send_multipart(put_frames(b"big", payload), copy=False)
        if not s.poll(wait_s * 1000):
            return None
        hdr = msgpack.unpackb(s.recv_multipart()[0], raw=False)
        return hdr.get("st")
    finally:
        s.close(0)


def main():
    with StorageNode({"max_record_len": "4M"}) as node:
        c = node.client(timeout_ms=20000)
        data = os.urandom(1 << 20)
        check(c.put(b"warm", data).st == 0, "warm-up put")
        check(c.get(b"warm").payload == data, "warm-up get")

        # a little over the record limit but inside the slack: answered, not cut
        r = c.call("PUT", bytes(MAX_RECORD + (64 << 10)), key=b"over", crc=0, ver=1,
                   ts=int(time.time() * 1e6), etag=b"")
        check(r.status == "TOO_LARGE", "slightly oversized PUT: %r" % r)
        print("ok   a frame inside the slack is answered TOO_LARGE", flush=True)

        pid = node.proc.pid
        before = vm_hwm_kib(pid)
        payload = bytes(BIG)
        statuses = []
        for _ in range(3):
            statuses.append(send_oversized(node.endpoint, payload))
        del payload
        time.sleep(0.5)
        after = vm_hwm_kib(pid)
        grew_mib = (after - before) / 1024
        print("     VmHWM %d -> %d KiB (+%.1f MiB) after 3 x %d MiB frames; replies %r"
              % (before, after, grew_mib, BIG >> 20, statuses), flush=True)
        check(node.proc.poll() is None, "node died:\n" + node.log_text()[-3000:])
        check(grew_mib < (BIG >> 20) / 4, "peak RSS grew %.1f MiB for %d MiB frames"
              % (grew_mib, BIG >> 20))
        print("ok   oversized frames do not raise the peak RSS", flush=True)

        c2 = Client(node.endpoint, timeout_ms=10000)
        try:
            check(c2.call("PING").st == 0, "PING after the oversized frames")
            check(c2.put(b"after", data).st == 0, "PUT after")
            check(c2.get(b"after").payload == data, "GET after")
            check(c.get(b"warm").payload == data, "the first connection still works")
        finally:
            c2.close()
            c.close()
        print("ok   the node still serves requests", flush=True)
    print("all passed")


if __name__ == "__main__":
    main()
