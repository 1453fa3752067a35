#!/usr/bin/env python3
"""Per-key restrictions (`cairn-admin key allow|deny`, docs/security.md
"Restricted keys") through the one access decision: two accounts A and B
kept in the cluster, a key of A restricted to bucket ab1 read-only, and an
anonymous client.

- the restricted key reads ab1 and nothing else: writes, deletes, bucket
  configuration, multipart, copies in and out, other buckets and
  CreateBucket are 403 AccessDenied (S3's XML error document);
- its account's rights are the ceiling: a key of B listed with every right
  on A's bucket gets only what A's grant to B gives (read), never write;
- a restricted key with --create-bucket may create a bucket, and has on it
  what its list says (nothing until it is listed);
- the spellings an attacker would try to reach ab2 or write ab1 (case,
  percent-encoding, trailing and doubled slashes, dot segments,
  virtual-host addressing) never succeed and change nothing.

S3 error document: https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html"""
import http.client
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from secutil import Cluster, check, error_code  # noqa: E402
from keyutil import admin_ok, code_of, master_key_file, settings, succeeds, wait_until  # noqa: E402

MASTER = master_key_file()
DENIED = ("AccessDenied", 403)


def key(c, name, account):
    k = admin_ok(c, MASTER, "key", "create", name, "--account", account)
    return k["access_key_id"], k["secret_access_key"]


