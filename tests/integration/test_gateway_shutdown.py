"""SIGTERM stops the gateway gracefully: the listener closes (new
connections are refused), idle keep-alive connections are closed, a
transfer in progress runs to its last byte, and the process exits 0 once
nothing is left (without leaks under the sanitizers). A connection that
never finishes does not hold the stop for longer than http.shutdown_timeout,
and a second SIGTERM stops at once."""
import hashlib
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import Cluster, check  # noqa: E402

MIB = 1024 * 1024


def wait_exit(c, secs):
    try:
        return c.proc.wait(secs)
    except Exception:
        return None


def connect(c):
    return socket.create_connection(("127.0.0.1", c.port), timeout=10)


def refused(c):
    try:
        connect(c).close()
        return False
    except ConnectionRefusedError:
        return True


def presigned_get(c, key):
    s3 = c.boto(signature_version="s3v4")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "sdrain", "Key": key},
                                    ExpiresIn=600)
    return url[len(c.url):]


def read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = s.recv(65536)
        check(b, "connection closed before the response head")
        buf += b
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head.decode(), rest


def test_drain(size):
    with Cluster(settings={"http.shutdown_timeout": "60s"}) as c:
        s3 = c.boto()
        s3.create_bucket(Bucket="sdrain")
        body = os.urandom(size)
        s3.put_object(Bucket="sdrain", Key="big", Body=body)
        # an idle keep-alive connection, after one answered request
        idle = connect(c)
        idle.sendall(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n\r\n")
        head, _ = read_head(idle)
        check(head.startswith("HTTP/1.1 200"), head)
        # a GET in progress whose reader has stopped reading for now
        slow = connect(c)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        slow.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" %
                      (presigned_get(c, "big"), c.port)).encode())
        head, got = read_head(slow)
        check(head.startswith("HTTP/1.1 200"), head)
        time.sleep(0.5)
        c.proc.send_signal(signal.SIGTERM)
        # the idle connection is closed by the server
        idle.settimeout(5)
        check(idle.recv(1) == b"", "an idle keep-alive connection was not closed")
        idle.close()
        deadline = time.monotonic() + 5
        while not refused(c):
            check(time.monotonic() < deadline, "new connections still accepted after SIGTERM")
            time.sleep(0.05)
        time.sleep(1.0)
        check(c.proc.poll() is None, "the gateway exited with a transfer in progress")
        # the transfer finishes: every byte, then the server closes
        h = hashlib.md5(got)
        n = len(got)
        slow.settimeout(30)
        while True:
            b = slow.recv(1 << 20)
            if not b:
                break
            h.update(b)
            n += len(b)
        slow.close()
        check(n == size, "GET during the stop got %d of %d bytes" % (n, size))
        check(h.digest() == hashlib.md5(body).digest(), "GET during the stop: bytes differ")
        rc = wait_exit(c, 20)
        check(rc == 0, "gateway exit status %r after the drain" % rc)
        log = c.log_text()
        check("LeakSanitizer" not in log and "AddressSanitizer" not in log,
              "sanitizer report at exit:\n" + log[-4000:])
        check("connections to finish" in log, "no stop line in the log")


def test_deadline():
    with Cluster(settings={"http.shutdown_timeout": "2s"}) as c:
        stuck = connect(c)
        stuck.sendall(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n")   # head never ends
        time.sleep(0.3)
        t0 = time.monotonic()
        c.proc.send_signal(signal.SIGTERM)
        rc = wait_exit(c, 15)
        took = time.monotonic() - t0
        check(rc == 0, "gateway exit status %r after the deadline" % rc)
        check(took >= 1.5, "exited after %.1f s, before http.shutdown_timeout" % took)
        check("still busy after http.shutdown_timeout" in c.log_text(), "no deadline line")
        stuck.close()


def test_second_signal():
    with Cluster(settings={"http.shutdown_timeout": "120s"}) as c:
        stuck = connect(c)
        stuck.sendall(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.3)
        c.proc.send_signal(signal.SIGTERM)
        time.sleep(1.0)
        check(c.proc.poll() is None, "exited with a connection busy and time left")
        c.proc.send_signal(signal.SIGTERM)
        rc = wait_exit(c, 10)
        check(rc == 0, "gateway exit status %r after a second SIGTERM" % rc)
        stuck.close()


def main():
    for name, fn in (("drain", lambda: test_drain(32 * MIB)), ("deadline", test_deadline),
                     ("second_signal", test_second_signal)):
        t0 = time.monotonic()
        fn()
        print("ok   %s (%.1fs)" % (name, time.monotonic() - t0), flush=True)
    print("all 3 passed")


if __name__ == "__main__":
    main()
