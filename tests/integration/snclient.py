"""A client of the cairn storage protocol, written from proto/PROTOCOL.md only
(it proves that page is enough for a second implementation).

Transport: a ZeroMQ DEALER socket; a request is [header] or [header, payload]
(payload only for PUT); a reply is [header] or, for an OK GET, [header,
payload]. The header is one msgpack map with str keys. Requests carry v=1 (v=2
for the conditional-write ops LOCK/UNLOCK, a PUT with `tok`, and the hinted
handoff ops HINT_ADD/HINT_TAKE), a
client-chosen 64-bit id and op; replies carry the same id and op plus st.
Replies may come back in any order: match them by id.

Transport security: a node with auth = curve is a ZeroMQ CURVE server; a
client sets the node's public key, its own key pair, and must be on the
node's allow-list (docs/security.md).
"""
import itertools
import time

import msgpack
import zmq

VERSION = 1

OPS = {"PING": 1, "STATS": 2, "PUT": 3, "GET": 4, "HEAD": 5, "DELETE": 6,
       "LIST": 7, "SCRUB": 8, "COMPACT": 9, "LOCK": 10, "UNLOCK": 11, "DIGEST": 12,
       "HINT_ADD": 13, "HINT_TAKE": 14}
OP_NAMES = {v: k for k, v in OPS.items()}

ST = {"OK": 0, "NOT_FOUND": 1, "BAD_REQUEST": 2, "CORRUPT": 3, "TOO_LARGE": 4,
      "IO_ERROR": 5, "BUSY": 6, "BAD_VERSION": 7, "BAD_CHECKSUM": 8, "INTERNAL": 9,
      "PRECONDITION": 10, "LOCKED": 11}
ST_NAMES = {v: k for k, v in ST.items()}

FLAG_TOMBSTONE = 1

# CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as in iSCSI.
_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def _crc32c_py(data, crc=0):
    crc ^= 0xFFFFFFFF
    table = _CRC_TABLE
    for b in memoryview(data).cast("B"):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _crc32c_isal():
    """ISA-L's crc32_iscsi through ctypes when the library is installed (the
    C tree uses the same); it works on the raw register, so invert around."""
    import ctypes
    import ctypes.util
    for name in ("libisal.so.2", ctypes.util.find_library("isal")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        fn = lib.crc32_iscsi
        fn.restype = ctypes.c_uint32
        fn.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint32]

        def crc32c_fast(data, crc=0):
            b = bytes(data)
            return (~fn(b, len(b), (~crc) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return crc32c_fast
    return None


crc32c = _crc32c_isal() or _crc32c_py
assert crc32c(b"123456789") == 0xE3069283 == _crc32c_py(b"123456789")


class Reply:
    """A decoded reply: the header map (str keys) and the payload bytes."""

    def __init__(self, header, payload):
        self.h = header
        self.payload = payload

    @property
    def st(self):
        return self.h.get("st")

    @property
    def status(self):
        return ST_NAMES.get(self.st, "?")

    def __getitem__(self, k):
        return self.h[k]

    def get(self, k, default=None):
        return self.h.get(k, default)

    def __repr__(self):
        return "Reply(%r, payload=%s)" % (
            self.h, None if self.payload is None else "%d bytes" % len(self.payload))


class ProtocolError(Exception):
    pass


def set_curve(sock, curve="default"):
    """Makes a socket (before connect) a CURVE client: curve as in Client."""
    if curve == "default":
        curve = test_keys().client_curve() if AUTH == "curve" else None
    if curve is not None:
        sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = curve


class Client:
    """One DEALER connection. send() queues a request and returns its id;
    recv() returns the next reply (any order); call() does both for one.
    curve: (server public key, client public key, client secret key), Z85
    bytes; "default": the test harness's keys when it runs with curve
    (test_keys()); None: a plain connection."""

    def __init__(self, endpoint, ctx=None, timeout_ms=10000, curve="default"):
        self.ctx = ctx or zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        set_curve(self.sock, curve)
        self.sock.connect(endpoint)
        self.timeout_ms = timeout_ms
        self._ids = itertools.count(1)
        self._early = {}

    def close(self):
        self.sock.close(0)

    def send_raw(self, frames):
        """Sends frames as they are (for malformed-request tests)."""
        self.sock.send_multipart(frames)

    def send(self, op, payload=None, **fields):
        rid = fields.pop("id", None)
        if rid is None:
            rid = next(self._ids)
        hdr = {"v": fields.pop("v", VERSION), "id": rid, "op": OPS[op] if isinstance(op, str) else op}
        for k, v in fields.items():
            if isinstance(v, str) and k in ("key", "prefix", "after", "etag", "meta"):
                v = v.encode()
            hdr[k] = v
        frames = [msgpack.packb(hdr, use_bin_type=True)]
        if payload is not None:
            frames.append(bytes(payload))
        self.sock.send_multipart(frames, copy=False)
        return rid

    def recv_frames(self, timeout_ms=None):
        t = self.timeout_ms if timeout_ms is None else timeout_ms
        if not self.sock.poll(t):
            raise TimeoutError("no reply within %d ms" % t)
        return self.sock.recv_multipart()

    def recv(self, timeout_ms=None):
        frames = self.recv_frames(timeout_ms)
        if len(frames) not in (1, 2):
            raise ProtocolError("reply of %d frames" % len(frames))
        hdr = msgpack.unpackb(frames[0], raw=False, strict_map_key=False)
        if not isinstance(hdr, dict) or "st" not in hdr or "id" not in hdr:
            raise ProtocolError("bad reply header %r" % (hdr,))
        payload = frames[1] if len(frames) == 2 else None
        r = Reply(hdr, payload)
        if payload is not None and hdr.get("crc") is not None and crc32c(payload) != hdr["crc"]:
            raise ProtocolError("reply payload fails its crc")
        return r

    def recv_id(self, rid, timeout_ms=None):
        """Waits for the reply to request rid, keeping others for later."""
        if rid in self._early:
            return self._early.pop(rid)
        deadline = time.monotonic() + (self.timeout_ms if timeout_ms is None else timeout_ms) / 1000
        while True:
            left = max(1, int((deadline - time.monotonic()) * 1000))
            r = self.recv(left)
            if r["id"] == rid:
                return r
            self._early[r["id"]] = r

    def call(self, op, payload=None, **fields):
        return self.recv_id(self.send(op, payload, **fields))

    # ---- conveniences ----
    def put(self, key, data, ver=1, ts=None, etag=b"", meta=None, crc=None, tok=None):
        f = {"key": key, "ver": ver, "ts": ts if ts is not None else int(time.time() * 1e6),
             "crc": crc32c(data) if crc is None else crc}
        if tok is not None:
            f["tok"] = tok
            f["v"] = 2
        if etag is not None:
            f["etag"] = etag
        if meta is not None:
            f["meta"] = meta
        return self.call("PUT", data, **f)

    def get(self, key, off=None, length=None):
        f = {"key": key}
        if off is not None:
            f["off"] = off
        if length is not None:
            f["len"] = length
        return self.call("GET", **f)

    def head(self, key):
        return self.call("HEAD", key=key)

    def delete(self, key, ver, ts):
        return self.call("DELETE", key=key, ver=ver, ts=ts)

    def lock(self, key, tok, ifver=None):
        """LOCK (v2): the key's conditional-write lease for tok, granted only
        when the live record has ver ifver (None: when there is none)."""
        f = {"key": key, "tok": tok, "v": 2}
        if ifver is not None:
            f["ifver"] = ifver
        return self.call("LOCK", **f)

    def unlock(self, key, tok):
        return self.call("UNLOCK", key=key, tok=tok, v=2)

    def list(self, prefix=b"", after=None, limit=1000):
        f = {"prefix": prefix, "limit": limit}
        if after is not None:
            f["after"] = after
        return self.call("LIST", **f)

    def hint_add(self, node, key, ts, ver):
        """HINT_ADD (v2): keep a hint that node missed the write (ts, ver) of key."""
        return self.call("HINT_ADD", v=2, node=node, key=key, ts=ts, ver=ver)

    def hint_take(self, node=None, after=None, limit=None, done=None):
        """HINT_TAKE (v2): drop the replayed hints done ([(key, ts, ver)]) of
        node, then list node's hints; the reply's stats count every node's."""
        f = {"v": 2}
        if node is not None:
            f["node"] = node
        if after is not None:
            f["after"] = after.encode() if isinstance(after, str) else after
        if limit is not None:
            f["limit"] = limit
        if done:
            f["ents"] = [{"key": k.encode() if isinstance(k, str) else k, "ts": ts, "ver": ver}
                         for k, ts, ver in done]
        return self.call("HINT_TAKE", **f)

    def stats(self):
        r = self.call("STATS")
        return r["stats"] if r.st == 0 else None


# ---- test support: start a real cairn-storage on a free loopback port ----

import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile

# The harness runs every node with auth = curve unless CAIRN_TEST_AUTH=none:
# then every integration test goes through the CURVE handshake and the ZAP
# allow-list, with the one cluster key pair and one client key pair below.
AUTH = os.environ.get("CAIRN_TEST_AUTH", "curve")


def write_key(path, key, secret):
    """Writes a Z85 key file as cairn-admin keygen does (0600 for secrets)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if secret else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(key + b"\n")
    os.chmod(path, 0o600 if secret else 0o644)


class KeyPair:
    """A CURVE key pair in files PREFIX.key and PREFIX.pub."""

    def __init__(self, prefix):
        self.public, self.secret = zmq.curve_keypair()
        self.key_file, self.pub_file = prefix + ".key", prefix + ".pub"
        write_key(self.key_file, self.secret, True)
        write_key(self.pub_file, self.public, False)


class TestKeys:
    """The harness's keys, made once per process: the nodes' cluster key
    pair and the client key pair of the tests, gateways and cairn-admin."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cairn-keys-")
        atexit.register(shutil.rmtree, self.dir, True)
        self.node = KeyPair(os.path.join(self.dir, "node"))
        self.client = KeyPair(os.path.join(self.dir, "client"))

    def client_curve(self, client=None):
        c = client or self.client
        return (self.node.public, c.public, c.secret)

    def gateway_settings(self, client=None):
        c = client or self.client
        return {"storage.auth": "curve", "storage.curve_secret_key_file": c.key_file,
                "storage.curve_server_key_file": self.node.pub_file}

    def admin_env(self, env=None, client=None):
        """Environment for cairn-admin and cairn-sn-bench."""
        c = client or self.client
        e = dict(os.environ if env is None else env)
        e.update({"CAIRN_STORAGE_AUTH": "curve", "CAIRN_STORAGE_CURVE_SECRET_KEY_FILE": c.key_file,
                  "CAIRN_STORAGE_CURVE_SERVER_KEY_FILE": self.node.pub_file})
        return e


_test_keys = None


def test_keys():
    global _test_keys
    if _test_keys is None:
        _test_keys = TestKeys()
    return _test_keys


def admin_env(env=None):
    """Environment that lets cairn-admin reach the harness's nodes."""
    return test_keys().admin_env(env) if AUTH == "curve" else dict(os.environ if env is None
                                                                    else env)


def gateway_settings():
    """Gateway settings that reach the harness's nodes."""
    return test_keys().gateway_settings() if AUTH == "curve" else {}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class StorageNode:
    """A cairn-storage process with a generated config in a temp dir. Use as
    a context manager; the process is always stopped and the dir removed."""

    def __init__(self, settings=None, data_dir=None):
        self.bin = os.path.join(os.environ.get("CAIRN_BIN", "build/bin"), "cairn-storage")
        self.tmp = tempfile.mkdtemp(prefix="cairn-sn-")
        self.data_dir = data_dir or os.path.join(self.tmp, "data")
        self.settings = {"node_id": "sn-test", "data_dir": self.data_dir, "io_threads": 4,
                         "log_level": "info"}
        # the allow-list is the node's own file, so a test may edit it and
        # send SIGHUP
        self.allowed_path = os.path.join(self.tmp, "allowed_clients")
        if AUTH == "curve":
            keys = test_keys()
            with open(self.allowed_path, "w") as f:
                f.write("# the test harness's client key\n%s test-client\n"
                        % keys.client.public.decode())
            self.settings.update({"auth": "curve",
                                  "security.curve_secret_key_file": keys.node.key_file,
                                  "security.curve_allowed_clients_file": self.allowed_path})
        self.settings.update(settings or {})
        self.proc = None
        self.log_path = os.path.join(self.tmp, "node.log")
        self.start()

    def start(self):
        self.port = free_port()
        self.endpoint = "tcp://127.0.0.1:%d" % self.port
        self.settings["listen"] = self.endpoint
        cfg = os.path.join(self.tmp, "storage.conf")
        with open(cfg, "w") as f:
            for k, v in self.settings.items():
                f.write("%s = %s\n" % (k, v))
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([self.bin, "--config", cfg], stdout=self.log,
                                     stderr=self.log)
        c = Client(self.endpoint, timeout_ms=500)
        deadline = time.monotonic() + 60
        try:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError("cairn-storage exited %d:\n%s" % (self.proc.returncode,
                                                                         self.log_text()))
                try:
                    if c.call("PING").st == 0:
                        return
                except TimeoutError:
                    c.close()
                    c = Client(self.endpoint, timeout_ms=500)
                if time.monotonic() > deadline:
                    raise RuntimeError("cairn-storage did not answer PING:\n" + self.log_text())
        finally:
            c.close()

    def client(self, timeout_ms=30000, curve="default"):
        return Client(self.endpoint, timeout_ms=timeout_ms, curve=curve)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self, timeout=60):
        """SIGTERM and wait; returns the exit code."""
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.proc = None
        self.log.close()
        return rc

    def kill9(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            self.log.close()

    def container_files(self):
        d = os.path.join(self.data_dir, "containers")
        return sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".cnr"))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill9() if exc[0] is not None else self.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return False
