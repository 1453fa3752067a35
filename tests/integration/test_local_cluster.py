"""The README's first command: deploy/local/cairn-local brings up a cluster
(3 nodes + gateway) in a folder, `status` and `env` describe it, the aws cli
works through the printed environment, `down` stops everything, and `up`
again finds the data written before.

The first up runs the default transport (ipc://: Unix sockets of mode 0600
in a 0700 folder, nodes with auth = none); the restart runs --transport tcp,
whose default is auth = curve (cairn-admin gets in with the keys `env`
exports and not without them)."""
import json
import os
import random
import socket
import stat
import subprocess
import tempfile
import time
import urllib.request

SRC = os.environ.get("CAIRN_SRC", os.getcwd())
BIN = os.environ.get("CAIRN_BIN", os.path.join(SRC, "build", "bin"))
LOCAL = os.path.join(SRC, "deploy", "local", "cairn-local")


def run(*args, env=None, check=True):
    p = subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s\n%s" % (args, p.returncode, p.stdout, p.stderr))
    return p


def port_free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_block():
    """A base port b such that b..b+4 are free (nodes b+1..b+3, gateway b+4)
    and b+100..b+103 (the gateway's and the nodes' metrics), outside the kernel's ephemeral
    range that other tests' free ports use."""
    for _ in range(200):
        b = random.randrange(20000, 30000)
        if all(port_free(b + i) for i in list(range(5)) + [100, 101, 102, 103]):
            return b
    raise AssertionError("no free block of 5 loopback ports")


