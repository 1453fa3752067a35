"""A storage node on a Unix socket (ipc://, what cairn-local runs by default
with auth = none: docs/security.md, "Which deployment gets which") answers
only processes of its own user. The node makes the socket mode 0600 itself
(whatever the umask and the folder's mode), so another user's process is
refused by the kernel at connect (EACCES) and a ZeroMQ DEALER of that user
gets no answer, while the node's own user is served. The node logs that it
runs auth = none on a Unix socket, not the WARN of auth = none on tcp://."""
import os
import stat
import subprocess
import sys
import tempfile
import time

from secutil import check
from snclient import Client

BIN = os.environ.get("CAIRN_BIN", "build/bin")
NOBODY = 65534

# what the other user runs: a raw connect, then a DEALER PING
PROBE = r"""
import errno, socket, sys, zmq
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(path)
    print("connected")
except OSError as e:
    print("refused" if e.errno in (errno.EACCES, errno.EPERM) else "error %d" % e.errno)
ctx = zmq.Context()
d = ctx.socket(zmq.DEALER)
d.setsockopt(zmq.LINGER, 0)
d.connect("ipc://" + path)
import msgpack
d.send_multipart([b"", msgpack.packb({"v": 1, "id": 1, "op": 1})])
print("answered" if d.poll(1500) else "unanswered")
"""


def main():
    tmp = tempfile.mkdtemp(prefix="cairn-ipc-")
    os.chmod(tmp, 0o755)          # the folder lets anyone through: the socket must not
    path = os.path.join(tmp, "node.sock")
    cfg = os.path.join(tmp, "storage.conf")
    with open(cfg, "w") as f:
        f.write("node_id = ipc-test\nlisten = ipc://%s\ndata_dir = %s/data\nauth = none\n"
                "log_level = info\n" % (path, tmp))
    log = open(os.path.join(tmp, "node.log"), "wb")
    old = os.umask(0)             # a permissive umask must not leak into the socket
    try:
        proc = subprocess.Popen([os.path.join(BIN, "cairn-storage"), "--config", cfg],
                                stdout=log, stderr=log)
    finally:
        os.umask(old)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(path):
            check(proc.poll() is None and time.monotonic() < deadline, "the node did not bind")
            time.sleep(0.05)
        mode = stat.S_IMODE(os.stat(path).st_mode)
        check(mode == 0o600, "socket mode %o, not 600" % mode)
        c = Client("ipc://" + path, timeout_ms=10000, curve=None)
        try:
            check(c.call("PING").st == 0, "the node's own user is not served")
        finally:
            c.close()
        print("ok   socket mode 0600 under umask 000; the owner's PING answered")

        if os.geteuid() != 0:
            print("SKIP another user's connect: needs root to run a probe as nobody")
        else:
            p = subprocess.run([sys.executable, "-c", PROBE, path], capture_output=True,
                               text=True, timeout=60,
                               preexec_fn=lambda: (os.setgid(NOBODY), os.setuid(NOBODY)))
            out = p.stdout.split()
            check(p.returncode == 0 and out == ["refused", "unanswered"],
                  "another user's probe: %r %s" % (out, p.stderr[-2000:]))
            print("ok   another user (nobody) is refused at connect and its DEALER is unanswered")
        with open(os.path.join(tmp, "node.log")) as f:
            text = f.read()
        check("auth = none on a Unix socket" in text and "WARN auth = none" not in text,
              "the node's auth line:\n" + text[-2000:])
        print("ok   the node logs auth = none on a Unix socket, without the tcp WARN")
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