def signed_raw(c, creds, method, path, host=None, body=b""):
    """A request signed by creds with SigV4, sent with exactly this path
    (and Host): (status, body)."""
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    host = host or "127.0.0.1:%d" % c.port
    req = AWSRequest(method=method, url="http://%s%s" % (host, path), data=body,
                     headers={"Host": host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
    S3SigV4Auth(Credentials(*creds), "s3", "us-east-1").add_auth(req)
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in req.headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def main():
    from botocore import UNSIGNED
    with Cluster(settings=settings(MASTER)) as c:
        a_id = admin_ok(c, MASTER, "account", "create", "acct-a")["id"]
        b_id = admin_ok(c, MASTER, "account", "create", "acct-b")["id"]
        ka, kr, kb, kbr = (key(c, "a-full", "acct-a"), key(c, "a-ro", "acct-a"),
                           key(c, "b-full", "acct-b"), key(c, "b-limited", "acct-b"))
        sa, sr, sb, sbr = (c.boto(*k, signature_version="s3v4") for k in (ka, kr, kb, kbr))
        anon = c.boto(signature_version=UNSIGNED)
        for s3 in (sa, sr, sb, sbr):
            wait_until("a new key works", lambda: succeeds(s3.list_buckets))
        for b in ("ab1", "ab2"):
            sa.create_bucket(Bucket=b)
            sa.put_object(Bucket=b, Key="k", Body=b"secret of " + b.encode())
        admin_ok(c, MASTER, "key", "allow", kr[0], "--bucket", "ab1", "--read")
        wait_until("the restriction applies",   # probed without writing anything
                   lambda: code_of(sr.list_objects_v2, Bucket="ab2") == "AccessDenied")

        # reads of ab1: allowed
        check(sr.get_object(Bucket="ab1", Key="k")["Body"].read() == b"secret of ab1", "GET ab1")
        check(sr.head_object(Bucket="ab1", Key="k")["ContentLength"] == 13, "HEAD ab1")
        check([o["Key"] for o in sr.list_objects_v2(Bucket="ab1")["Contents"]] == ["k"],
              "list ab1")
        check(sr.get_bucket_location(Bucket="ab1")["LocationConstraint"] in (None, "us-east-1"),
              "location of ab1")
        # everything else: AccessDenied with S3's error document
        refused = [
            ("PUT ab1", sr.put_object, dict(Bucket="ab1", Key="new", Body=b"x")),
            ("DELETE ab1", sr.delete_object, dict(Bucket="ab1", Key="k")),
            ("multi-delete ab1", sr.delete_objects,
             dict(Bucket="ab1", Delete={"Objects": [{"Key": "k"}]})),
            ("multipart ab1", sr.create_multipart_upload, dict(Bucket="ab1", Key="mp")),
            ("GET ab2", sr.get_object, dict(Bucket="ab2", Key="k")),
            ("HEAD ab2", sr.head_object, dict(Bucket="ab2", Key="k")),
            ("list ab2", sr.list_objects_v2, dict(Bucket="ab2")),
            ("PUT ab2", sr.put_object, dict(Bucket="ab2", Key="new", Body=b"x")),
            ("policy ab1", sr.put_bucket_policy,
             dict(Bucket="ab1", Policy='{"Statement": [{"Effect": "Allow", "Principal": "*", '
                                      '"Action": "s3:GetObject", '
                                      '"Resource": "arn:aws:s3:::ab1/*"}]}')),
            ("ACL ab1", sr.put_bucket_acl, dict(Bucket="ab1", ACL="public-read")),
            ("get ACL ab1", sr.get_bucket_acl, dict(Bucket="ab1")),
            ("object ACL ab1", sr.put_object_acl, dict(Bucket="ab1", Key="k", ACL="public-read")),
            ("delete ab1", sr.delete_bucket, dict(Bucket="ab1")),
            ("create bucket", sr.create_bucket, dict(Bucket="r-new")),
            ("copy ab1 -> ab2", sr.copy_object,
             dict(Bucket="ab2", Key="copied", CopySource={"Bucket": "ab1", "Key": "k"})),
            ("copy ab2 -> ab1", sr.copy_object,
             dict(Bucket="ab1", Key="copied", CopySource={"Bucket": "ab2", "Key": "k"})),
        ]
        for what, fn, kw in refused:
            got = error_code(fn, **kw)
            if what.startswith("HEAD"):
                check(got[1] == 403, "%s: %r" % (what, got))
            else:
                check(got == DENIED, "%s: %r" % (what, got))
        status, body = signed_raw(c, kr, "PUT", "/ab1/raw", body=b"x")
        check(status == 403 and b"<Code>AccessDenied</Code>" in body and
              body.startswith(b"<?xml"), "the XML error document: %r" % body[:300])
        # the unrestricted key of A still does all of it (nothing else changed)
        sa.put_object(Bucket="ab1", Key="by-a", Body=b"a")
        check(sa.get_object(Bucket="ab2", Key="k")["Body"].read() == b"secret of ab2", "A on ab2")

        attacks(c, kr, sa)

        # the account is the ceiling: B's key listed with every right on ab1
        # gets only the READ that A's grant gives B
        sa.put_bucket_acl(Bucket="ab1", GrantRead="id=%s" % b_id, GrantFullControl="id=%s" % a_id)
        admin_ok(c, MASTER, "key", "allow", kbr[0], "--bucket", "ab1", "--read", "--write",
                 "--owner")
        wait_until("B's limited key lists ab1 (grant)",
                   lambda: succeeds(sbr.list_objects_v2, Bucket="ab1"))
        check(error_code(sbr.put_object, Bucket="ab1", Key="b", Body=b"") == DENIED,
              "B's key writes ab1 with a read grant")
        check(error_code(sbr.put_bucket_acl, Bucket="ab1", ACL="public-read") == DENIED,
              "B's key changes ab1's ACL")
        check(error_code(sbr.list_objects_v2, Bucket="ab2") == DENIED, "B's key on ab2")
        # B's unrestricted key reads ab1 through the grant; anonymous reads nothing
        check(succeeds(sb.list_objects_v2, Bucket="ab1"), "B's full key lists ab1")
        check(error_code(anon.list_objects_v2, Bucket="ab1") == DENIED, "anonymous lists ab1")
        check(error_code(anon.get_object, Bucket="ab1", Key="k") == DENIED, "anonymous reads")
        # the grant does not reach the restricted key of A beyond its list
        check(error_code(sr.put_object, Bucket="ab1", Key="z", Body=b"") == DENIED,
              "A's reader after the grant")

        # --create-bucket: the key creates, then has what its list says
        admin_ok(c, MASTER, "key", "allow", kr[0], "--create-bucket")
        wait_until("the reader may create buckets",
                   lambda: succeeds(sr.create_bucket, Bucket="r-made"))
        check(sa.get_bucket_acl(Bucket="r-made")["Owner"]["ID"] == a_id, "A owns r-made")
        check(error_code(sr.put_object, Bucket="r-made", Key="k", Body=b"") == DENIED,
              "writes into its new bucket before it is listed")
        admin_ok(c, MASTER, "key", "allow", kr[0], "--bucket", "r-made", "--write")
        wait_until("listed: it writes",
                   lambda: succeeds(sr.put_object, Bucket="r-made", Key="k", Body=b"k"))
        admin_ok(c, MASTER, "key", "deny", kr[0], "--create-bucket")
        wait_until("the flag is gone", lambda: code_of(sr.create_bucket, Bucket="r-more") ==
                   "AccessDenied")
        # usage the tool refuses (and changes nothing)
        for args in (("--bucket", "AB1", "--read"), ("--bucket", "ab1"), ()):
            rc = run_admin_rc(c, "key", "allow", kr[0], *args)
            check(rc == 2, "key allow %r: %d" % (args, rc))
        check(c.proc.poll() is None, "the gateway runs")
    print("all passed")


def run_admin_rc(c, *args):
    from keyutil import admin
    return admin(c, MASTER, *args)[0]


def attacks(c, kr, sa):
    """Spellings that might make ab2 (or a write to ab1) look like a read of
    ab1: none succeeds and nothing changes."""
    host = "127.0.0.1:%d" % c.port
    reads_a2 = [
        ("GET", "/AB2/k", None), ("GET", "/ab2/k/", None), ("GET", "//ab2/k", None),
        ("GET", "/%61%62%32/k", None), ("GET", "/ab1/../ab2/k", None), ("GET", "/ab1/%2E%2E/ab2/k", None),
        ("GET", "/ab1%2F..%2Fab2/k", None), ("GET", "/ab2%2Fk", None), ("GET", "/ab2./k", None),
        ("GET", "/k", "ab2.s3.localhost:%d" % c.port), ("GET", "/k", "AB2.S3.LOCALHOST:%d" % c.port),
        ("GET", "/ab2/k", "ab1.s3.localhost:%d" % c.port),
        ("GET", "/ab2/k", "ab2.s3.localhost:%d" % c.port),
        ("GET", "/?list-type=2", "ab2.s3.localhost:%d" % c.port),
    ]
    seen = {}
    for method, path, h in reads_a2:
        status, body = signed_raw(c, kr, method, path, host=h or host)
        seen.setdefault(status, []).append("%s %s%s" % (method, path, " @" + h if h else ""))
        check(not (200 <= status < 300), "%s %s (Host %s) succeeded: %d %r" %
              (method, path, h, status, body[:200]))
        check(b"secret of ab2" not in body, "%s %s leaked ab2's object" % (method, path))
    writes_a1 = [
        ("PUT", "/ab1/w1", None), ("PUT", "/AB1/w2", None), ("PUT", "/ab1/w3/", None),
        ("PUT", "/%61%62%31/w4", None), ("PUT", "//ab1/w5", None), ("PUT", "/w6", "ab1.s3.localhost:%d"
                                                                % c.port),
        ("DELETE", "/ab1/k", None), ("DELETE", "/AB1/k", None), ("DELETE", "/k", "ab1.s3.localhost:%d"
                                                                      % c.port),
    ]
    for method, path, h in writes_a1:
        status, body = signed_raw(c, kr, method, path, host=h or host, body=b"evil")
        seen.setdefault(status, []).append("%s %s%s" % (method, path, " @" + h if h else ""))
        check(not (200 <= status < 300), "%s %s (Host %s) succeeded: %d %r" %
              (method, path, h, status, body[:200]))
    for status, which in sorted(seen.items()):
        print("attack spellings answered %d: %s" % (status, ", ".join(which)))
    names = sorted(o["Key"] for o in sa.list_objects_v2(Bucket="ab1")["Contents"])
    check(names == ["by-a", "k"], "ab1 unchanged: %r" % names)
    check(sa.get_object(Bucket="ab1", Key="k")["Body"].read() == b"secret of ab1", "ab1/k intact")
    check(sorted(o["Key"] for o in sa.list_objects_v2(Bucket="ab2")["Contents"]) == ["k"],
          "ab2 unchanged")


if __name__ == "__main__":
    main()
