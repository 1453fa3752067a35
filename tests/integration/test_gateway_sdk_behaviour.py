"""Behaviours S3 SDKs and tools rely on, each checked with boto3 (and the
aws cli where it matters) against real cairn-storage nodes and gateways:
conditional writes atomic across two gateways, CompleteMultipartUpload
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

    def __init__(self, c):
        self.c = c
        self.settings = dict(c.settings)
        self.port = free_port()
        self.settings["http.port"] = self.port
        cfg = os.path.join(c.tmp, "gateway2.conf")
        with open(cfg, "w") as f:
            for k, v in self.settings.items():
                f.write("%s = %s\n" % (k, v))
        self.log = open(os.path.join(c.tmp, "gateway2.log"), "ab")
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

    def boto(self, headers=None):
        return client(self.port, headers=headers)

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def client(port, access_key=None, secret_key=None, headers=None):
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
                  aws_secret_access_key=secret_key or SECRET_KEY, region_name=REGION,
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


def main():
    tests = [test_conditional_put_race_two_gateways, test_conditional_put_if_match_race,
             test_conditional_complete]
    only = sys.argv[1:]
    with Cluster() as c:
        g2 = SecondGateway(c)
        try:
            for t in tests:
                if only and t.__name__ not in only:
                    continue
                t0 = time.monotonic()
                t(c, g2)
                print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
        finally:
            g2.close()
    print("test_gateway_sdk_behaviour: ok")


if __name__ == "__main__":
    main()
