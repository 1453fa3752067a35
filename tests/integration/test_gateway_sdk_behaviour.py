"""Behaviours S3 SDKs and tools rely on, each checked with boto3 (and the
aws cli where it matters) against real cairn-storage nodes and gateways:
Expect: 100-continue on reused connections, conditional writes atomic
across two gateways, CompleteMultipartUpload
retried after success, racing UploadParts, CreateBucket of an owned bucket,
listing parameters, Content-Encoding with aws-chunked, copy sources. Each
test names the S3 behaviour and cites the AWS page it follows."""
import concurrent.futures
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import Cluster, check, error_code, REGION  # noqa: E402
from snclient import free_port  # noqa: E402

OTHER_KEY = "AKIAOTHERUSER0000000"
OTHER_SECRET = "other-secret-key-0000000000000000000000"


class SecondGateway:
    """Another cairn-gateway process over the same nodes (its own port and
    config), as a second host of a deployment would run."""

    def __init__(self, c, name="gateway2", settings=None):
        self.c = c
        self.settings = dict(c.settings)
        self.settings.update(settings or {})
        self.region = self.settings.get("s3.region", REGION)
        self.port = free_port()
        self.settings["http.port"] = self.port
        cfg = os.path.join(c.tmp, name + ".conf")
        with open(cfg, "w") as f:
            for k, v in self.settings.items():
                f.write("%s = %s\n" % (k, v))
        self.log = open(os.path.join(c.tmp, name + ".log"), "ab")
        self.proc = subprocess.Popen([c.bin, "--config", cfg], stdout=self.log, stderr=self.log)
        import socket
        deadline = time.monotonic() + 30
        while True:
            check(self.proc.poll() is None, "second gateway exited")
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                s.sendall(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                ok = s.recv(100).startswith(b"HTTP/1.1 200")
                s.close()
                if ok:
                    break
            except OSError:
                pass
            check(time.monotonic() < deadline, "second gateway did not come up")
            time.sleep(0.05)

    def boto(self, headers=None, **kw):
        return client(self.port, headers=headers, region=self.region, **kw)

    def aws(self, *args, check_rc=True):
        """The aws cli against this gateway, in its region."""
        env = self.c.env()
        env["AWS_DEFAULT_REGION"] = self.region
        cmd = ["/usr/bin/aws", "--endpoint-url", "http://127.0.0.1:%d" % self.port] + list(args)
        p = subprocess.run(cmd, env=env, capture_output=True, timeout=120)
        if check_rc and p.returncode != 0:
            raise AssertionError("%s failed %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
        return p

    def close(self):
        """Stops the gateway; under the sanitizers a non-zero exit (a leak or
        an error found at exit) fails the test, as s3util.Cluster does."""
        self.proc.terminate()
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        if os.environ.get("CAIRN_SANITIZE") and rc != 0:
            with open(self.log.name, "rb") as f:
                raise AssertionError("%s exited %r under the sanitizers:\n%s" % (
                    self.log.name, rc, f.read()[-20000:].decode(errors="replace")))


def client(port, access_key=None, secret_key=None, headers=None, region=REGION):
    """A boto3 client of its own session (one per thread: clients are not
    shared across threads here) that adds headers to every request: this
    Debian botocore (1.29) predates the IfNoneMatch / IfMatch parameters, so
    the headers go in the way s3-tests adds them (a before-call hook)."""
    import boto3
    from botocore.config import Config
    from s3util import ACCESS_KEY, SECRET_KEY
    s = boto3.session.Session()
    s3 = s.client("s3", endpoint_url="http://127.0.0.1:%d" % port,
                  aws_access_key_id=access_key or ACCESS_KEY,
                  aws_secret_access_key=secret_key or SECRET_KEY, region_name=region,
                  config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    if headers:
        def add(params, **_):
            params["headers"].update(headers)
        s3.meta.events.register("before-call.s3.*", add)
    return s3


def put_status(s3, **kw):
    """(HTTP status, error code) of a put_object."""
    from botocore.exceptions import ClientError
    try:
        r = s3.put_object(**kw)
        return (r["ResponseMetadata"]["HTTPStatusCode"], r["ETag"])
    except ClientError as e:
        return (e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"])


# S3 behaviour: PutObject with If-None-Match: * creates the object only if the
# key does not exist; of concurrent conditional writers exactly one succeeds,
# the others get 412 PreconditionFailed (or 409 ConditionalRequestConflict for
# a conflicting concurrent operation, after which the client retries).
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html (If-None-Match)
def test_conditional_put_race_two_gateways(c, g2):
    s3a, s3b = c.boto(), g2.boto()
    s3a.create_bucket(Bucket="cond")
    for rnd in range(3):
        key = "lock-%d" % rnd
        n = 16
        start = threading.Barrier(n)

        def writer(i):
            port = c.port if i % 2 == 0 else g2.port
            s3 = client(port, headers={"If-None-Match": "*"})
            start.wait()
            for _ in range(20):   # 409: retry, as AWS tells clients to
                st = put_status(s3, Bucket="cond", Key=key, Body=b"writer-%d" % i)
                if st[0] != 409:
                    return i, st
            return i, st

        with concurrent.futures.ThreadPoolExecutor(n) as ex:
            results = list(ex.map(writer, range(n)))
        wins = [(i, st) for i, st in results if st[0] == 200]
        check(len(wins) == 1, "exactly one 200 of %d racing If-None-Match PUTs: %r" %
              (n, results))
        others = {st for i, st in results if st[0] != 200}
        check(others <= {(412, "PreconditionFailed")}, "the losers get 412: %r" % results)
        winner = wins[0][0]
        body = s3a.get_object(Bucket="cond", Key=key)["Body"].read()
        check(body == b"writer-%d" % winner, "the stored object is the winner's: %r" % body)
        check(s3b.get_object(Bucket="cond", Key=key)["ETag"] == wins[0][1][1],
              "both gateways read the winner's ETag")


# S3 behaviour: PutObject with If-Match: ETAG replaces the object only if its
# ETag still matches (compare-and-swap); of racing writers holding the same
# ETag exactly one succeeds; If-Match on a missing key is 404 NoSuchKey.
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
def test_conditional_put_if_match_race(c, g2):
    s3a, s3b = c.boto(), g2.boto()
    s3a.create_bucket(Bucket="condm")
    etag = s3a.put_object(Bucket="condm", Key="cas", Body=b"v0")["ETag"]
    check(error_code(client(c.port, headers={"If-Match": etag}).put_object, Bucket="condm",
                     Key="cas-missing", Body=b"x") == ("NoSuchKey", 404),
          "If-Match on a missing key")
    check(error_code(client(c.port, headers={"If-Match": '"0123456789abcdef0123456789abcdef"'})
                     .put_object, Bucket="condm", Key="cas", Body=b"x") ==
          ("PreconditionFailed", 412), "If-Match with another ETag")
    n = 12
    start = threading.Barrier(n)

    def writer(i):
        port = c.port if i % 2 == 0 else g2.port
        s3 = client(port, headers={"If-Match": etag})
        start.wait()
        st = (409, None)
        for _ in range(20):
            st = put_status(s3, Bucket="condm", Key="cas", Body=b"cas-%d" % i)
            if st[0] != 409:
                break
        return i, st

    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        results = list(ex.map(writer, range(n)))
    wins = [i for i, st in results if st[0] == 200]
    check(len(wins) == 1, "exactly one compare-and-swap wins: %r" % results)
    check({st for _, st in results if st[0] != 200} <= {(412, "PreconditionFailed")},
          "the others get 412: %r" % results)
    check(s3b.get_object(Bucket="condm", Key="cas")["Body"].read() == b"cas-%d" % wins[0],
          "the winner's bytes")


# S3 behaviour: CompleteMultipartUpload honours If-None-Match: * (412 when the
# key exists) and If-Match.
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html
def test_conditional_complete(c, g2):
    s3 = c.boto()
    s3.create_bucket(Bucket="condc")
    inm = client(c.port, headers={"If-None-Match": "*"})

    def upload(key):
        u = s3.create_multipart_upload(Bucket="condc", Key=key)["UploadId"]
        e = s3.upload_part(Bucket="condc", Key=key, UploadId=u, PartNumber=1, Body=b"p" * 100)
        return u, [{"PartNumber": 1, "ETag": e["ETag"]}]

    u, parts = upload("mp-new")
    r = inm.complete_multipart_upload(Bucket="condc", Key="mp-new", UploadId=u,
                                      MultipartUpload={"Parts": parts})
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "complete of a new key")
    u, parts = upload("mp-new")
    check(error_code(inm.complete_multipart_upload, Bucket="condc", Key="mp-new", UploadId=u,
                     MultipartUpload={"Parts": parts}) ==
          ("PreconditionFailed", 412), "complete over an existing key with If-None-Match")
    etag = s3.head_object(Bucket="condc", Key="mp-new")["ETag"]
    check(error_code(client(c.port, headers={"If-Match": '"%s"' % ("0" * 32)})
                     .complete_multipart_upload, Bucket="condc", Key="mp-new", UploadId=u,
                     MultipartUpload={"Parts": parts}) == ("PreconditionFailed", 412),
          "complete with a stale If-Match")
    r = client(c.port, headers={"If-Match": etag}).complete_multipart_upload(
        Bucket="condc", Key="mp-new", UploadId=u, MultipartUpload={"Parts": parts})
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "complete with a matching If-Match")


# S3 behaviour: conditional writes of large objects (stored in chunks) race
# the same way: one of two writers through two gateways wins, the loser's
# chunks are not left behind in the object.
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
def test_conditional_large_put(c, g2):
    s3 = c.boto()
    s3.create_bucket(Bucket="condlarge")
    bodies = [os.urandom(6 << 20), os.urandom(6 << 20)]
    start = threading.Barrier(2)

    def writer(i):
        port = c.port if i == 0 else g2.port
        cl = client(port, headers={"If-None-Match": "*"})
        start.wait()
        st = (409, None)
        for _ in range(20):
            st = put_status(cl, Bucket="condlarge", Key="big", Body=bodies[i])
            if st[0] != 409:
                break
        return st

    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        results = list(ex.map(writer, range(2)))
    wins = [i for i, st in enumerate(results) if st[0] == 200]
    check(len(wins) == 1 and (412, "PreconditionFailed") in results,
          "one large conditional PUT wins: %r" % results)
    got = s3.get_object(Bucket="condlarge", Key="big")["Body"].read()
    check(got == bodies[wins[0]], "the winner's 6 MiB")


# S3 behaviour: CopyObject takes If-None-Match: * and If-Match on its
# destination as PutObject does: 412 PreconditionFailed when the destination
# exists (If-None-Match) or has another ETag (If-Match), 404 NoSuchKey for
# If-Match on a missing destination, and of two racing conditional copies
# through two gateways exactly one wins; the destination is never changed by
# a refused copy. (x-amz-copy-source-if-* are the source's conditions.)
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html (If-None-Match, If-Match)
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
def test_conditional_copy(c, g2):
    s3 = c.boto()
    s3.create_bucket(Bucket="condcopy")
    s3.put_object(Bucket="condcopy", Key="src", Body=b"source")
    dst_etag = s3.put_object(Bucket="condcopy", Key="dst", Body=b"dest")["ETag"]
    big = os.urandom(6 << 20)
    s3.put_object(Bucket="condcopy", Key="big", Body=big)
    inm = client(c.port, headers={"If-None-Match": "*"})
    for src in ("src", "big"):
        check(error_code(inm.copy_object, Bucket="condcopy", Key="dst",
                         CopySource={"Bucket": "condcopy", "Key": src}) ==
              ("PreconditionFailed", 412), "If-None-Match copy of %s onto an existing key" % src)
        check(s3.get_object(Bucket="condcopy", Key="dst")["Body"].read() == b"dest",
              "destination unchanged after the refused copy of %s" % src)
        r = inm.copy_object(Bucket="condcopy", Key="new-" + src,
                            CopySource={"Bucket": "condcopy", "Key": src})
        check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "copy of %s to a new key" % src)
    check(s3.get_object(Bucket="condcopy", Key="new-big")["Body"].read() == big, "large copy")
    stale = client(c.port, headers={"If-Match": '"%s"' % ("0" * 32)})
    check(error_code(stale.copy_object, Bucket="condcopy", Key="dst",
                     CopySource={"Bucket": "condcopy", "Key": "src"}) ==
          ("PreconditionFailed", 412), "If-Match with another ETag")
    check(error_code(client(c.port, headers={"If-Match": dst_etag}).copy_object,
                     Bucket="condcopy", Key="missing",
                     CopySource={"Bucket": "condcopy", "Key": "src"}) == ("NoSuchKey", 404),
          "If-Match on a missing destination")
    r = client(c.port, headers={"If-Match": dst_etag}).copy_object(
        Bucket="condcopy", Key="dst", CopySource={"Bucket": "condcopy", "Key": "src"})
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200 and
          s3.get_object(Bucket="condcopy", Key="dst")["Body"].read() == b"source",
          "If-Match with the destination's ETag copies")
    # the source's own conditions stay the source's
    check(error_code(s3.copy_object, Bucket="condcopy", Key="x", CopySourceIfNoneMatch="*",
                     CopySource={"Bucket": "condcopy", "Key": "src"}) ==
          ("PreconditionFailed", 412), "x-amz-copy-source-if-none-match: *")
    start = threading.Barrier(2)

    def copier(i):
        cl = client(c.port if i == 0 else g2.port, headers={"If-None-Match": "*"})
        start.wait()
        for _ in range(20):
            try:
                r = cl.copy_object(Bucket="condcopy", Key="raced",
                                   CopySource={"Bucket": "condcopy", "Key": "src"})
                return r["ResponseMetadata"]["HTTPStatusCode"]
            except Exception as e:   # 409: retry, as AWS tells clients to
                st = e.response["ResponseMetadata"]["HTTPStatusCode"]
                if st != 409:
                    return st
        return 409

    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        results = sorted(ex.map(copier, range(2)))
    check(results == [200, 412], "two racing conditional copies: %r" % results)


