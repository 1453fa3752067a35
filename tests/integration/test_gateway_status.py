#!/usr/bin/env python3
"""GET /_cairn/status and `cairn-admin status`: the gateway's view (version,
readiness, ring, nodes up/down since when, hint queues, settings that differ
from their defaults) is served only to a request signed by an admin key
(admin=true in the credentials file): another account, an anonymous client,
a forged signature, other methods and other spellings of the path never see
it. A stopped node shows as down with its hints. `cairn-admin status
--gateway` prints it with the nodes' summary; --json on status, stats, ping,
lifecycle status, repair and keygen prints one JSON document."""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_util import cluster  # noqa: E402
from s3util import ACCESS_KEY, REGION, SECRET_KEY, check  # noqa: E402
from snclient import admin_env  # noqa: E402

BIN = os.environ.get("CAIRN_BIN", "build/bin")
ADMIN_KEY = "AKIAADMINKEY00000000"
ADMIN_SECRET = "admin-secret-key-00000000000000000000000"
OTHER_KEY = "AKIAOTHERUSER0000000"
OTHER_SECRET = "other-secret-key-0000000000000000000000"


def signed(c, path, key=ADMIN_KEY, secret=ADMIN_SECRET, method="GET", host=None):
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    url = c.url + path
    req = AWSRequest(method=method, url=url, headers={"Host": host} if host else {})
    S3SigV4Auth(Credentials(key, secret), "s3", REGION).add_auth(req)
    return fetch(urllib.request.Request(url, headers=dict(req.headers), method=method))


def fetch(req):
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def status_doc(c):
    st, body = signed(c, "/_cairn/status")
    check(st == 200, "admin status %d %r" % (st, body[:300]))
    return json.loads(body)


def test_admin_sees_status(c):
    doc = status_doc(c)
    ver = subprocess.run([os.path.join(BIN, "cairn-gateway"), "--version"],
                         capture_output=True, timeout=30).stdout.decode().split()[-1]
    check(doc["version"] == ver, "version %r vs %r" % (doc["version"], ver))
    check(doc["ready"] is True and doc["ready_reason"] == "ok", "ready %r" % doc)
    check(doc["ring"]["nodes"] == 3 and doc["ring"]["vnodes"] == 168, "ring %r" % doc["ring"])
    check((doc["ring"]["replicas"], doc["ring"]["write"], doc["ring"]["read"]) == (3, 2, 2),
          "quorums %r" % doc["ring"])
    check(len(doc["ring"]["digest"]) == 8, "digest")
    addrs = [n.endpoint for n in c.nodes]
    check([n["address"] for n in doc["nodes"]] == addrs, "nodes %r" % doc["nodes"])
    for n in doc["nodes"]:
        check(n["up"] is True and n["hints"]["pending"] == 0, "node %r" % n)
    s = doc["settings"]
    check(s.get("s3.domain") == "s3.localhost", "a changed setting is listed: %r" % s)
    check(s.get("storage.request_timeout") == "1000", "request timeout %r" % s)
    check("http.keepalive_timeout" not in s and "ring.vnodes" not in s,
          "settings at their default are not listed")
    for v in s.values():
        check(ADMIN_SECRET not in v and SECRET_KEY not in v, "a secret in the settings")


