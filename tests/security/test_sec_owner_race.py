#!/usr/bin/env python3
"""The owner cache race: gateway G1 has learnt that A owns bucket 'race';
through gateway G2, A deletes it and B re-creates it and writes into it.
Within s3.bucket_owner_ttl (set to an hour here, so the cache is surely
stale), A must not write into, delete from, list, read or copy from B's
bucket through G1, must not finish an upload it began before into it, and
B must be served on its own bucket through G1. The anonymous client is
refused throughout, also when G1 learnt the old bucket as public (a public
ACL or policy) and the re-created one is private."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from secutil import accounts, check, error_code, Cluster  # noqa: E402

DENIED = ("AccessDenied", 403)
TTL = {"s3.bucket_owner_ttl": "3600s", "http.threads": 1}


class SecondGateway(Cluster):
    """Another cairn-gateway over the nodes of an existing cluster."""

    def __init__(self, first):
        self.bin = first.bin
        self.tmp = first.tmp + "-g2"
        os.makedirs(self.tmp)
        self.nodes = []
        self.proc = None
        self.settings = dict(first.settings)
        self.prefix = []
        self.start()


def refused(who, fn, expect=DENIED, **kw):
    got = error_code(fn, **kw)
    check(got == expect, "%s %s%r: %r, want %r" % (who, fn.__name__, kw, got, expect))


def stale(n, a1, a2, b2, upload=False):
    """Bucket race<n>: owned by A as G1 last learnt it (while a part of an
    upload of A's sits in it when upload), then deleted by A and re-created
    by B with objects 'secret' and 'old', all through G2. Returns the upload
    id or None."""
    bk = "race%d" % n
    a1.create_bucket(Bucket=bk)
    a1.put_object(Bucket=bk, Key="old", Body=b"a's")
    up = None
    if upload:
        up = a1.create_multipart_upload(Bucket=bk, Key="late")["UploadId"]
        a1.upload_part(Bucket=bk, Key="late", UploadId=up, PartNumber=1, Body=b"p" * 100)
    a1.get_object(Bucket=bk, Key="old")       # G1 has learnt: A owns it
    a2.delete_object(Bucket=bk, Key="old")
    a2.delete_bucket(Bucket=bk)
    time.sleep(0.002)
    b2.create_bucket(Bucket=bk)
    b2.put_object(Bucket=bk, Key="secret", Body=b"b's secret")
    b2.put_object(Bucket=bk, Key="old", Body=b"b's old")
    return up


def main():
    with Cluster(nodes=1, settings=TTL) as g1:
        g2 = SecondGateway(g1)
        try:
            a1, b1, anon1 = accounts(g1)
            a2, b2, _ = accounts(g2)
            a1.create_bucket(Bucket="amine")
            a1.put_object(Bucket="amine", Key="src", Body=b"a's source")
            # each attempt meets a cache of its own that is surely stale
            # (a refused attempt refreshes it)
            attempts = [
                ("put", lambda bk: a1.put_object(Bucket=bk, Key="planted", Body=b"x")),
                ("overwrite", lambda bk: a1.put_object(Bucket=bk, Key="old", Body=b"x")),
                ("delete", lambda bk: a1.delete_object(Bucket=bk, Key="secret")),
                ("multidelete", lambda bk: a1.delete_objects(
                    Bucket=bk, Delete={"Objects": [{"Key": "old"}]})),
                ("list v2", lambda bk: a1.list_objects_v2(Bucket=bk)),
                ("list v1", lambda bk: a1.list_objects(Bucket=bk)),
                ("list uploads", lambda bk: a1.list_multipart_uploads(Bucket=bk)),
                ("create upload", lambda bk: a1.create_multipart_upload(Bucket=bk, Key="m")),
                ("copy into", lambda bk: a1.copy_object(Bucket=bk, Key="c",
                                                        CopySource="amine/src")),
                ("delete bucket", lambda bk: a1.delete_bucket(Bucket=bk)),
                ("get", lambda bk: a1.get_object(Bucket=bk, Key="secret")),
                ("get old name", lambda bk: a1.get_object(Bucket=bk, Key="old")),
                ("ranged get", lambda bk: a1.get_object(Bucket=bk, Key="secret",
                                                         Range="bytes=0-3")),
                ("copy out", lambda bk: a1.copy_object(Bucket="amine", Key="stolen",
                                                       CopySource="%s/secret" % bk)),
            ]
            n = 0
            for name, fn in attempts:
                n += 1
                stale(n, a1, a2, b2)
                got = error_code(fn, "race%d" % n)
                check(got == DENIED, "A %s through the stale gateway: %r" % (name, got))
            n += 1
            stale(n, a1, a2, b2)
            got = error_code(a1.head_object, Bucket="race%d" % n, Key="secret")
            check(got == ("403", 403), "A head: %r" % (got,))
            n += 1
            stale(n, a1, a2, b2)
            got = error_code(a1.upload_part_copy, Bucket="amine", Key="u", PartNumber=1,
                             UploadId=a1.create_multipart_upload(Bucket="amine",
                                                                 Key="u")["UploadId"],
                             CopySource="race%d/secret" % n)
            check(got == DENIED, "A part copy out: %r" % (got,))
            check("Contents" not in a1.list_objects_v2(Bucket="amine", Prefix="stolen"),
                  "nothing copied out of B's bucket")
            print("ok   A's %d writes, deletes, listings, reads and copies through the "
                  "stale gateway refused" % (n,))
            n += 1
            up = stale(n, a1, a2, b2, upload=True)
            got = error_code(a1.complete_multipart_upload, Bucket="race%d" % n, Key="late",
                             UploadId=up,
                             MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"x"'}]})
            check(got == DENIED, "A completes its old upload in B's bucket: %r" % (got,))
            got = error_code(b2.complete_multipart_upload, Bucket="race%d" % n, Key="late",
                             UploadId=up,
                             MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"x"'}]})
            check(got == DENIED, "B completes A's upload: %r" % (got,))
            print("ok   an upload A began before cannot land in B's bucket")
            n += 1
            stale(n, a1, a2, b2)
            bk = "race%d" % n
            for what, fn, kw in (("get", anon1.get_object, {"Key": "secret"}),
                                 ("put", anon1.put_object, {"Key": "x", "Body": b"x"})):
                got = error_code(fn, Bucket=bk, **kw)
                check(got == DENIED, "anonymous %s: %r" % (what, got))
            # B is served on its own bucket through G1 while G1's cache says A
            check(b1.get_object(Bucket=bk, Key="secret")["Body"].read() == b"b's secret",
                  "B reads its object through G1")
            b1.put_object(Bucket=bk, Key="fromg1", Body=b"b")
            keys = sorted(x["Key"] for x in b1.list_objects_v2(Bucket=bk)["Contents"])
            check(keys == ["fromg1", "old", "secret"], "B's keys: %r" % keys)
            for i in range(1, n + 1):
                got = b2.get_object(Bucket="race%d" % i, Key="old")["Body"].read()
                check(got == b"b's old", "B's race%d/old: %r" % (i, got))
            print("ok   B served on its own bucket through G1; B's data untouched")
            # G1 caches A's bucket as public (an ACL, then a policy); B's
            # re-created bucket of the same name is private: the anonymous
            # client must not read or list it through G1's stale config
            for kind in ("acl", "policy"):
                n += 1
                bk = "race%d" % n
                a1.create_bucket(Bucket=bk, ACL="public-read" if kind == "acl" else "private")
                if kind == "policy":
                    a1.put_bucket_policy(Bucket=bk, Policy=(
                        '{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": '
                        '["s3:GetObject", "s3:ListBucket"], "Resource": ["arn:aws:s3:::%s", '
                        '"arn:aws:s3:::%s/*"]}]}' % (bk, bk)))
                a1.put_object(Bucket=bk, Key="pub", Body=b"a's", ACL="public-read")
                check(anon1.get_object(Bucket=bk, Key="pub")["Body"].read() == b"a's",
                      "G1 learnt the public %s" % kind)
                anon1.list_objects_v2(Bucket=bk)
                a2.delete_object(Bucket=bk, Key="pub")
                a2.delete_bucket(Bucket=bk)
                time.sleep(0.002)
                b2.create_bucket(Bucket=bk)
                b2.put_object(Bucket=bk, Key="pub", Body=b"b's private")
                for what, fn, kw in (("get", anon1.get_object, {"Key": "pub"}),
                                     ("list", anon1.list_objects_v2, {})):
                    got = error_code(fn, Bucket=bk, **kw)
                    check(got == DENIED, "anonymous %s after a public %s: %r" % (what, kind, got))
            print("ok   a bucket G1 learnt as public does not make its re-creation public")
        finally:
            g2.close()
    print("all 4 passed")


if __name__ == "__main__":
    main()
