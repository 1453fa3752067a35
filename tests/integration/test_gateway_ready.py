"""GET /_cairn/ready: 200 "ok" while every replica set of the ring has W
up nodes for writes and R for reads; 503 with the reason when two of three
nodes are stopped (the gateway notices without any S3 traffic: one worker
pings idle nodes every storage.probe_interval); 200 again once they are
back; 503 "draining" after SIGTERM while a request holds the gateway open.
/_cairn/health stays 200 throughout (liveness)."""
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_util  # noqa: E402
from s3util import check  # noqa: E402


def get(c, path, conn=None):
    """(status, body) of GET path, on a fresh connection unless conn."""
    req = ("GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" %
           (path, "" if conn else "Connection: close\r\n")).encode()
    if conn is None:
        out = c.raw(req)
    else:
        conn.sendall(req)
        out = b""
        while b"\r\n\r\n" not in out or not out.endswith(b"\n"):
            b = conn.recv(65536)
            check(b, "connection closed before the response")
            out += b
    head, _, body = out.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()


def wait_status(c, path, want, secs):
    deadline = time.monotonic() + secs
    while True:
        st, body = get(c, path)
        if st == want:
            return body
        check(time.monotonic() < deadline,
              "%s stayed %d (%r), expected %d" % (path, st, body, want))
        time.sleep(0.1)


def test_quorum(c):
    st, body = get(c, "/_cairn/ready")
    check(st == 200 and body == "ok\n", "ready with 3 nodes: %d %r" % (st, body))
    stopped = c.nodes[1:]
    for n in stopped:
        n.stop()
    # request_timeout 1s + probe_interval 200ms: a few seconds at most
    body = wait_status(c, "/_cairn/ready", 503, 15)
    print("ready with 2 of 3 nodes stopped: 503 %s" % body.strip(), flush=True)
    check("fewer than W=2" in body and "down:" in body, "503 reason: %r" % body)
    for n in stopped:
        check(n.endpoint[len("tcp://"):] in body, "%s not named in %r" % (n.endpoint, body))
    st, _ = get(c, "/_cairn/health")
    check(st == 200, "health is liveness: %d with nodes down" % st)
    for n in stopped:
        n.start()
    wait_status(c, "/_cairn/ready", 200, 15)


def test_draining(c):
    # a keep-alive connection holds the drain open until its next response
    # ends; the ready answer it gets on the way is 503
    held = socket.create_connection(("127.0.0.1", c.port), timeout=10)
    st, _ = get(c, "/_cairn/ready", held)
    check(st == 200, "ready before SIGTERM: %d" % st)
    slow = socket.create_connection(("127.0.0.1", c.port), timeout=10)
    slow.sendall(b"GET /_cairn/ready HTTP/1.1\r\nHost: x\r\n")   # head not finished
    time.sleep(0.3)
    c.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    slow.sendall(b"\r\n")
    out = b""
    while b"\r\n\r\n" not in out or not out.endswith(b"\n"):
        b = slow.recv(65536)
        check(b, "the held request got no answer after SIGTERM")
        out += b
    head, _, body = out.partition(b"\r\n\r\n")
    check(head.startswith(b"HTTP/1.1 503") and body.startswith(b"draining"),
          "ready during the drain: %r" % out)
    slow.close()
    held.close()
    check(c.proc.wait(20) == 0, "the gateway did not stop cleanly")


def main():
    with cluster_util.cluster(nodes=3, settings={"consistency.write": 2,
                                                 "consistency.read": 2}) as c:
        for t in (test_quorum, test_draining):
            t0 = time.monotonic()
            t(c)
            print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
    print("all 2 passed")


if __name__ == "__main__":
    main()