def test_refusals(c):
    """Only an admin key's signed GET sees the document."""
    def no_doc(st, body, what, want=None):
        check(b'"ring"' not in body and b'"settings"' not in body, "%s leaked: %r" % (what, body))
        check(st != 200, "%s answered 200" % what)
        if want is not None:
            check(st == want, "%s: %d %r" % (what, st, body[:200]))
    no_doc(*signed(c, "/_cairn/status", OTHER_KEY, OTHER_SECRET), "another account", 403)
    no_doc(*signed(c, "/_cairn/status", ACCESS_KEY, SECRET_KEY), "the dev account", 403)
    no_doc(*fetch(urllib.request.Request(c.url + "/_cairn/status")), "anonymous", 403)
    no_doc(*signed(c, "/_cairn/status", ADMIN_KEY, "x" * 40), "forged signature", 403)
    no_doc(*signed(c, "/_cairn/status", ADMIN_KEY + "X", ADMIN_SECRET), "unknown key", 403)
    for m in ("PUT", "POST", "DELETE"):
        no_doc(*signed(c, "/_cairn/status", method=m), m, 405)
    # other spellings are S3 paths (an invalid bucket name), never the status
    for path in ("/_cairn/status/", "/_cairn/%73tatus", "/_cairn/STATUS", "//_cairn/status",
                 "/_cairn/status%00", "/_cairn/./status", "/_CAIRN/status"):
        no_doc(*signed(c, path), "admin at %s" % path)
    no_doc(*signed(c, "/status", host="_cairn.s3.localhost"), "virtual host _cairn")
    # presigned: the admin's works, another account's does not
    import boto3
    from botocore.config import Config
    for key, secret, ok in ((ADMIN_KEY, ADMIN_SECRET, True), (OTHER_KEY, OTHER_SECRET, False)):
        s3 = boto3.client("s3", endpoint_url=c.url, aws_access_key_id=key,
                          aws_secret_access_key=secret, region_name=REGION,
                          config=Config(signature_version="s3v4",
                                        s3={"addressing_style": "path"}))
        url = s3.generate_presigned_url("get_object", Params={"Bucket": "_cairn",
                                                              "Key": "status"}, ExpiresIn=60)
        st, body = fetch(urllib.request.Request(url))
        if ok:
            check(st == 200 and json.loads(body)["ring"]["nodes"] == 3, "presigned admin %d" % st)
        else:
            no_doc(st, body, "presigned by another account", 403)


def admin(*args, env=None, cluster_file=None):
    cmd = [os.path.join(BIN, "cairn-admin")] + list(args)
    e = admin_env(env)
    for k in ("CAIRN_ADMIN_ACCESS_KEY", "CAIRN_ADMIN_SECRET_KEY", "AWS_ACCESS_KEY_ID",
              "AWS_SECRET_ACCESS_KEY", "CAIRN_GATEWAYS", "CAIRN_CLUSTER_FILE",
              "CAIRN_STORAGE_NODES"):
        if env is None or k not in env:
            e.pop(k, None)
    p = subprocess.run(cmd, capture_output=True, timeout=120, env=e)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_cairn_admin_status(c):
    nodes = ",".join(n.endpoint for n in c.nodes)
    env = dict(os.environ, CAIRN_ADMIN_ACCESS_KEY=ADMIN_KEY, CAIRN_ADMIN_SECRET_KEY=ADMIN_SECRET)
    rc, out, err = admin("--nodes", nodes, "--gateway", c.url, "--json", "status", env=env)
    check(rc == 0, "status --json rc %d: %s %s" % (rc, out, err))
    doc = json.loads(out)
    check(doc["command"] == "status", "command")
    g = doc["gateways"]
    check(len(g) == 1 and g[0]["url"] == c.url and g[0]["http_status"] == 200, "gw %r" % g)
    check(g[0]["status"]["ring"]["nodes"] == 3, "gateway document embedded")
    check([n["address"] for n in doc["nodes"]] == nodes.split(","), "nodes %r" % doc["nodes"])
    for n in doc["nodes"]:
        check(n["ok"] and n["up"] and "records" in n["stats"] and 0 < n["ring_share"] < 1,
              "node summary %r" % n)
    # text: the gateway's document under its header, then a line per node
    rc, out, err = admin("--nodes", nodes, "--gateway", c.url, "status", env=env)
    check(rc == 0 and out.startswith("gateway %s\n{" % c.url), "text status: %s %s" % (out, err))
    check(sum(1 for line in out.splitlines() if " up   node=" in line) == 3, "node lines")
    # gateways only, key from the environment of the S3 tools
    env2 = dict(os.environ, AWS_ACCESS_KEY_ID=ADMIN_KEY, AWS_SECRET_ACCESS_KEY=ADMIN_SECRET,
                CAIRN_GATEWAYS=c.url)
    rc, out, err = admin("--json", "status", env=env2)
    check(rc == 0 and json.loads(out)["nodes"] == [], "gateways only: %d %s %s" % (rc, out, err))
    # a key that is not an admin's: refused, exit 1, still valid JSON
    env3 = dict(os.environ, CAIRN_ADMIN_ACCESS_KEY=OTHER_KEY, CAIRN_ADMIN_SECRET_KEY=OTHER_SECRET)
    rc, out, err = admin("--gateway", c.url, "--json", "status", env=env3)
    doc = json.loads(out)
    check(rc == 1 and doc["gateways"][0]["http_status"] == 403 and
          "AccessDenied" in doc["gateways"][0]["error"], "non-admin: %d %s" % (rc, out))
    rc, out, err = admin("--gateway", c.url, "status", env={})
    check(rc == 2 and "admin key" in err, "no key: %d %s" % (rc, err))
    rc, out, err = admin("--gateway", "https://x", "--json", "status", env=env)
    check(rc == 1 and "only http://" in json.loads(out)["gateways"][0]["error"], "https: " + out)