# S3 behaviour: a conditional write that loses its right to write while in
# flight answers 409 ConditionalRequestConflict ("a conflicting operation
# occurred... retry"), never 500. Here the gateway is held (gdb) between
# taking the key's lease on its replicas and writing under it, for longer
# than a lease lives (10 s, storage_node/lease.h): the replicas refuse the
# write (LOCKED) and the client must get 409; a retry then succeeds.
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html (409 ConditionalRequestConflict)
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
def test_conditional_lease_lost(c, g2):
    import shutil
    if shutil.which("gdb") is None or os.environ.get("CAIRN_SANITIZE"):
        print("     skipped: needs gdb (deploy/deps/test.txt) and a build without sanitizers")
        return
    s3 = c.boto()
    s3.create_bucket(Bucket="condlease")
    # gdb's output to a pipe comes at its exit: a file says the breakpoint is
    # set (a request sent before "continue" runs waits in the socket)
    ready = os.path.join(c.tmp, "gdb-ready")
    gdb = subprocess.Popen(
        ["gdb", "-nx", "-batch", "-p", str(c.proc.pid), "-ex", "set pagination off",
         "-ex", "break gw_cond_write_on_lock", "-ex", "shell touch " + ready,
         "-ex", "continue", "-ex", "shell sleep 11", "-ex", "detach"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = b""
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(ready):
            if gdb.poll() is not None:
                out = gdb.stdout.read()
                if b"Operation not permitted" in out or b"Could not attach" in out:
                    print("     skipped: gdb may not attach here: %r" % out[-300:])
                    return
            check(time.monotonic() < deadline and gdb.poll() is None,
                  "gdb did not attach: %r" % out[-2000:])
            time.sleep(0.05)
        t0 = time.monotonic()
        st = put_status(client(c.port, headers={"If-None-Match": "*"}), Bucket="condlease",
                        Key="k", Body=b"late")
        held = time.monotonic() - t0
        out += gdb.communicate(timeout=60)[0]
    finally:
        if gdb.poll() is None:   # never leave the gateway stopped under a dead gdb
            gdb.terminate()
            try:
                gdb.wait(10)
            except subprocess.TimeoutExpired:
                gdb.kill()
                gdb.wait()
    if b"Breakpoint 1, " not in out and (b"ptrace: Operation not permitted" in out or
                                          b"Could not attach" in out):
        # kernel.yama.ptrace_scope >= 1 without CAP_SYS_PTRACE: gdb may not
        # attach to a process it did not start; nothing here can stall it
        print("     skipped: gdb may not attach here: %r" % out[-300:])
        return
    check(b"Breakpoint 1, " in out, "the conditional write stopped at its lease: %r" % out[-2000:])
    check(held >= 10, "the write was held past the lease (%.1fs)" % held)
    check(st == (409, "ConditionalRequestConflict"), "a write whose lease expired: %r" % (st,))
    check(error_code(s3.head_object, Bucket="condlease", Key="k")[1] == 404, "nothing written")
    st = put_status(client(c.port, headers={"If-None-Match": "*"}), Bucket="condlease", Key="k",
                    Body=b"retry")
    check(st[0] == 200, "the retry: %r" % (st,))
    check(s3.get_object(Bucket="condlease", Key="k")["Body"].read() == b"retry", "retry stored")


# S3 behaviour: CreateBucket of a bucket the caller already owns answers 200
# in us-east-1 (legacy) and 409 BucketAlreadyOwnedByYou in every other region;
# a bucket another account owns is 409 BucketAlreadyExists.
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html (Errors)
# https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html
def test_create_bucket_owned(c, gws):
    g_eu = gws["eu"]
    s3 = c.boto()
    other = c.boto(access_key=OTHER_KEY, secret_key=OTHER_SECRET)
    s3.create_bucket(Bucket="owned")
    r = s3.create_bucket(Bucket="owned")
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "owner's re-create in us-east-1")
    check(error_code(other.create_bucket, Bucket="owned") == ("BucketAlreadyExists", 409),
          "another account in us-east-1")
    c.aws("s3api", "create-bucket", "--bucket", "owned")       # exit 0: a 200
    p = c.aws("s3", "mb", "s3://owned")
    check(b"make_bucket: owned" in p.stdout, "aws s3 mb of an owned bucket: %r" % p.stdout)
    cfg = {"LocationConstraint": "eu-west-1"}
    eu = g_eu.boto()
    eu.create_bucket(Bucket="owned-eu", CreateBucketConfiguration=cfg)
    check(error_code(eu.create_bucket, Bucket="owned-eu", CreateBucketConfiguration=cfg) ==
          ("BucketAlreadyOwnedByYou", 409), "owner's re-create in eu-west-1")
    check(error_code(g_eu.boto(access_key=OTHER_KEY, secret_key=OTHER_SECRET).create_bucket,
                     Bucket="owned-eu", CreateBucketConfiguration=cfg) ==
          ("BucketAlreadyExists", 409), "another account in eu-west-1")
    p = g_eu.aws("s3api", "create-bucket", "--bucket", "owned-eu",
                 "--create-bucket-configuration", "LocationConstraint=eu-west-1", check_rc=False)
    check(p.returncode != 0 and b"BucketAlreadyOwnedByYou" in p.stderr,
          "aws cli in eu-west-1: %r" % p.stderr)
    # the re-create changed nothing: the bucket and its objects are there
    s3.put_object(Bucket="owned", Key="k", Body=b"v")
    s3.create_bucket(Bucket="owned")
    check(s3.get_object(Bucket="owned", Key="k")["Body"].read() == b"v", "contents kept")


# S3 behaviour: CompleteMultipartUpload retried after it succeeded (its reply
# lost) with the same part list answers 200 with the same ETag; SDKs retry
# Complete on a dropped connection. Another part list, or another upload, is
# still NoSuchUpload.
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html
# ("... and then retry the request. If the upload was already completed, S3
# returns the same response")
def test_complete_retried(c, gws):
    s3 = c.boto()
    s3.create_bucket(Bucket="mpretry")
    u = s3.create_multipart_upload(Bucket="mpretry", Key="obj")["UploadId"]
    p1 = os.urandom(5 << 20)
    p2 = b"tail"
    e1 = s3.upload_part(Bucket="mpretry", Key="obj", UploadId=u, PartNumber=1, Body=p1)["ETag"]
    e2 = s3.upload_part(Bucket="mpretry", Key="obj", UploadId=u, PartNumber=2, Body=p2)["ETag"]
    parts = {"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]}
    first = s3.complete_multipart_upload(Bucket="mpretry", Key="obj", UploadId=u,
                                         MultipartUpload=parts)
    again = s3.complete_multipart_upload(Bucket="mpretry", Key="obj", UploadId=u,
                                         MultipartUpload=parts)
    check(again["ResponseMetadata"]["HTTPStatusCode"] == 200 and
          again["ETag"] == first["ETag"] and again["Key"] == "obj" and
          again["Bucket"] == "mpretry", "retried Complete: %r vs %r" % (again, first))
    # through the other gateway too
    again = gws["g2"].boto().complete_multipart_upload(Bucket="mpretry", Key="obj",
                                                       UploadId=u, MultipartUpload=parts)
    check(again["ETag"] == first["ETag"], "retried Complete on another gateway")
    check(error_code(s3.complete_multipart_upload, Bucket="mpretry", Key="obj", UploadId=u,
                     MultipartUpload={"Parts": parts["Parts"][:1]}) ==
          ("NoSuchUpload", 404), "another part list is not a retry")
    check(error_code(s3.complete_multipart_upload, Bucket="mpretry", Key="obj",
                     UploadId="0123456789abcdef", MultipartUpload=parts) ==
          ("NoSuchUpload", 404), "another upload id is not a retry")
    check(s3.get_object(Bucket="mpretry", Key="obj")["Body"].read() == p1 + p2, "object intact")
    # the aws cli's complete-multipart-upload, retried the same way
    u = s3.create_multipart_upload(Bucket="mpretry", Key="cli")["UploadId"]
    e = s3.upload_part(Bucket="mpretry", Key="cli", UploadId=u, PartNumber=1, Body=b"x")["ETag"]
    import json
    doc = os.path.join(c.tmp, "parts.json")
    with open(doc, "w") as f:
        json.dump({"Parts": [{"PartNumber": 1, "ETag": e}]}, f)
    outs = [json.loads(c.aws("s3api", "complete-multipart-upload", "--bucket", "mpretry",
                             "--key", "cli", "--upload-id", u, "--multipart-upload",
                             "file://" + doc).stdout) for _ in range(2)]
    check(outs[0]["ETag"] == outs[1]["ETag"], "aws cli retried Complete: %r" % outs)


def presigned_part(c, port, key, upload, n):
    """A SigV4 presigned UploadPart URL (UNSIGNED-PAYLOAD) for raw sends."""
    from botocore.config import Config
    import boto3
    s3 = boto3.session.Session().client(
        "s3", endpoint_url="http://127.0.0.1:%d" % port, region_name=REGION,
        aws_access_key_id=c.boto()._request_signer._credentials.access_key,
        aws_secret_access_key=c.boto()._request_signer._credentials.secret_key,
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    return s3.generate_presigned_url("upload_part", Params={
        "Bucket": "mprace", "Key": key, "UploadId": upload, "PartNumber": n})


def raw_put(url, body, pause_after=None, pause=None):
    """PUTs body to a presigned URL over a raw socket; with pause_after, sends
    that many bytes, waits for pause (an Event), then the rest. Returns
    (status, ETag header)."""
    import socket
    from urllib.parse import urlsplit
    u = urlsplit(url)
    s = socket.create_connection((u.hostname, u.port), timeout=30)
    head = ("PUT %s?%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n" %
            (u.path, u.query, u.netloc, len(body))).encode()
    s.sendall(head)
    if pause_after is not None:
        s.sendall(body[:pause_after])
        pause.wait(30)
        s.sendall(body[pause_after:])
    else:
        s.sendall(body)
    resp = b""
    while b"\r\n\r\n" not in resp:
        chunk = s.recv(65536)
        if not chunk:
            break
        resp += chunk
    s.close()
    status = int(resp.split(b" ", 2)[1])
    etag = None
    for line in resp.split(b"\r\n"):
        if line.lower().startswith(b"etag:"):
            etag = line.split(b":", 1)[1].strip().decode()
    return status, etag


# S3 behaviour: two UploadParts of one part number racing: the part whose
# upload completes last is the one stored (S3 keeps the latest), and
# CompleteMultipartUpload with its ETag succeeds while the other's ETag is
# InvalidPart.
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPart.html ("If you
# upload a new part using the same part number that was used with a previous
# part, the previously uploaded part is overwritten.")
def test_upload_part_race(c, gws):
    s3 = c.boto()
    s3.create_bucket(Bucket="mprace")
    for rnd, (slow_port, fast_port) in enumerate(((c.port, gws["g2"].port),
                                                  (gws["g2"].port, c.port))):
        key = "race-%d" % rnd
        u = s3.create_multipart_upload(Bucket="mprace", Key=key)["UploadId"]
        slow_body, fast_body = os.urandom(300000), os.urandom(200000)
        go_on = threading.Event()
        out = {}
        t = threading.Thread(target=lambda: out.update(slow=raw_put(
            presigned_part(c, slow_port, key, u, 1), slow_body, 100000, go_on)))
        t.start()
        time.sleep(0.3)     # the slow upload has begun its body
        fast = raw_put(presigned_part(c, fast_port, key, u, 1), fast_body)
        check(fast[0] == 200, "the fast part stored: %r" % (fast,))
        go_on.set()         # now the slow one completes, last
        t.join()
        slow = out["slow"]
        check(slow[0] == 200 and slow[1] != fast[1], "the slow part stored: %r" % (slow,))
        listed = s3.list_parts(Bucket="mprace", Key=key, UploadId=u)["Parts"]
        check([p["ETag"] for p in listed] == [slow[1]], "the last completed part is listed: %r"
              % listed)
        check(error_code(s3.complete_multipart_upload, Bucket="mprace", Key=key, UploadId=u,
                         MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": fast[1]}]}) ==
              ("InvalidPart", 400), "the overwritten part's ETag")
        s3.complete_multipart_upload(Bucket="mprace", Key=key, UploadId=u,
                                     MultipartUpload={"Parts": [{"PartNumber": 1,
                                                                 "ETag": slow[1]}]})
        check(s3.get_object(Bucket="mprace", Key=key)["Body"].read() == slow_body,
              "the object has the last part's bytes")


# S3 behaviour: x-amz-copy-source names any key S3 allows, URL-encoded, with
# an optional ?versionId (null is the object of an unversioned bucket), for
# CopyObject and UploadPartCopy alike.
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html (x-amz-copy-source)
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html
def test_copy_source_keys(c, gws):
    from urllib.parse import quote
    s3 = c.boto()
    s3.create_bucket(Bucket="cpsrc")
    keys = [" ", "_", "__", "a b", "a+b", "a?b", "?versionId", "a%b", "a%20b", "dir/sub/k",
            "\u00e9t\u00e9/\u65e5\u672c", "x=y&z", "#hash", "semi;colon", "tilde~"]
    for i, k in enumerate(keys):
        body = b"body-%d" % i
        s3.put_object(Bucket="cpsrc", Key=k, Body=body)
        # boto3's dict form (it URL-encodes the key)
        s3.copy_object(Bucket="cpsrc", Key="d1-%d" % i, CopySource={"Bucket": "cpsrc", "Key": k})
        # boto3's string form (bucket/key?versionId=..., encoded by botocore)
        s3.copy_object(Bucket="cpsrc", Key="d2-%d" % i,
                       CopySource="cpsrc/" + k + "?versionId=null")
        s3.copy_object(Bucket="cpsrc", Key="d3-%d" % i,
                       CopySource={"Bucket": "cpsrc", "Key": k, "VersionId": "null"})
        # the header encoded by hand, every reserved byte as %XX, with a
        # leading '/' (S3 takes both)
        enc = "/" + quote("cpsrc/" + k, safe="/")
        hand = client(c.port, headers={"x-amz-copy-source": enc})
        hand.copy_object(Bucket="cpsrc", Key="d4-%d" % i, CopySource="cpsrc/ignored")
        hand = client(c.port, headers={"x-amz-copy-source": enc + "?versionId=null"})
        hand.copy_object(Bucket="cpsrc", Key="d5-%d" % i, CopySource="cpsrc/ignored")
        for d in ("d1-%d" % i, "d2-%d" % i, "d3-%d" % i, "d4-%d" % i, "d5-%d" % i):
            got = s3.get_object(Bucket="cpsrc", Key=d)["Body"].read()
            check(got == body, "copy of %r to %s: %r" % (k, d, got))
        # UploadPartCopy from the same source
        u = s3.create_multipart_upload(Bucket="cpsrc", Key="mp-%d" % i)["UploadId"]
        e = s3.upload_part_copy(Bucket="cpsrc", Key="mp-%d" % i, UploadId=u, PartNumber=1,
                                CopySource={"Bucket": "cpsrc", "Key": k})
        s3.complete_multipart_upload(Bucket="cpsrc", Key="mp-%d" % i, UploadId=u,
                                     MultipartUpload={"Parts": [{
                                         "PartNumber": 1,
                                         "ETag": e["CopyPartResult"]["ETag"]}]})
        check(s3.get_object(Bucket="cpsrc", Key="mp-%d" % i)["Body"].read() == body,
              "UploadPartCopy of %r" % k)
    # a version other than null does not exist in an unversioned bucket
    check(error_code(s3.copy_object, Bucket="cpsrc", Key="dx",
                     CopySource={"Bucket": "cpsrc", "Key": "a b", "VersionId": "v1"})[1] in
          (400, 404), "another version id")
    # the aws cli (botocore encodes --copy-source, as boto3's string form)
    c.aws("s3api", "copy-object", "--bucket", "cpsrc", "--key", "cli1", "--copy-source",
          "cpsrc/a+b?versionId=null")
    check(s3.get_object(Bucket="cpsrc", Key="cli1")["Body"].read() ==
          b"body-%d" % keys.index("a+b"), "aws cli copy-object of a+b")
    c.aws("s3", "cp", "s3://cpsrc/a?b", "s3://cpsrc/cli2")
    check(s3.get_object(Bucket="cpsrc", Key="cli2")["Body"].read() ==
          b"body-%d" % keys.index("a?b"), "aws s3 cp of a?b")


# S3 behaviour: UploadPartCopy's x-amz-copy-source-range must be
# bytes=first-last (zero-based, inclusive); any other form is 400
# InvalidArgument, a range outside the source is InvalidRange; never a silent
# copy of other bytes than asked for.
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html (x-amz-copy-source-range)
def test_copy_source_range(c, gws):
    s3 = c.boto()
    s3.create_bucket(Bucket="cprange")
    src = os.urandom(100)
    s3.put_object(Bucket="cprange", Key="src", Body=src)
    u = s3.create_multipart_upload(Bucket="cprange", Key="dst")["UploadId"]

    def copy(rng):
        return s3.upload_part_copy(Bucket="cprange", Key="dst", UploadId=u, PartNumber=1,
                                   CopySource={"Bucket": "cprange", "Key": "src"},
                                   CopySourceRange=rng)
    for bad in ("0-9", "bytes=0", "bytes=hello-world", "bytes=0-bar", "bytes=hello-",
                "bytes=0-2,3-5", "bytes=-5", "bytes=5-", "bytes=9-2", "Bytes=0-1", "bytes =0-1",
                "bytes=0x1-2", "bytes=-1-0"):
        check(error_code(copy, bad) == ("InvalidArgument", 400), "range %r" % bad)
    for out in ("bytes=0-100", "bytes=0-21000", "bytes=100-100", "bytes=99-200"):
        code = error_code(copy, out)
        check(code[0] == "InvalidRange" and code[1] in (400, 416), "range %r: %r" % (out, code))
    e = copy("bytes=10-19")["CopyPartResult"]["ETag"]
    s3.complete_multipart_upload(Bucket="cprange", Key="dst", UploadId=u,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})
    check(s3.get_object(Bucket="cprange", Key="dst")["Body"].read() == src[10:20],
          "exactly the bytes asked for")
    u = s3.create_multipart_upload(Bucket="cprange", Key="dst2")["UploadId"]
    p = c.aws("s3api", "upload-part-copy", "--bucket", "cprange", "--key", "dst2",
              "--upload-id", u, "--part-number", "1", "--copy-source", "cprange/src",
              "--copy-source-range", "bytes=0-500", check_rc=False)
    check(p.returncode != 0 and b"InvalidRange" in p.stderr, "aws cli: %r" % p.stderr)


# S3 behaviour: aws-chunked in Content-Encoding describes the upload only: S3
# stores the object's Content-Encoding without it and keeps the client's
# other codings as sent; with aws-chunked alone the object has none.
# https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html (the
# Content-Encoding header: aws-chunked, possibly with other codings such as
# "aws-chunked,gzip"; the object keeps the other codings)
def test_content_encoding_aws_chunked(c, gws):
    from test_gateway_chunked import signed_put, unsigned_trailer_body, crc32_b64
    s3 = c.boto()
    s3.create_bucket(Bucket="cenc")
    data = b"payload" * 1000
    cases = [("aws-chunked,gzip", "gzip"), ("gzip, aws-chunked", "gzip"),
             ("aws-chunked", None), ("gzip, aws-chunked, br", "gzip, br"),
             ("gzip,br,aws-chunked", "gzip,br"), ("AWS-CHUNKED, x-custom", "x-custom"),
             ("identity", "identity")]
    for i, (sent, stored) in enumerate(cases):
        hdrs = {"x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
                "Content-Encoding": sent, "x-amz-trailer": "x-amz-checksum-crc32",
                "x-amz-decoded-content-length": str(len(data))}
        body = unsigned_trailer_body(data, 4096, crc32_b64(data))
        if "aws-chunked" not in sent.lower():   # a plain upload of the same bytes
            hdrs = {"x-amz-content-sha256": "UNSIGNED-PAYLOAD", "Content-Encoding": sent}
            body = data
        st, resp, _ = signed_put(c, "/cenc/o%d" % i, body, hdrs)
        check(st == 200, "put with %r: %d %r" % (sent, st, resp))
        h = s3.head_object(Bucket="cenc", Key="o%d" % i)
        got = h["ResponseMetadata"]["HTTPHeaders"].get("content-encoding")
        check(got == stored, "Content-Encoding %r stored as %r, want %r" % (sent, got, stored))
        check(s3.get_object(Bucket="cenc", Key="o%d" % i)["Body"].read() == data,
              "the bytes as decoded")


# S3 behaviour (conditional writes, as above) with a replica down (N=3, W=2):
# the two live replicas grant the lease and the write goes on, without
# waiting for the dead one; the next conditional write sees the object.
# Runs last: it stops a storage node.
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
def test_node_down_conditional_put(c, gws):
    s3 = c.boto()
    s3.create_bucket(Bucket="conddown")
    c.nodes[0].stop()
    inm = client(c.port, headers={"If-None-Match": "*"})
    for i in range(5):
        t0 = time.monotonic()
        st = put_status(inm, Bucket="conddown", Key="k%d" % i, Body=b"v")
        check(st[0] == 200, "conditional PUT with a node down: %r" % (st,))
        st = put_status(client(gws["g2"].port, headers={"If-None-Match": "*"}),
                        Bucket="conddown", Key="k%d" % i, Body=b"w")
        check(st == (412, "PreconditionFailed"), "the second writer: %r" % (st,))
        print("     conditional PUT + refusal with a node down: %.2fs" % (time.monotonic() - t0))
    check(s3.get_object(Bucket="conddown", Key="k4")["Body"].read() == b"v", "first writer's")


def raw_list(s3, op, **kw):
    """Calls a listing through boto3 and returns (parsed response, raw XML
    body, the query string sent)."""
    seen = {}

    def on_send(request, **_):
        seen["url"] = request.url

    def on_after(http_response, **_):
        seen["body"] = http_response.content

    s3.meta.events.register("before-send.s3.%s" % op, on_send)
    s3.meta.events.register("after-call.s3.%s" % op, on_after)
    try:
        fn = {"ListObjects": s3.list_objects, "ListObjectsV2": s3.list_objects_v2,
              "ListObjectVersions": s3.list_object_versions,
              "ListMultipartUploads": s3.list_multipart_uploads}[op]
        r = fn(**kw)
    finally:
        s3.meta.events.unregister("before-send.s3.%s" % op, on_send)
        s3.meta.events.unregister("after-call.s3.%s" % op, on_after)
    return r, seen["body"].decode(), seen["url"].split("?", 1)[1]


# S3 behaviour: an empty delimiter= is the same as none: the listing is flat
# and the response has no Delimiter element.
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjects.html
def test_list_empty_delimiter(c, gws):
    s3 = c.boto()
    s3.create_bucket(Bucket="delim")
    for k in ("a/1", "a/2", "b", "c/d/e"):
        s3.put_object(Bucket="delim", Key=k, Body=b"")
    for op in ("ListObjects", "ListObjectsV2", "ListObjectVersions"):
        r, body, q = raw_list(s3, op, Bucket="delim", Delimiter="")
        check("delimiter=" in q, "%s: the request carried an empty delimiter: %s" % (op, q))
        check("<Delimiter" not in body, "%s: the empty delimiter is not echoed: %s" % (op, body))
        keys = [o["Key"] for o in r.get("Contents", r.get("Versions", []))]
        check(keys == ["a/1", "a/2", "b", "c/d/e"] and "CommonPrefixes" not in r,
              "%s: a flat listing: %r" % (op, r))
    p = c.aws("s3api", "list-objects-v2", "--bucket", "delim", "--delimiter", "")
    check(b"CommonPrefixes" not in p.stdout and b"c/d/e" in p.stdout, "aws cli: %r" % p.stdout)


# S3 behaviour: encoding-type=url percent-encodes exactly these fields:
# ListObjects: Delimiter, Marker, Prefix, NextMarker, Key (and CommonPrefixes'
# Prefix); ListObjectsV2: Delimiter, Prefix, Key, StartAfter (not the
# continuation tokens); ListObjectVersions: Delimiter, KeyMarker, Prefix,
# NextKeyMarker, Key; ListMultipartUploads: Delimiter, KeyMarker, Prefix,
# NextKeyMarker, Key. SDKs decode those fields (botocore with unquote_plus, so
# a '+' left raw would come back as a space).
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html (EncodingType)
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjects.html
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListMultipartUploads.html
def test_list_encoding_url(c, gws):
    s3 = c.boto()
    s3.create_bucket(Bucket="enc")
    keys = ["p+q/a b+c", "p+q/x%y", "p+q/z+dir+k", "p+q/\u00e9t\u00e9"]
    for k in keys:
        s3.put_object(Bucket="enc", Key=k, Body=b"")
    want = sorted(keys)
    # v1: Prefix, Marker, Delimiter, NextMarker, Key, CommonPrefixes
    r, body, _ = raw_list(s3, "ListObjects", Bucket="enc", Prefix="p+q/", Delimiter="+",
                          Marker="p+q/a", MaxKeys=2, EncodingType="url")
    check("<Prefix>p%2Bq/</Prefix>" in body, "v1 Prefix encoded: %s" % body)
    check("<Marker>p%2Bq/a</Marker>" in body, "v1 Marker encoded")
    check("<Delimiter>%2B</Delimiter>" in body, "v1 Delimiter encoded")
    check("<NextMarker>p%2Bq/" in body, "v1 NextMarker encoded")
    check("<Key>p%2Bq/x%25y</Key>" in body, "v1 Key encoded: %s" % body)
    check("<CommonPrefixes><Prefix>p%2Bq/a%20b%2B</Prefix>" in body, "v1 CommonPrefixes encoded")
    # the same without EncodingType: botocore asks for url itself and decodes
    # exactly S3's fields with unquote_plus
    r, body, q = raw_list(s3, "ListObjects", Bucket="enc", Prefix="p+q/", Delimiter="+",
                          Marker="p+q/a", MaxKeys=2)
    check("encoding-type=url" in q, "botocore asked for url encoding: %s" % q)
    # (this botocore does not decode v1's top-level Prefix, which S3 encodes)
    from urllib.parse import unquote_plus
    check(unquote_plus(r["Prefix"]) == "p+q/" and r["Marker"] == "p+q/a" and
          r["Delimiter"] == "+" and r["NextMarker"] == "p+q/x%y", "v1 decoded by boto3: %r" % r)
    check([o["Key"] for o in r["Contents"]] == ["p+q/x%y"] and
          [p["Prefix"] for p in r["CommonPrefixes"]] == ["p+q/a b+"], "v1 entries: %r" % r)
    # v2: Prefix, StartAfter, Delimiter, Key; the token is opaque, never encoded
    r, body, _ = raw_list(s3, "ListObjectsV2", Bucket="enc", Prefix="p+q/", StartAfter="p+q/a",
                          MaxKeys=1, EncodingType="url")
    check("<StartAfter>p%2Bq/a</StartAfter>" in body and "<Prefix>p%2Bq/</Prefix>" in body,
          "v2 StartAfter and Prefix encoded: %s" % body)
    tok = r["NextContinuationToken"]
    r2, body2, _ = raw_list(s3, "ListObjectsV2", Bucket="enc", Prefix="p+q/",
                            ContinuationToken=tok, EncodingType="url")
    check(("<ContinuationToken>%s</ContinuationToken>" % tok) in body2, "token echoed as sent")
    got = [unquote_plus(o["Key"]) for o in r["Contents"] + r2["Contents"]]
    check(got == [k for k in want if k > "p+q/a"], "v2 pages decode to the keys: %r" % got)
    # every key round-trips through boto3's default (it asks for url itself)
    check([o["Key"] for o in s3.list_objects_v2(Bucket="enc")["Contents"]] == want,
          "v2 default listing")
    check([o["Key"] for o in s3.list_objects(Bucket="enc")["Contents"]] == want,
          "v1 default listing")
    # versions: KeyMarker, NextKeyMarker, Prefix, Key
    r, body, _ = raw_list(s3, "ListObjectVersions", Bucket="enc", Prefix="p+q/",
                          KeyMarker="p+q/a", MaxKeys=1, EncodingType="url")
    check("<KeyMarker>p%2Bq/a</KeyMarker>" in body and "<NextKeyMarker>p%2Bq/" in body,
          "versions markers encoded: %s" % body)
    check(unquote_plus(r["Versions"][0]["Key"]) == want[0], "versions key")
    # multipart uploads: KeyMarker, Prefix, NextKeyMarker, Key
    for k in keys[:2]:
        s3.create_multipart_upload(Bucket="enc", Key=k)
    r, body, _ = raw_list(s3, "ListMultipartUploads", Bucket="enc", Prefix="p+q/",
                          MaxUploads=1, EncodingType="url")
    check("<Prefix>p%2Bq/</Prefix>" in body and "<Key>p%2Bq/a%20b%2Bc</Key>" in body and
          "<NextKeyMarker>p%2Bq/a%20b%2Bc</NextKeyMarker>" in body,
          "uploads encoded: %s" % body)
    check(unquote_plus(r["Uploads"][0]["Key"]) == "p+q/a b+c", "uploads key: %r" % r["Uploads"])


# HTTP behaviour botocore relies on: boto3 and the aws cli send "Expect:
# 100-continue" with every PutObject and UploadPart, empty bodies included,
# and keep the connection for the next request. botocore takes a final
# response that came without a 100 first as the refusal of its body and keeps
# that response's status line: it then reads the next response on the
# connection without its own status line and hangs until its read timeout
# (60 s by default; CI once saw a PUT "lost" that way). So an empty body gets
# a 100 before its final response, and a request answered before its body was
# asked for gets Connection: close.
# https://www.rfc-editor.org/rfc/rfc9110#name-expect
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html (Expect)
def test_expect_continue_reuse(c, gws):
    import json
    from botocore.exceptions import ClientError
    s3 = c.boto()
    s3.create_bucket(Bucket="expect")
    s3.put_bucket_policy(Bucket="expect", Policy=json.dumps({"Statement": [{
        "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
        "Resource": "arn:aws:s3:::expect/deny/*"}]}))
    # no retries and a short read timeout: a misread response is an error here
    quick = c.boto(retries={"total_max_attempts": 1}, read_timeout=5)
    for i in range(3):
        quick.put_object(Bucket="expect", Key="empty/%d" % i, Body=b"")
        quick.put_object(Bucket="expect", Key="one/%d" % i, Body=b"x")
    check(s3.get_object(Bucket="expect", Key="one/2")["Body"].read() == b"x", "stored")
    for body in (b"", b"y"):   # refused before the body: then the next request
        try:
            quick.put_object(Bucket="expect", Key="deny/k", Body=body)
            check(False, "a denied PUT succeeded")
        except ClientError as e:
            check(e.response["Error"]["Code"] == "AccessDenied", "denied: %r" % e.response)
        quick.put_object(Bucket="expect", Key="after-deny", Body=b"z")
    # on the wire: an empty presigned PUT with Expect gets 100, then 200, kept
    url = s3.generate_presigned_url("put_object", Params={"Bucket": "expect", "Key": "raw"})
    from urllib.parse import urlsplit
    u = urlsplit(url)
    out = c.raw(("PUT %s?%s HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\n"
                 "Content-Length: 0\r\n\r\n" % (u.path, u.query, u.netloc)).encode(),
                timeout=2)
    check(out.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 "), "100 first: %r" % out)
    check(b"Connection: keep-alive" in out, "kept: %r" % out)
    # refused before the body (anonymous, a private bucket): no 100, closed
    out = c.raw(b"PUT /expect/anon HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                b"Content-Length: 0\r\n\r\n", timeout=10)
    check(out.startswith(b"HTTP/1.1 403 ") and b"Connection: close" in out and
          b"100 Continue" not in out, "refused and closed: %r" % out)


def main():
    tests = [test_expect_continue_reuse, test_conditional_put_race_two_gateways, test_conditional_put_if_match_race,
             test_conditional_complete, test_conditional_large_put, test_conditional_copy,
             test_conditional_lease_lost, test_create_bucket_owned, test_list_empty_delimiter,
             test_list_encoding_url, test_complete_retried, test_upload_part_race,
             test_copy_source_keys, test_copy_source_range, test_content_encoding_aws_chunked,
             test_node_down_conditional_put]
    only = sys.argv[1:]
    with Cluster() as c:
        gws = {}
        try:
            gws["g2"] = SecondGateway(c)
            gws["eu"] = SecondGateway(c, "gateway-eu", {"s3.region": "eu-west-1"})
            for t in tests:
                if only and t.__name__ not in only:
                    continue
                t0 = time.monotonic()
                t(c, gws["g2"] if t.__name__.startswith("test_conditional") else gws)
                print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
        finally:
            for g in gws.values():
                g.close()
    print("test_gateway_sdk_behaviour: ok")


if __name__ == "__main__":
    main()
