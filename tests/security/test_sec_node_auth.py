"""Storage nodes accept only the cluster's own processes (docs/security.md,
node authentication): a node with auth = curve answers no DEALER without a
CURVE key, with a wrong server key, or with a client key that is not on its
allow-list, and stops answering a key removed from the list once SIGHUP has
reloaded it, on a connection opened before too, while it keeps serving the
gateway. The gateway (boto3 PUT/GET) and cairn-admin work with their keys.
The daemons refuse to start on a bad or group-readable key file."""
import os
import signal
import subprocess
import time

import zmq

from secutil import Cluster, check
import snclient
from snclient import Client, KeyPair

BIN = os.environ.get("CAIRN_BIN", "build/bin")
REFUSED_MS = 1500  # a refused peer gets no reply: how long we wait to say so


def answers(node, curve, client=None):
    """True when a PING with these keys is answered (client: reuse an open
    connection)."""
    c = client or Client(node.endpoint, timeout_ms=REFUSED_MS, curve=curve)
    try:
        return c.call("PING").st == 0
    except TimeoutError:
        return False
    finally:
        if client is None:
            c.close()


def wait_log(node, text, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if node.log_text().count(text) > 0:
            return
        time.sleep(0.05)
    raise AssertionError("%r not in the node's log:\n%s" % (text, node.log_text()[-3000:]))


def reload_allowed(node, keys, count):
    """Rewrites the node's allow-list, sends SIGHUP, waits for the reload."""
    with open(node.allowed_path, "w") as f:
        f.write("# rewritten by the test\n")
        for k in keys:
            f.write(k.decode() + "\n")
    marker = "reload: %d client keys allowed" % count
    before = node.log_text().count(marker)
    node.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while node.log_text().count(marker) == before:
        check(time.monotonic() < deadline, "no reload logged:\n" + node.log_text()[-3000:])
        time.sleep(0.05)


def test_refusals_and_revocation(c, tmp):
    keys = snclient.test_keys()
    node = c.nodes[0]
    harness = keys.client_curve()
    check(answers(node, harness), "the harness's allowed key is served")
    check(not answers(node, None), "a plain DEALER (no CURVE) is refused")
    wrong_server = zmq.curve_keypair()[0]
    check(not answers(node, (wrong_server, keys.client.public, keys.client.secret)),
          "a client with the wrong server key gets nothing")
    rogue = KeyPair(os.path.join(tmp, "rogue"))
    check(not answers(node, (keys.node.public, rogue.public, rogue.secret)),
          "a key that is not on the allow-list is refused")
    wait_log(node, "not on the allow-list")

    # an operator key is added, used, then revoked
    op = KeyPair(os.path.join(tmp, "operator"))
    op_curve = (keys.node.public, op.public, op.secret)
    reload_allowed(node, [keys.client.public, op.public], 2)
    held = Client(node.endpoint, timeout_ms=REFUSED_MS, curve=op_curve)
    try:
        check(answers(node, op_curve, held), "an added key is served after SIGHUP")
        reload_allowed(node, [keys.client.public], 1)
        check(not answers(node, op_curve, held),
              "a revoked key gets no answer on the connection it already had")
        check(not answers(node, op_curve), "a revoked key cannot connect again")
    finally:
        held.close()
    check(answers(node, harness), "the allowed key is still served")

    # the gateway kept its connection and its key: S3 still works
    s3 = c.boto()
    s3.create_bucket(Bucket="auth-after")
    s3.put_object(Bucket="auth-after", Key="k", Body=b"still served")
    check(s3.get_object(Bucket="auth-after", Key="k")["Body"].read() == b"still served",
          "gateway GET after the revocation")

    # a list that does not load keeps the old one in force
    with open(node.allowed_path, "w") as f:
        f.write("not a key\n")
    node.proc.send_signal(signal.SIGHUP)
    wait_log(node, "keeping the old allow-list")
    check(answers(node, harness), "a bad allow-list does not lock everyone out")


def test_gateway_and_admin(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="auth")
    body = os.urandom(100000)
    s3.put_object(Bucket="auth", Key="obj", Body=body)
    check(s3.get_object(Bucket="auth", Key="obj")["Body"].read() == body, "boto3 GET")
    check("storage auth curve" in c.log_text(), "the gateway says it uses curve")
    admin = os.path.join(BIN, "cairn-admin")
    nodes = ",".join(n.endpoint for n in c.nodes)
    p = subprocess.run([admin, "--nodes", nodes, "ping"], env=snclient.admin_env(),
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and " ok " in p.stdout, "cairn-admin ping with its keys: %s%s"
          % (p.stdout, p.stderr))
    p = subprocess.run([admin, "--nodes", nodes, "--auth", "none", "--timeout", "500", "ping"],
                       env=snclient.admin_env(), capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "down" in p.stdout, "cairn-admin without keys: " + p.stdout)


def start_fails(argv, want, env=None):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    out = p.stdout + p.stderr
    check(p.returncode != 0 and want in out, "%s: want exit != 0 with %r, got %d:\n%s"
          % (" ".join(argv[-4:]), want, p.returncode, out))


def test_bad_key_files(tmp):
    keys = snclient.test_keys()
    node = [os.path.join(BIN, "cairn-storage"), "--set", "listen=tcp://127.0.0.1:%d"
            % snclient.free_port(), "--set", "data_dir=" + os.path.join(tmp, "data"),
            "--set", "auth=curve"]
    allowed = os.path.join(tmp, "allowed")
    with open(allowed, "w") as f:
        f.write(keys.client.public.decode() + "\n")
    open_key = os.path.join(tmp, "open.key")
    snclient.write_key(open_key, keys.node.secret, True)
    os.chmod(open_key, 0o644)
    short = os.path.join(tmp, "short.key")
    snclient.write_key(short, keys.node.secret[:39], True)
    start_fails(node + ["--set", "security.curve_allowed_clients_file=" + allowed],
                "needs security.curve_secret_key_file")
    for key, want in ((open_key, "chmod 600"), (short, "not a CURVE key"),
                      (os.path.join(tmp, "missing.key"), "No such file")):
        start_fails(node + ["--set", "security.curve_secret_key_file=" + key, "--set",
                            "security.curve_allowed_clients_file=" + allowed], want)
    start_fails(node + ["--set", "security.curve_secret_key_file=" + keys.node.key_file,
                        "--set", "security.curve_allowed_clients_file=" + tmp + "/nope"],
                "No such file")
    creds = os.path.join(tmp, "creds")
    with open(creds, "w") as f:
        f.write("AKIACAIRNDEV00000000 secret-secret cairn-dev cairn\n")
    gw = [os.path.join(BIN, "cairn-gateway"), "--set", "http.port=0", "--set",
          "http.listen=127.0.0.1", "--set", "s3.credentials_file=" + creds, "--set",
          "storage.auth=curve", "--set", "storage.curve_server_key_file=" + keys.node.pub_file]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_STORAGE")}
    start_fails(gw + ["--set", "storage.curve_secret_key_file=" + open_key], "chmod 600", env)
    start_fails(gw, "needs a secret key file", env)


def main():
    check(snclient.AUTH == "curve", "run with the harness's default CAIRN_TEST_AUTH=curve")
    import tempfile
    tmp = tempfile.mkdtemp(prefix="cairn-sec-auth-")
    try:
        test_bad_key_files(tmp)
        print("ok   bad_key_files", flush=True)
        with Cluster(nodes=1) as c:
            test_gateway_and_admin(c)
            print("ok   gateway_and_admin", flush=True)
            test_refusals_and_revocation(c, tmp)
            print("ok   refusals_and_revocation", flush=True)
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    print("all passed")


if __name__ == "__main__":
    main()