def test_cairn_admin_json_everywhere(c):
    nodes = ",".join(n.endpoint for n in c.nodes)
    for cmd in ("stats", "ping"):
        rc, out, err = admin("--nodes", nodes, "--json", cmd)
        doc = json.loads(out)
        check(rc == 0 and doc["command"] == cmd and len(doc["nodes"]) == 3 and
              all(n["ok"] for n in doc["nodes"]), "%s --json: %s %s" % (cmd, out, err))
    rc, out, err = admin("--nodes", nodes, "--json", "lifecycle", "status")
    doc = json.loads(out)
    check(rc == 0 and doc["command"] == "lifecycle status" and doc["answered"] == 3 and
          doc["down"] == [] and (doc["record"] is None or isinstance(doc["record"], dict)),
          "lifecycle status --json: %s %s" % (out, err))
    rc, out, err = admin("--nodes", nodes, "--json", "--dry-run", "repair")
    doc = json.loads(out)
    check(doc["command"] == "repair" and doc["dry_run"] is True and doc["error"] is None and
          doc["keys"] >= 0, "repair --json: %s %s" % (out, err))
    with tempfile.TemporaryDirectory() as d:
        rc, out, err = admin("--json", "keygen", os.path.join(d, "k"))
        doc = json.loads(out)
        with open(os.path.join(d, "k.pub")) as f:
            check(doc["public_key"] in f.read(), "keygen --json public key")
        check(rc == 0 and doc["secret_key_file"] == os.path.join(d, "k.key"), "keygen " + out)
        rc, out, err = admin("keygen", os.path.join(d, "k2"))
        check(rc == 0 and len(out.strip()) == 40, "keygen text prints the public key: " + out)
    # a node that does not answer: ok false, exit 1
    rc, out, err = admin("--nodes", nodes + ",tcp://127.0.0.1:1", "--timeout", "300", "--json",
                         "ping")
    doc = json.loads(out)
    check(rc == 1 and doc["nodes"][3]["ok"] is False and doc["nodes"][3]["error"],
          "down node: %s" % out)


def test_node_down(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="statusb")
    c.nodes[2].freeze()
    try:
        for i in range(8):
            s3.put_object(Bucket="statusb", Key="k%d" % i, Body=b"x")
        deadline = time.monotonic() + 20
        while True:
            doc = status_doc(c)
            n = [x for x in doc["nodes"] if x["address"] == c.nodes[2].endpoint][0]
            if not n["up"] and n["hints"]["pending"] > 0:
                break
            check(time.monotonic() < deadline, "the frozen node is not shown down: %r" % n)
            time.sleep(0.2)
        check(n["marked_down"] >= 1, "transition counted")
        since = time.strptime(n["since"], "%Y-%m-%dT%H:%M:%S.%fZ")
        check(abs(time.mktime(since) - time.mktime(time.gmtime())) < 120, "since %r" % n["since"])
    finally:
        c.nodes[2].thaw()
    deadline = time.monotonic() + 30
    while True:
        n = [x for x in status_doc(c)["nodes"] if x["address"] == c.nodes[2].endpoint][0]
        # taken hints leave "pending" before their replay ends: wait for both
        if n["up"] and n["hints"]["pending"] == 0 and n["hints"]["replayed"] > 0:
            break
        check(time.monotonic() < deadline, "the node did not come back: %r" % n)
        time.sleep(0.2)
    check(n["marked_up"] >= 1 and n["hints"]["replayed"] > 0, "back up, hints replayed %r" % n)


def main():
    with cluster(3) as c:
        with open(c.creds, "a") as f:
            f.write("%s %s ops Operations admin=true\n" % (ADMIN_KEY, ADMIN_SECRET))
        c.proc.terminate()
        c.proc.wait(30)
        c.start()
        tests = [test_admin_sees_status, test_refusals, test_cairn_admin_status,
                 test_cairn_admin_json_everywhere, test_node_down]
        for t in tests:
            t0 = time.monotonic()
            t(c)
            print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
    print("all %d passed" % len(tests))


if __name__ == "__main__":
    main()