def check_pinning(d):
    """--pin-nodes on (the default): each node runs on its own share of the
    CPUs this test may use (one each, round robin, with fewer CPUs than
    nodes; unpinned when a node's share would be all of them); the gateway
    is not pinned."""
    cpus = sorted(os.sched_getaffinity(0))
    share = max(1, len(cpus) // 3)
    for i in (1, 2, 3):
        with open(os.path.join(d, "run", "node%d.pid" % i)) as f:
            pid = int(f.read())
        got = os.sched_getaffinity(pid)
        want = set(cpus) if share >= len(cpus) else \
            {cpus[((i - 1) * share + j) % len(cpus)] for j in range(share)}
        assert got == want, "node%d runs on %r, want %r" % (i, got, want)
    with open(os.path.join(d, "run", "gateway.pid")) as f:
        assert os.sched_getaffinity(int(f.read())) == set(cpus), "the gateway is pinned"


def main():
    d = tempfile.mkdtemp(prefix="cairn-local-")
    base = free_block()
    gw = base + 4
    common = ["--dir", d, "--build", os.path.dirname(BIN)]
    try:
        up = run(LOCAL, "up", "-d", "--nodes", "3", "--gateway-port", str(gw),
                 "--base-port", str(base), *common)
        assert "node3" in up.stdout and "gateway" in up.stdout, up.stdout
        st = run(LOCAL, "status", *common)
        assert st.stdout.count(" up (pid") == 4, st.stdout
        check_pinning(d)
        murl = "http://127.0.0.1:%d/metrics" % (base + 101)
        assert murl in st.stdout, st.stdout
        with urllib.request.urlopen(murl, timeout=10) as r:
            assert b"cairn_storage_requests_total" in r.read()
        gurl = "http://127.0.0.1:%d/metrics" % (base + 100)
        assert gurl in st.stdout, st.stdout
        with urllib.request.urlopen(gurl, timeout=10) as r:
            assert b"cairn_gateway_requests_total" in r.read()

        env_out = run(LOCAL, "env", *common).stdout
        env = dict(os.environ)
        for line in env_out.splitlines():
            if line.startswith("export "):
                k, v = line[len("export "):].split("=", 1)
                env[k] = v
        assert env["AWS_ACCESS_KEY_ID"] == "AKIACAIRNDEV00000000"
        ep = env["AWS_ENDPOINT_URL"]
        assert ep == "http://127.0.0.1:%d" % gw, ep
        aws = ["/usr/bin/aws", "--endpoint-url", ep]
        src = os.path.join(d, "hello.txt")
        with open(src, "w") as f:
            f.write("hello from cairn-local\n")
        run(*aws, "s3", "mb", "s3://local-test", env=env)
        run(*aws, "s3", "cp", src, "s3://local-test/hello.txt", env=env)

        # the default transport: every node on a Unix socket only this user
        # may open, no keys
        for i in (1, 2, 3):
            sock = os.path.join(d, "sock", "node%d.sock" % i)
            assert "ipc://" + sock in st.stdout, st.stdout
            assert stat.S_ISSOCK(os.stat(sock).st_mode), sock
            assert os.stat(sock).st_mode & 0o077 == 0, oct(os.stat(sock).st_mode)
        assert os.stat(os.path.join(d, "sock")).st_mode & 0o077 == 0
        assert "CAIRN_STORAGE_AUTH" not in env, env_out
        admin = run(os.path.join(BIN, "cairn-admin"), "--cluster", env["CAIRN_CLUSTER_FILE"],
                    "status", env=env)
        assert admin.stdout.count(" up ") == 3, admin.stdout
        # a key kept in the cluster, sealed with the master key `env` exports
        assert os.stat(env["CAIRN_MASTER_KEY_FILE"]).st_mode & 0o077 == 0
        made = json.loads(run(os.path.join(BIN, "cairn-admin"), "--cluster",
                              env["CAIRN_CLUSTER_FILE"], "--json", "key", "create", "local",
                              env=env).stdout)
        kenv = dict(env, AWS_ACCESS_KEY_ID=made["access_key_id"],
                    AWS_SECRET_ACCESS_KEY=made["secret_access_key"])
        deadline = time.monotonic() + 30   # s3.keys_refresh (2 s) on a loaded machine
        while run(*aws, "s3", "ls", env=kenv, check=False).returncode != 0:
            assert time.monotonic() < deadline, "the new key never worked"
            time.sleep(0.5)
        with open(os.path.join(d, "logs", "node1.log")) as f:
            log = f.read()
        assert "on a Unix socket" in log and "WARN auth = none" not in log, log
        run(LOCAL, "down", *common)
        st = run(LOCAL, "status", *common, check=False)
        assert st.returncode != 0 and " up (pid" not in st.stdout, st.stdout

        # the data survives a restart of the whole cluster, here over tcp://
        run(LOCAL, "up", "-d", "--nodes", "3", "--gateway-port", str(gw),
            "--base-port", str(base), "--transport", "tcp", *common)
        got = run(*aws, "s3", "cp", "s3://local-test/hello.txt", "-", env=env).stdout
        assert got == "hello from cairn-local\n", got

        # over tcp:// the nodes run with auth = curve: cairn-admin gets in
        # with the keys that `env` exports, and not without them
        env_out = run(LOCAL, "env", *common).stdout
        for line in env_out.splitlines():
            if line.startswith("export "):
                k, v = line[len("export "):].split("=", 1)
                env[k] = v
        nodes = ",".join("tcp://127.0.0.1:%d" % (base + i) for i in (1, 2, 3))
        admin = run(os.path.join(BIN, "cairn-admin"), "--nodes", nodes, "status", env=env)
        assert admin.stdout.count(" up ") == 3, admin.stdout
        assert env["CAIRN_STORAGE_AUTH"] == "curve", env_out
        assert os.stat(os.path.join(d, "keys", "node.key")).st_mode & 0o077 == 0
        plain = run(os.path.join(BIN, "cairn-admin"), "--nodes", nodes, "--auth", "none",
                    "--timeout", "500", "ping", check=False)
        assert plain.returncode == 1 and plain.stdout.count(" down ") == 3, plain.stdout
    finally:
        run(LOCAL, "down", *common, check=False)
    print("ok: cairn-local up (ipc://, no keys)/status/env/down and restart over tcp:// with curve")


if __name__ == "__main__":
    main()
