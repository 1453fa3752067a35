#!/usr/bin/env python3
"""Accounts kept in the cluster and the operator's bucket commands
(docs/operations.md "Accounts", "Restricting a key", "Buckets"), on three
real nodes and two gateways with one master key:

- `cairn-admin account create` prints a canonical id (64 hex digits), a
  second account of the same name is refused, `account list` shows both;
- keys bound with `key create --account` act as their account: the
  buckets they create are the account's (the owner id of GetBucketAcl), a
  grant to account B lets every key of B read, an anonymous client and
  the other account are refused;
- a restriction added or removed with `key allow|deny` reaches the second
  gateway within the documented bound (s3.keys_refresh +
  storage.request_timeout), polled;
- `bucket list|info|create|delete` with --json; deleting a non-empty
  bucket and an account that owns buckets or keys is refused; `account
  delete --force` deletes the account's keys (refused on both gateways
  within the bound) and leaves its buckets, named in the output.

S3 behaviour followed: grants name canonical user ids
(https://docs.aws.amazon.com/AmazonS3/latest/userguide/acl-overview.html#specifying-grantee)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import Cluster, check  # noqa: E402
from keyutil import (BOUND_S, OtherGateway, admin, admin_ok, code_of,  # noqa: E402
                     master_key_file, settings, succeeds, wait_until)

MASTER = master_key_file()


def new_key(c, name, account):
    k = admin_ok(c, MASTER, "key", "create", name, "--account", account)
    return k["access_key_id"], k["secret_access_key"]


def test_all():
    with Cluster(settings=settings(MASTER)) as c:
        g2 = OtherGateway(c, "gw2")
        try:
            run(c, g2)
        finally:
            g2.close()
    print("all passed")


def run(c, g2):
    from botocore import UNSIGNED
    # accounts: a canonical id each, names unique
    a = admin_ok(c, MASTER, "account", "create", "team-a")
    b = admin_ok(c, MASTER, "account", "create", "team-b")
    a_id, b_id = a["id"], b["id"]
    for i in (a_id, b_id):
        check(len(i) == 64 and all(ch in "0123456789abcdef" for ch in i), "id %r" % i)
    check(a_id != b_id, "two ids")
    rc, out, err = admin(c, MASTER, "account", "create", "team-a")
    check(rc == 1 and "exists" in err, "a second team-a: %d %s" % (rc, err))
    rc, out, err = admin(c, MASTER, "account", "create", "bad name")
    check(rc == 2, "a name with a space: %d %s" % (rc, err))
    listed = admin_ok(c, MASTER, "account", "list")["accounts"]
    check(sorted((x["name"], x["id"], x["state"]) for x in listed) ==
          [("team-a", a_id, "active"), ("team-b", b_id, "active")], "listed %r" % listed)

    # keys of the accounts, by name and by id
    ka = new_key(c, "a-admin", "team-a")
    kb1 = new_key(c, "b-one", b_id)
    kb2 = new_key(c, "b-two", "team-b")
    keys = admin_ok(c, MASTER, "key", "list")["keys"]
    owners = {k["access_key_id"]: k["account"] for k in keys}
    check(owners == {ka[0]: a_id, kb1[0]: b_id, kb2[0]: b_id}, "owners %r" % owners)
    sa, sb1, sb2 = (c.boto(*k, signature_version="s3v4") for k in (ka, kb1, kb2))
    anon = c.boto(signature_version=UNSIGNED)
    for s3 in (sa, sb1, sb2):
        wait_until("a new key works", lambda: succeeds(s3.list_buckets))

    # A's key creates buckets: they are the account's
    sa.create_bucket(Bucket="team-a-one")
    sa.create_bucket(Bucket="team-a-two")
    sa.put_object(Bucket="team-a-one", Key="doc", Body=b"a's document")
    acl = sa.get_bucket_acl(Bucket="team-a-one")
    check(acl["Owner"]["ID"] == a_id, "owner %r" % acl["Owner"])
    check(code_of(sb1.list_objects_v2, Bucket="team-a-one") == "AccessDenied", "B lists A's")
    check(code_of(anon.list_objects_v2, Bucket="team-a-one") == "AccessDenied", "anon lists")
    check(code_of(anon.get_object, Bucket="team-a-one", Key="doc") == "AccessDenied",
          "anon reads")

    # a grant to account B: every key of B may read, none may write
    sa.put_bucket_acl(Bucket="team-a-one", GrantRead="id=%s" % b_id,
                      GrantFullControl="id=%s" % a_id)
    sa.put_object_acl(Bucket="team-a-one", Key="doc", GrantRead="id=%s" % b_id,
                      GrantFullControl="id=%s" % a_id)
    for s3 in (sb1, sb2):
        wait_until("B's key lists A's bucket through the grant",
                   lambda: succeeds(s3.list_objects_v2, Bucket="team-a-one"))
        check(s3.get_object(Bucket="team-a-one", Key="doc")["Body"].read() == b"a's document",
              "B's key reads the granted object")
        check(code_of(s3.put_object, Bucket="team-a-one", Key="x", Body=b"") == "AccessDenied",
              "B writes with a read grant")
        check(code_of(s3.list_objects_v2, Bucket="team-a-two") == "AccessDenied",
              "B lists the bucket without a grant")

    # a restriction follows to the second gateway within the bound
    kr = new_key(c, "a-reader", "team-a")
    r1 = c.boto(*kr, signature_version="s3v4")
    r2 = g2.boto(*kr)
    wait_until("the reader works on gateway 2",
               lambda: succeeds(r2.put_object, Bucket="team-a-two", Key="w", Body=b"w"))
    admin_ok(c, MASTER, "key", "allow", kr[0], "--bucket", "team-a-one", "--read")
    took = wait_until("gateway 2 applies the allow list",
                      lambda: code_of(r2.put_object, Bucket="team-a-two", Key="w2",
                                      Body=b"") == "AccessDenied")
    print("restriction applied by gateway 2 after %.2f s (bound %.1f s)" % (took, BOUND_S))
    check(r2.get_object(Bucket="team-a-one", Key="doc")["Body"].read() == b"a's document",
          "the listed bucket reads")
    check(code_of(r1.put_object, Bucket="team-a-one", Key="w3", Body=b"") == "AccessDenied",
          "gateway 1 too")
    admin_ok(c, MASTER, "key", "allow", kr[0], "--bucket", "team-a-two", "--write")
    took = wait_until("gateway 2 applies the new allow",
                      lambda: succeeds(r2.put_object, Bucket="team-a-two", Key="w4", Body=b"4"))
    print("allow applied by gateway 2 after %.2f s" % took)
    admin_ok(c, MASTER, "key", "deny", kr[0], "--bucket", "team-a-one")
    took = wait_until("gateway 2 applies the deny",
                      lambda: code_of(r2.get_object, Bucket="team-a-one",
                                      Key="doc") == "AccessDenied")
    print("deny applied by gateway 2 after %.2f s" % took)
    listed = {k["access_key_id"]: k for k in admin_ok(c, MASTER, "key", "list")["keys"]}
    check(listed[kr[0]]["restricted"] is True and
          [(x["bucket"], x["read"], x["write"], x["owner"]) for x in listed[kr[0]]["allow"]] ==
          [("team-a-two", False, True, False)], "key list shows %r" % listed[kr[0]])
    check(listed[ka[0]]["restricted"] is False, "the admin key is not restricted")

    # the operator's bucket commands
    buckets = admin_ok(c, MASTER, "bucket", "list")["buckets"]
    check(sorted((x["name"], x["owner"], x["account"]) for x in buckets) ==
          [("team-a-one", a_id, "team-a"), ("team-a-two", a_id, "team-a")], "%r" % buckets)
    info = admin_ok(c, MASTER, "bucket", "info", "team-a-one")
    check(info["owner"] == a_id and info["account"] == "team-a" and info["acl"] is True and
          info["policy"] is False and info["versioning"] is None and info["objects"] == 1,
          "info %r" % info)
    sa.put_bucket_versioning(Bucket="team-a-two", VersioningConfiguration={"Status": "Enabled"})
    sa.put_bucket_policy(Bucket="team-a-two", Policy='{"Statement": [{"Effect": "Deny", '
                         '"Principal": "*", "Action": "s3:DeleteObject", '
                         '"Resource": "arn:aws:s3:::team-a-two/locked/*"}]}')
    info = admin_ok(c, MASTER, "bucket", "info", "team-a-two")
    check(info["versioning"] == "Enabled" and info["policy"] is True, "info %r" % info)
    rc, out, err = admin(c, MASTER, "bucket", "info", "no-such-bucket")
    check(rc == 1 and "no bucket" in err, "info of a missing bucket: %d %s" % (rc, err))
    made = admin_ok(c, MASTER, "bucket", "create", "ops-made", "--account", "team-b")
    check(made["owner"] == b_id, "made %r" % made)
    rc, out, err = admin(c, MASTER, "bucket", "create", "ops-made", "--account", "team-a")
    check(rc == 1 and "exists" in err, "create twice: %d %s" % (rc, err))
    rc, out, err = admin(c, MASTER, "bucket", "create", "Ops-Upper", "--account", "team-a")
    check(rc == 2, "an upper-case name: %d %s" % (rc, err))
    wait_until("B's key uses the operator's bucket",
               lambda: succeeds(sb1.put_object, Bucket="ops-made", Key="k", Body=b"k"))
    check(code_of(sa.list_objects_v2, Bucket="ops-made") == "AccessDenied", "A lists B's")
    rc, out, err = admin(c, MASTER, "bucket", "delete", "ops-made")
    check(rc == 1 and "not empty" in err, "delete a non-empty bucket: %d %s" % (rc, err))
    sb1.delete_object(Bucket="ops-made", Key="k")
    check(admin_ok(c, MASTER, "bucket", "delete", "ops-made")["deleted"] is True, "deleted")
    wait_until("the deleted bucket is gone",
               lambda: code_of(sb1.head_bucket, Bucket="ops-made") in ("404", "NoSuchBucket"))

    # an account that owns buckets or keys is not deleted
    rc, out, err = admin(c, MASTER, "account", "delete", "team-a")
    check(rc == 1 and "owns 2 buckets and 2 keys" in err and "team-a-one" in err,
          "delete team-a: %d %s" % (rc, err))
    rc, out, err = admin(c, MASTER, "account", "delete", "team-b")
    check(rc == 1 and "owns 0 buckets and 2 keys" in err, "delete team-b: %d %s" % (rc, err))
    check(succeeds(sb1.list_buckets), "B's key still works after the refusal")
    # --force: B's keys go (both gateways refuse them within the bound), then the account
    gone = admin_ok(c, MASTER, "account", "delete", "team-b", "--force")
    check(gone["deleted"] is True and gone["keys_deleted"] == 2 and gone["buckets_left"] == [],
          "forced %r" % gone)
    sb2_g2 = g2.boto(*kb2)
    for s3 in (sb1, sb2_g2):
        took = wait_until("a deleted account's key is refused",
                          lambda: code_of(s3.list_buckets) == "InvalidAccessKeyId")
        print("key of the deleted account refused after %.2f s" % took)
    listed = admin_ok(c, MASTER, "account", "list")["accounts"]
    check([x["name"] for x in listed] == ["team-a"], "after delete %r" % listed)
    rc, out, err = admin(c, MASTER, "key", "create", "late", "--account", "team-b")
    check(rc == 1 and "no account" in err, "a key for a deleted account: %d %s" % (rc, err))
    check(c.proc.poll() is None and g2.proc.poll() is None, "both gateways run")
    time.sleep(0)


if __name__ == "__main__":
    test_all()
