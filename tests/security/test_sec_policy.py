#!/usr/bin/env python3
"""Bucket policies through the one access decision (gateway/s3/access.c,
gateway/s3/policy.c): what a policy allows another account and an anonymous
client, that an explicit Deny wins (over ACL grants and the owner), the
aws:SourceIp and s3:prefix conditions, MalformedPolicy for what is not
understood, GetBucketPolicyStatus, and the public access block's
BlockPublicPolicy / RestrictPublicBuckets. Keys are tried in the spellings
an attacker would use against a policy that allows a prefix.

S3 behaviour followed:
https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucket-policies.html
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketPolicyStatus.html"""
import http.client
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from secutil import accounts, check, error_code, run_tests  # noqa: E402

A_ID, B_ID = "cairn-dev", "other"
DENIED = ("AccessDenied", 403)
TTL_S = 1.0


def raw(c, method, path, headers=None, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def eventually(fn, what, bound=TTL_S + 2.0):
    """fn() must become true within the cache bound: a change may be
    served from another worker's cached config until s3.bucket_owner_ttl
    has passed (docs/security.md). An exception counts as not yet."""
    from botocore.exceptions import ClientError
    deadline = time.monotonic() + bound
    while True:
        try:
            if fn():
                return
        except ClientError:
            pass
        if time.monotonic() > deadline:
            check(False, what)
        time.sleep(0.1)


def denied(fn, *a, **kw):
    """Is the call refused with 403 AccessDenied (False when it succeeds)?"""
    try:
        return error_code(fn, *a, **kw) == DENIED
    except AssertionError:
        return False


def policy(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def stmt(effect, principal, action, resource, condition=None):
    s = {"Effect": effect, "Principal": principal, "Action": action, "Resource": resource}
    if condition is not None:
        s["Condition"] = condition
    return s


def test_prefix_policy(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="pol")
    for k in ("a/x", "a/y", "b/x", "ab", "A/x", "a/../b/x"):
        a.put_object(Bucket="pol", Key=k, Body=k.encode())
    a.put_bucket_policy(Bucket="pol", Policy=policy(
        stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol/a/*")))
    check(json.loads(a.get_bucket_policy(Bucket="pol")["Policy"])["Statement"][0]["Resource"] ==
          "arn:aws:s3:::pol/a/*", "stored as given")
    check(a.get_bucket_policy_status(Bucket="pol")["PolicyStatus"]["IsPublic"], "public")
    for who, cl in (("B", b), ("anonymous", anon)):
        check(cl.get_object(Bucket="pol", Key="a/x")["Body"].read() == b"a/x", "%s a/x" % who)
        for k in ("b/x", "ab", "A/x"):
            check(denied(cl.get_object, Bucket="pol", Key=k), "%s %s" % (who, k))
        check(denied(cl.put_object, Bucket="pol", Key="a/new", Body=b"x"), "%s put" % who)
        check(denied(cl.list_objects_v2, Bucket="pol"), "%s list" % who)
        check(denied(cl.get_bucket_policy, Bucket="pol"), "%s read policy" % who)
        check(denied(cl.put_bucket_policy, Bucket="pol", Policy=policy(
            stmt("Allow", "*", "s3:*", "arn:aws:s3:::pol/*"))), "%s write policy" % who)
        check(denied(cl.delete_bucket_policy, Bucket="pol"), "%s delete policy" % who)
    # the key is the decoded path, matched as one string: a/../b/x is its own
    # key (allowed by a/*, and it holds its own bytes), never b/x
    for path, want in (("/pol/a/x", (200, b"a/x")), ("/pol/a%2Fx", (200, b"a/x")),
                       ("/pol/%61/x", (200, b"a/x")), ("/pol/a/../b/x", (200, b"a/../b/x")),
                       ("/pol/a%2F..%2Fb%2Fx", (200, b"a/../b/x")),
                       ("/pol/a/%2e%2e/b/x", (200, b"a/../b/x"))):
        check(raw(c, "GET", path) == want, "anon %s" % path)
    for path in ("/pol/b/x", "/pol/b%2Fx", "/pol/./b/x", "/pol//a/x", "/pol/a", "/pol/A/x",
                 "/pol/a/nope", "/pol?list-type=2&prefix=a/", "/pol/b/x?x-id=GetObject"):
        st, body = raw(c, "GET", path)
        check(st == 403 and b"<Code>AccessDenied</Code>" in body, "anon %s: %d" % (path, st))
    # header name case does not turn a request into another one
    st, _ = raw(c, "GET", "/pol/b/x", {"X-AMZ-COPY-SOURCE": "pol/a/x"})
    check(st == 403, "copy-source header on GET %d" % st)
    # and the policy goes away
    a.delete_bucket_policy(Bucket="pol")
    check(error_code(a.get_bucket_policy, Bucket="pol") == ("NoSuchBucketPolicy", 404), "gone")
    eventually(lambda: denied(anon.get_object, Bucket="pol", Key="a/x"), "no policy, no access")


def test_accounts_and_deny(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="pol-acct")
    a.put_object(Bucket="pol-acct", Key="k", Body=b"k")
    a.put_object(Bucket="pol-acct", Key="secret/s", Body=b"s", GrantRead='id="%s"' % B_ID)
    a.put_bucket_policy(Bucket="pol-acct", Policy=policy(
        stmt("Allow", {"AWS": ["arn:aws:iam::%s:root" % B_ID]},
             ["s3:GetObject", "s3:PutObject", "s3:ListBucket"],
             ["arn:aws:s3:::pol-acct", "arn:aws:s3:::pol-acct/*"]),
        stmt("Deny", {"AWS": B_ID}, "s3:*", "arn:aws:s3:::pol-acct/secret/*")))
    check(not a.get_bucket_policy_status(Bucket="pol-acct")["PolicyStatus"]["IsPublic"],
          "not public")
    check(b.get_object(Bucket="pol-acct", Key="k")["Body"].read() == b"k", "B reads")
    b.put_object(Bucket="pol-acct", Key="from-b", Body=b"b")
    check(len(b.list_objects_v2(Bucket="pol-acct")["Contents"]) == 3, "B lists")
    check(denied(b.delete_object, Bucket="pol-acct", Key="k"), "B may not delete")
    # the explicit Deny wins over B's ACL grant and over the Allow
    check(denied(b.get_object, Bucket="pol-acct", Key="secret/s"), "deny beats the grant")
    check(denied(b.put_object, Bucket="pol-acct", Key="secret/t", Body=b"x"), "deny put")
    r = b.delete_objects(Bucket="pol-acct", Delete={"Objects": [{"Key": "k"}]})
    check([e["Code"] for e in r.get("Errors", [])] == ["AccessDenied"], "per-key delete %r" % r)
    check(a.get_object(Bucket="pol-acct", Key="k")["Body"].read() == b"k", "k kept")
    for who, fn in (("anon get", lambda: anon.get_object(Bucket="pol-acct", Key="k")),
                    ("anon list", lambda: anon.list_objects_v2(Bucket="pol-acct"))):
        check(error_code(fn) == DENIED, who)
    # a Deny binds the owner too, but never locks it out of its policy
    a.put_bucket_policy(Bucket="pol-acct", Policy=policy(
        stmt("Deny", "*", "s3:*", ["arn:aws:s3:::pol-acct", "arn:aws:s3:::pol-acct/*"])))
    eventually(lambda: denied(a.get_object, Bucket="pol-acct", Key="k"), "owner denied")
    a.get_bucket_policy(Bucket="pol-acct")
    a.delete_bucket_policy(Bucket="pol-acct")
    check(a.get_object(Bucket="pol-acct", Key="k")["Body"].read() == b"k", "owner back")


def test_conditions(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="pol-cond")
    a.put_object(Bucket="pol-cond", Key="pub/1", Body=b"1")
    a.put_object(Bucket="pol-cond", Key="priv/1", Body=b"2")
    a.put_bucket_policy(Bucket="pol-cond", Policy=policy(
        stmt("Allow", "*", "s3:ListBucket", "arn:aws:s3:::pol-cond",
             {"StringLike": {"s3:prefix": "pub/*"}}),
        stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol-cond/*",
             {"IpAddress": {"aws:SourceIp": ["127.0.0.0/8"]}}),
        stmt("Allow", "*", "s3:PutObject", "arn:aws:s3:::pol-cond/*",
             {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})))
    r = anon.list_objects_v2(Bucket="pol-cond", Prefix="pub/")
    check([o["Key"] for o in r["Contents"]] == ["pub/1"], "listing under the prefix")
    check(denied(anon.list_objects_v2, Bucket="pol-cond"), "listing without prefix")
    check(denied(anon.list_objects_v2, Bucket="pol-cond", Prefix="priv/"), "other prefix")
    st, _ = raw(c, "GET", "/pol-cond?list-type=2&prefix=pub%2F")
    check(st == 200, "encoded prefix %d" % st)
    # a second prefix parameter: the condition and the listing read the same
    # one, so nothing outside pub/ is listed
    st, body = raw(c, "GET", "/pol-cond?list-type=2&prefix=pub/&prefix=priv/")
    check(st in (400, 403) or (st == 200 and b"priv/" not in body.replace(
        b"<Prefix>pub/</Prefix>", b"")), "two prefixes %d %r" % (st, body[:300]))
    st, body = raw(c, "GET", "/pol-cond?list-type=2&prefix=priv/&prefix=pub/")
    check(st == 403 or (st == 200 and b"<Key>priv/1</Key>" not in body and
                        b"<Key>pub/1</Key>" not in body), "two prefixes, other order %d" % st)
    check(anon.get_object(Bucket="pol-cond", Key="priv/1")["Body"].read() == b"2",
          "from 127.0.0.1")
    check(denied(anon.put_object, Bucket="pol-cond", Key="x", Body=b"x"), "not from 10/8")
    # a NotIpAddress Deny for everyone outside 10/8: the loopback client is out
    a.put_bucket_policy(Bucket="pol-cond", Policy=policy(
        stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol-cond/*"),
        stmt("Deny", "*", "s3:GetObject", "arn:aws:s3:::pol-cond/priv/*",
             {"NotIpAddress": {"aws:SourceIp": "10.0.0.0/8"}})))
    eventually(lambda: denied(anon.get_object, Bucket="pol-cond", Key="priv/1"), "NotIpAddress")
    check(anon.get_object(Bucket="pol-cond", Key="pub/1")["Body"].read() == b"1", "pub still")
    # "deny what does not come over TLS": this client speaks plain HTTP
    a.put_bucket_policy(Bucket="pol-cond", Policy=policy(
        stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol-cond/*"),
        stmt("Deny", "*", "s3:*", "arn:aws:s3:::pol-cond/*",
             {"Bool": {"aws:SecureTransport": "false"}})))
    eventually(lambda: denied(anon.get_object, Bucket="pol-cond", Key="pub/1"), "plain HTTP")
    check(denied(a.get_object, Bucket="pol-cond", Key="pub/1"), "the owner too")


def test_malformed(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="pol-bad")
    bad = [
        ("not json", "{"),
        ("not an object", "[]"),
        ("no statement", json.dumps({"Version": "2012-10-17"})),
        ("bad version", json.dumps({"Version": "2020-01-01", "Statement": []})),
        ("bad effect", policy(stmt("Maybe", "*", "s3:GetObject", "arn:aws:s3:::pol-bad/*"))),
        ("other bucket", policy(stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol/*"))),
        ("bucket prefix", policy(stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol-badx/*"))),
        ("bad action", policy(stmt("Allow", "*", "ec2:RunInstances", "arn:aws:s3:::pol-bad/*"))),
        ("bad principal", policy(stmt("Allow", {"AWS": "arn:aws:iam::1:user/x"}, "s3:GetObject",
                                      "arn:aws:s3:::pol-bad/*"))),
        ("NotPrincipal *", json.dumps({"Statement": [{
            "Effect": "Deny", "NotPrincipal": "*", "Action": "s3:*",
            "Resource": "arn:aws:s3:::pol-bad/*"}]})),
        ("Principal and NotPrincipal", json.dumps({"Statement": [{
            "Effect": "Deny", "Principal": "*", "NotPrincipal": {"AWS": A_ID}, "Action": "s3:*",
            "Resource": "arn:aws:s3:::pol-bad/*"}]})),
        ("unknown condition", policy(stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol-bad/*",
                                          {"DateGreaterThan": {"aws:CurrentTime": "2020"}}))),
        ("unknown Bool key", policy(stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol-bad/*",
                                         {"Bool": {"aws:MultiFactorAuthPresent": "true"}}))),
        ("bad cidr", policy(stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol-bad/*",
                                 {"IpAddress": {"aws:SourceIp": "300.1.1.1/8"}}))),
        ("duplicate key", '{"Statement": [], "Statement": []}'),
        ("too large", policy(*[stmt("Allow", "*", "s3:GetObject",
                                    "arn:aws:s3:::pol-bad/%0200d" % i) for i in range(120)])),
    ]
    for what, text in bad:
        check(error_code(a.put_bucket_policy, Bucket="pol-bad", Policy=text) ==
              ("MalformedPolicy", 400), what)
    check(error_code(a.get_bucket_policy, Bucket="pol-bad") == ("NoSuchBucketPolicy", 404),
          "nothing stored")
    check(error_code(a.get_bucket_policy_status, Bucket="pol-bad") ==
          ("NoSuchBucketPolicy", 404), "no status without a policy")


def test_public_access_block(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="pol-pab")
    a.put_object(Bucket="pol-pab", Key="k", Body=b"k")
    pub = policy(stmt("Allow", {"AWS": "*"}, "s3:GetObject", "arn:aws:s3:::pol-pab/*"))
    cfg = {"BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": True,
           "RestrictPublicBuckets": False}
    a.put_public_access_block(Bucket="pol-pab", PublicAccessBlockConfiguration=cfg)
    check(denied(a.put_bucket_policy, Bucket="pol-pab", Policy=pub), "BlockPublicPolicy")
    # a policy for one account is not public: allowed
    a.put_bucket_policy(Bucket="pol-pab", Policy=policy(
        stmt("Allow", {"AWS": B_ID}, "s3:GetObject", "arn:aws:s3:::pol-pab/*")))
    check(b.get_object(Bucket="pol-pab", Key="k")["Body"].read() == b"k", "B by policy")
    cfg["BlockPublicPolicy"] = False
    cfg["RestrictPublicBuckets"] = True
    a.put_public_access_block(Bucket="pol-pab", PublicAccessBlockConfiguration=cfg)
    a.put_bucket_policy(Bucket="pol-pab", Policy=pub)
    eventually(lambda: denied(anon.get_object, Bucket="pol-pab", Key="k"),
               "RestrictPublicBuckets")
    eventually(lambda: denied(b.get_object, Bucket="pol-pab", Key="k"), "restricted for B too")
    a.delete_public_access_block(Bucket="pol-pab")
    # a change that grants more is in force at once on every worker: a
    # refusal is never taken from a cached config (also one the object's
    # ACL made, after the router let the request on)
    check(anon.get_object(Bucket="pol-pab", Key="k")["Body"].read() == b"k",
          "public once unblocked")


def test_not_principal(c):
    """NotPrincipal: the statement applies to every caller the list does not
    name, the anonymous one included (IAM User Guide, "AWS JSON policy
    elements: NotPrincipal":
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_notprincipal.html)."""
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="pol-notp")
    a.put_object(Bucket="pol-notp", Key="k", Body=b"k", ACL="public-read")
    check(anon.get_object(Bucket="pol-notp", Key="k")["Body"].read() == b"k", "public first")
    a.put_bucket_policy(Bucket="pol-notp", Policy=json.dumps({"Statement": [
        stmt("Allow", {"AWS": "arn:aws:iam::%s:root" % B_ID}, "s3:GetObject",
             "arn:aws:s3:::pol-notp/*"),
        {"Effect": "Deny", "NotPrincipal": {"AWS": [A_ID, "arn:aws:iam::%s:root" % B_ID]},
         "Action": "s3:GetObject", "Resource": "arn:aws:s3:::pol-notp/*"}]}))
    check("NotPrincipal" in a.get_bucket_policy(Bucket="pol-notp")["Policy"], "stored")
    eventually(lambda: denied(anon.get_object, Bucket="pol-notp", Key="k"),
               "anonymous is not named: denied over the public ACL")
    eventually(lambda: raw(c, "GET", "/pol-notp/k")[0] == 403, "plain HTTP too")
    check(b.get_object(Bucket="pol-notp", Key="k")["Body"].read() == b"k", "B is named")
    check(a.get_object(Bucket="pol-notp", Key="k")["Body"].read() == b"k", "A is named")
    # naming only B: the owner is denied too (the Deny binds it), B is not
    a.put_bucket_policy(Bucket="pol-notp", Policy=json.dumps({"Statement": [
        stmt("Allow", {"AWS": B_ID}, "s3:GetObject", "arn:aws:s3:::pol-notp/*"),
        {"Effect": "Deny", "NotPrincipal": {"AWS": B_ID}, "Action": "s3:GetObject",
         "Resource": "arn:aws:s3:::pol-notp/*"}]}))
    eventually(lambda: denied(a.get_object, Bucket="pol-notp", Key="k"), "owner not named")
    check(b.get_object(Bucket="pol-notp", Key="k")["Body"].read() == b"k", "B still reads")
    eventually(lambda: denied(anon.get_object, Bucket="pol-notp", Key="k"), "anonymous denied")
    # an Allow to everyone but B is public (and so refused by BlockPublicPolicy)
    a.put_bucket_policy(Bucket="pol-notp", Policy=json.dumps({"Statement": [
        {"Effect": "Allow", "NotPrincipal": {"AWS": B_ID}, "Action": "s3:GetObject",
         "Resource": "arn:aws:s3:::pol-notp/*"}]}))
    check(a.get_bucket_policy_status(Bucket="pol-notp")["PolicyStatus"]["IsPublic"], "public")
    a.delete_bucket_policy(Bucket="pol-notp")


def test_grant_seen_at_once(c):
    a = accounts(c)[0]
    a.create_bucket(Bucket="pol-now")
    a.put_object(Bucket="pol-now", Key="k", Body=b"k")
    pub = policy(stmt("Allow", "*", "s3:GetObject", "arn:aws:s3:::pol-now/*"))
    for i in range(10):
        a.put_public_access_block(Bucket="pol-now", PublicAccessBlockConfiguration={
            "BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": False,
            "RestrictPublicBuckets": True})
        a.put_bucket_policy(Bucket="pol-now", Policy=pub)
        for _ in range(4):   # new connections: both worker threads cache the config
            denied(accounts(c)[2].get_object, Bucket="pol-now", Key="k")
        a.delete_public_access_block(Bucket="pol-now")
        r = accounts(c)[2].get_object(Bucket="pol-now", Key="k")
        check(r["Body"].read() == b"k", "round %d" % i)
        a.delete_bucket_policy(Bucket="pol-now")


if __name__ == "__main__":
    run_tests([test_prefix_policy, test_accounts_and_deny, test_conditions, test_malformed,
               test_public_access_block, test_not_principal, test_grant_seen_at_once],
              cluster_kw={"settings": {"s3.bucket_owner_ttl": "1s"}})
