"""Slowloris against the gateway (tests/security/).

Many connections each send a request head one byte at a time and never
finish it; the attacker reopens every connection the gateway closes. The
head deadline (http.header_timeout, here 2 s; counted from the head's first
byte, not reset by each byte) must close them, and meanwhile a normal
signed boto3 client keeps doing PUT/GET round trips. A correctness check
with generous bounds, not a timing benchmark.
Two cases: 150 slow connections (well under the cap), and 300 against a
gateway under a 256-fd limit (over the derived cap of 168: slow heads wait
in the backlog; the normal client's keep-alive connection, opened before the
attack, keeps working, and the gateway must not spin at the fd limit)."""
import os
import select
import socket
import threading
import time

from secutil import Cluster, check

HEADER_TIMEOUT_S = 2
HEAD = b"PUT /victim/key HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


class Slowloris(threading.Thread):
    """Keeps SLOW connections trickling a head; records how long each one
    lived from its first byte to the gateway's close."""

    def __init__(self, port, n, seconds):
        super().__init__(daemon=True)
        self.port = port
        self.n = n
        self.seconds = seconds
        self.stop = threading.Event()
        self.lifetimes = []   # seconds from first byte to close by the gateway
        self.opened = 0
        self.error = None

    def _open(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=2)
        s.setblocking(False)
        self.opened += 1
        return [s, time.monotonic(), 0]   # socket, first byte time, bytes sent

    def run(self):
        conns = []
        try:
            conns = [self._open() for _ in range(self.n)]
            end = time.monotonic() + self.seconds
            while not self.stop.is_set() and time.monotonic() < end:
                for c in conns:
                    if c[2] < len(HEAD):
                        b = HEAD[c[2]:c[2] + 1]
                    else:
                        b = b"a"
                    try:
                        c[0].send(b)
                        c[2] += 1
                    except OSError:
                        pass   # closed: noticed below
                readable, _, _ = select.select([c[0] for c in conns], [], [], 0.25)
                for i, c in enumerate(conns):
                    if c[0] not in readable:
                        continue
                    try:
                        data = c[0].recv(4096)
                    except OSError:
                        data = b""
                    if data and not data.startswith(b"HTTP/1.1 "):
                        continue
                    # closed (or answered, then closed): note it and reopen
                    self.lifetimes.append(time.monotonic() - c[1])
                    c[0].close()
                    if self.opened < 20 * self.n:
                        conns[i] = self._open()
        except Exception as e:   # noqa: BLE001 (reported by the main thread)
            self.error = e
        finally:
            for c in conns:
                c[0].close()


def cpu_seconds(pid):
    """utime + stime of pid, in seconds (/proc/PID/stat fields 14 and 15)."""
    with open("/proc/%d/stat" % pid) as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def run_case(name, slow, attack_s, max_rtt_s, prefix=None, bounded_lives=True):
    with Cluster(nodes=1, settings={"http.header_timeout": "%ds" % HEADER_TIMEOUT_S,
                                    "http.threads": 2}, gateway_prefix=prefix) as c:
        s3 = c.boto(connect_timeout=10, read_timeout=30)
        s3.create_bucket(Bucket="victim")
        attack = Slowloris(c.port, slow, attack_s)
        cpu0, t_start = cpu_seconds(c.proc.pid), time.monotonic()
        attack.start()
        time.sleep(0.5)
        lat = []
        body = b"x" * 65536
        end = time.monotonic() + attack_s - 1
        i = 0
        while time.monotonic() < end and i < 500:
            t0 = time.monotonic()
            s3.put_object(Bucket="victim", Key="k%d" % i, Body=body)
            got = s3.get_object(Bucket="victim", Key="k%d" % i)["Body"].read()
            lat.append(time.monotonic() - t0)
            check(got == body, "round trip %d read back wrong bytes" % i)
            i += 1
        attack.stop.set()
        attack.join(30)
        cpu = cpu_seconds(c.proc.pid) - cpu0
        wall = time.monotonic() - t_start
        check(attack.error is None, "attacker failed: %r" % (attack.error,))
        lat.sort()
        lives = sorted(attack.lifetimes)
        print("     %s: %d round trips, latency p50 %.3f s max %.3f s; %d slow connections "
              "opened, %d closed by the gateway, lifetime min %.2f max %.2f s; gateway CPU "
              "%.2f s in %.1f s" % (name, len(lat), lat[len(lat) // 2], lat[-1], attack.opened,
                                    len(lives), lives[0] if lives else -1,
                                    lives[-1] if lives else -1, cpu, wall), flush=True)
        check(len(lat) >= 5, "only %d round trips in %d s" % (len(lat), attack_s))
        check(lat[-1] < max_rtt_s, "a round trip took %.1f s under slowloris" % lat[-1])
        check(len(lives) >= min(slow, 150), "the gateway closed only %d slow heads" % len(lives))
        if bounded_lives:
            check(lives[-1] < HEADER_TIMEOUT_S + 3, "a slow head lived %.1f s "
                  "(http.header_timeout %d s)" % (lives[-1], HEADER_TIMEOUT_S))
        check(cpu < 0.5 * wall, "gateway used %.1f s CPU in %.1f s" % (cpu, wall))
        check(c.proc.poll() is None, "gateway died")
    print("ok   %s" % name, flush=True)


def main():
    run_case("150 slow heads under the cap", 150, 8, 5)
    # over the derived cap (168 at 256 fds): a slow head may wait in the
    # backlog before its deadline starts, so its lifetime is not bounded
    run_case("300 slow heads at the fd limit", 300, 14, 12,
             prefix=["prlimit", "--nofile=256:256"], bounded_lives=False)
    print("all passed")


if __name__ == "__main__":
    main()
