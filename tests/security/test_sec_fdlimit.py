"""Accept storms at the file-descriptor limit (tests/security/).

An attacker opens idle connections until the gateway runs out of file
descriptors. Before http.max_connections the accept loop then spun on
EMFILE (~80% CPU) and wrote megabytes per second of one libevent warning.
Here the gateway runs under `prlimit --nofile=256:256` and each case checks,
over a ~2 s window while the idle connections are held, that its CPU time
and its log stay small; then that it serves a normal signed request again
once the idle connections are gone.
Cases: the derived cap (http.max_connections = 0), an explicit small cap
(new connections wait until one closes), and a cap above the fd limit (the
EMFILE back-off)."""
import os
import socket
import time

from secutil import Cluster, check

FD_LIMIT = 256
PRLIMIT = ["prlimit", "--nofile=%d:%d" % (FD_LIMIT, FD_LIMIT)]


def cpu_seconds(pid):
    """utime + stime of pid, in seconds (/proc/PID/stat fields 14 and 15)."""
    with open("/proc/%d/stat" % pid) as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def open_fds(pid, kind="socket:"):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith(kind)
        except OSError:
            pass
    return n


def open_idle(port, n, deadline_s=20):
    """Up to n idle connections (nothing sent); stops at the first refusal or
    stalled connect. Returns the sockets."""
    socks = []
    end = time.monotonic() + deadline_s
    for _ in range(n):
        if time.monotonic() > end:
            break
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
        except OSError:
            break
    return socks


def close_all(socks):
    for s in socks:
        s.close()
    socks.clear()


def quiet_while_held(c, what, window_s=2.0):
    """Over window_s: the gateway's CPU stays low and its log does not grow
    by megabytes. Returns (cpu seconds, log bytes) of the window."""
    time.sleep(0.5)   # let the accepts settle
    pid = c.proc.pid
    cpu0, log0 = cpu_seconds(pid), os.path.getsize(c.log_path)
    time.sleep(window_s)
    cpu = cpu_seconds(pid) - cpu0
    grew = os.path.getsize(c.log_path) - log0
    print("     %s: %.2f s CPU in %.1f s, log +%d bytes, %d sockets open"
          % (what, cpu, window_s, grew, open_fds(pid)), flush=True)
    check(c.proc.poll() is None, "%s: gateway died:\n%s" % (what, c.log_text()[-3000:]))
    check(cpu < 0.25 * window_s, "%s: gateway used %.2f s CPU in %.1f s while idle connections "
          "were held (accept loop spinning?)" % (what, cpu, window_s))
    check(grew < 1 << 20, "%s: gateway log grew %d bytes in %.1f s" % (what, grew, window_s))
    return cpu, grew


def signed_round_trip(c, bucket):
    """A normal boto3 client works: retried for a few seconds while the
    gateway works off its backlog of closed connections."""
    s3 = c.boto()
    end = time.monotonic() + 20
    while True:
        try:
            s3.create_bucket(Bucket=bucket)
            s3.put_object(Bucket=bucket, Key="k", Body=b"after the storm")
            got = s3.get_object(Bucket=bucket, Key="k")["Body"].read()
            check(got == b"after the storm", "read back %r" % got)
            return
        except Exception:   # noqa: BLE001 (connect timeouts, resets: retry)
            if time.monotonic() > end:
                raise
            time.sleep(0.5)


def test_derived_cap():
    """http.max_connections = 0 under a 256-fd limit: the gateway caps below
    the limit, stops accepting at the cap, and does not spin."""
    with Cluster(nodes=1, gateway_prefix=PRLIMIT) as c:
        socks = open_idle(c.port, 2 * FD_LIMIT)
        try:
            check(len(socks) > FD_LIMIT // 2, "only %d connections opened" % len(socks))
            quiet_while_held(c, "derived cap")
            check(open_fds(c.proc.pid, "") <= FD_LIMIT, "fds above the limit?")
            check("at most " in c.log_text(), "the cap is not logged")
        finally:
            close_all(socks)
        signed_round_trip(c, "fd-derived")


def test_explicit_cap_waits_then_resumes():
    """http.max_connections = 40: connection 41 waits in the backlog (no
    answer), and is served as soon as one of the 40 closes."""
    cap = 40
    with Cluster(nodes=1, settings={"http.max_connections": cap},
                 gateway_prefix=PRLIMIT) as c:
        socks = open_idle(c.port, cap)
        try:
            check(len(socks) == cap, "opened %d of %d" % (len(socks), cap))
            time.sleep(0.5)
            late = socket.create_connection(("127.0.0.1", c.port), timeout=2)
            late.sendall(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            late.settimeout(1.5)
            try:
                early = late.recv(100)
            except socket.timeout:
                early = None
            check(early is None, "connection over the cap was served: %r" % early)
            quiet_while_held(c, "explicit cap")
            socks.pop().close()
            late.settimeout(10)
            got = late.recv(100)
            check(got.startswith(b"HTTP/1.1 200"), "after a close, the waiting one got %r" % got)
            late.close()
        finally:
            close_all(socks)
        signed_round_trip(c, "fd-explicit")


def test_cap_above_fd_limit_backs_off():
    """http.max_connections far above the fd limit: accept() fails with
    EMFILE; the gateway backs off instead of spinning and logging."""
    with Cluster(nodes=1, settings={"http.max_connections": 100000},
                 gateway_prefix=PRLIMIT) as c:
        socks = open_idle(c.port, 2 * FD_LIMIT)
        try:
            check(len(socks) > FD_LIMIT // 2, "only %d connections opened" % len(socks))
            quiet_while_held(c, "EMFILE back-off")
        finally:
            close_all(socks)
        signed_round_trip(c, "fd-emfile")


def main():
    for t in (test_derived_cap, test_explicit_cap_waits_then_resumes,
              test_cap_above_fd_limit_backs_off):
        t0 = time.monotonic()
        t()
        print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
    print("all 3 passed")


if __name__ == "__main__":
    main()
