"""TLS on the gateway (docs/security.md, TLS): an HTTPS listener next to the
plain one, with a certificate from a throw-away CA made here with the
openssl CLI. Real clients verify it against that CA: boto3 (small, 5 MiB and
multipart objects), the aws cli (--ca-bundle) and rclone (--ca-cert).
TLS 1.0 and 1.1 are refused, TLS 1.2 gets a forward-secret AEAD suite,
plain HTTP sent to the TLS port gets no HTTP answer and a prompt close, and
the plain port keeps working. SIGHUP swaps in a replaced certificate for new
connections (its serial is seen) while a connection opened before keeps
working; a broken replacement is refused and the old certificate stays. A
bad certificate or key file keeps the gateway from starting."""
import http.client
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import warnings

import boto3
from botocore.config import Config

from secutil import ACCESS_KEY, REGION, SECRET_KEY, Cluster, check
from snclient import free_port

BIN = os.environ.get("CAIRN_BIN", "build/bin")


def openssl(*args):
    p = subprocess.run(["openssl"] + list(args), capture_output=True, timeout=60)
    check(p.returncode == 0, "openssl %s: %s" % (" ".join(args), p.stderr.decode()))


class Pki:
    """A CA and server certificates for 127.0.0.1 / localhost in dir."""

    def __init__(self, d):
        self.dir = d
        self.ca_key = os.path.join(d, "ca.key")
        self.ca = os.path.join(d, "ca.pem")
        self.cert = os.path.join(d, "server.pem")
        self.key = os.path.join(d, "server.key")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", self.ca_key, "-out", self.ca, "-days", "2",
                "-subj", "/CN=cairn test CA")
        with open(os.path.join(d, "ext.cnf"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                    "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")

    def issue(self, serial, cert=None, key=None):
        """A new key and certificate with this serial (an int), written to
        temporary names and renamed over cert/key (default: the served ones),
        as a deployment tool would."""
        cert, key = cert or self.cert, key or self.key
        csr = os.path.join(self.dir, "server.csr")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key + ".new", "-out", csr, "-subj", "/CN=127.0.0.1")
        openssl("x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey", self.ca_key,
                "-set_serial", str(serial), "-days", "2",
                "-extfile", os.path.join(self.dir, "ext.cnf"), "-out", cert + ".new")
        os.chmod(key + ".new", 0o600)
        os.rename(key + ".new", key)
        os.rename(cert + ".new", cert)


def https_boto(c):
    return boto3.client("s3", endpoint_url="https://127.0.0.1:%d" % c.tls_port,
                        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                        region_name=REGION, verify=c.pki.ca,
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}))


def tls_connect(c, ctx, server_hostname="127.0.0.1"):
    s = socket.create_connection(("127.0.0.1", c.tls_port), timeout=10)
    try:
        return ctx.wrap_socket(s, server_hostname=server_hostname)
    except BaseException:
        s.close()
        raise


def verifying_ctx(c):
    ctx = ssl.create_default_context(cafile=c.pki.ca)
    return ctx


def peer_serial(c):
    with tls_connect(c, verifying_ctx(c)) as s:
        return int(s.getpeercert()["serialNumber"], 16)


def test_boto3_https(c):
    s3 = https_boto(c)
    s3.create_bucket(Bucket="tls-boto")
    small = os.urandom(1000)
    big = os.urandom(5 * 1024 * 1024)
    s3.put_object(Bucket="tls-boto", Key="small", Body=small)
    s3.put_object(Bucket="tls-boto", Key="big", Body=big)
    check(s3.get_object(Bucket="tls-boto", Key="small")["Body"].read() == small, "small GET")
    check(s3.get_object(Bucket="tls-boto", Key="big")["Body"].read() == big, "5 MiB GET")
    got = s3.get_object(Bucket="tls-boto", Key="big", Range="bytes=4000000-4000099")
    check(got["Body"].read() == big[4000000:4000100], "range GET")
    up = s3.create_multipart_upload(Bucket="tls-boto", Key="mp")["UploadId"]
    parts, pieces = [], [os.urandom(5 * 1024 * 1024), os.urandom(300000)]
    for i, p in enumerate(pieces, 1):
        e = s3.upload_part(Bucket="tls-boto", Key="mp", UploadId=up, PartNumber=i, Body=p)
        parts.append({"PartNumber": i, "ETag": e["ETag"]})
    s3.complete_multipart_upload(Bucket="tls-boto", Key="mp", UploadId=up,
                                 MultipartUpload={"Parts": parts})
    check(s3.get_object(Bucket="tls-boto", Key="mp")["Body"].read() == b"".join(pieces),
          "multipart round trip")
    # the same objects through the plain port: one store behind both
    check(c.boto().get_object(Bucket="tls-boto", Key="small")["Body"].read() == small,
          "plain port sees the HTTPS PUT")


def test_post_object_https(c):
    """A browser form posted over HTTPS: the Location of the answer (S3's
    POST Object response) names https, the scheme the client used."""
    import requests
    s3 = https_boto(c)
    s3.create_bucket(Bucket="tls-post")
    form = s3.generate_presigned_post("tls-post", "form/obj", ExpiresIn=300)
    r = requests.post(form["url"], data=form["fields"], files={"file": ("a.txt", b"posted")},
                      verify=c.pki.ca, timeout=30)
    loc = r.headers.get("Location", "")
    check(r.status_code == 204 and loc.startswith("https://127.0.0.1:%d/" % c.tls_port),
          "POST over https: %d Location %r" % (r.status_code, loc))
    check(s3.get_object(Bucket="tls-post", Key="form/obj")["Body"].read() == b"posted",
          "the posted file")


def test_awscli_https(c):
    src = os.path.join(c.tmp, "aws.src")
    with open(src, "wb") as f:
        f.write(os.urandom(3 * 1024 * 1024))
    url = "https://127.0.0.1:%d" % c.tls_port

    def aws(*args):
        cmd = ["/usr/bin/aws", "--endpoint-url", url, "--ca-bundle", c.pki.ca] + list(args)
        p = subprocess.run(cmd, env=c.env(), capture_output=True, timeout=120)
        check(p.returncode == 0, "%s: %s %s" % (" ".join(cmd), p.stdout, p.stderr))
        return p.stdout.decode()
    aws("s3", "mb", "s3://tls-aws")
    aws("s3", "cp", src, "s3://tls-aws/f")
    dst = os.path.join(c.tmp, "aws.dst")
    aws("s3", "cp", "s3://tls-aws/f", dst)
    with open(src, "rb") as a, open(dst, "rb") as b:
        check(a.read() == b.read(), "aws cli round trip")
    # without the CA the certificate is not trusted
    p = subprocess.run(["/usr/bin/aws", "--endpoint-url", url, "s3", "ls"], env=c.env(),
                       capture_output=True, timeout=120)
    check(p.returncode != 0 and b"CERTIFICATE_VERIFY_FAILED" in p.stderr,
          "an unknown CA must fail verification: %s" % p.stderr[-500:])


def test_rclone_https(c):
    if shutil.which("rclone") is None:
        print("skip rclone: not installed (deploy/deps/test.txt lists it)")
        return
    conf = os.path.join(c.tmp, "rclone.conf")
    with open(conf, "w") as f:
        f.write("[cairn]\ntype = s3\nprovider = Other\naccess_key_id = %s\n"
                "secret_access_key = %s\nendpoint = https://127.0.0.1:%d\nregion = us-east-1\n"
                % (ACCESS_KEY, SECRET_KEY, c.tls_port))
    tree = os.path.join(c.tmp, "rtree")
    os.makedirs(os.path.join(tree, "a"))
    for i, p in enumerate(["f1", "a/f2"]):
        with open(os.path.join(tree, p), "wb") as f:
            f.write(os.urandom(100000 * (i + 1)))

    def rclone(*args):
        env = dict(os.environ)
        env.pop("AWS_CA_BUNDLE", None)
        p = subprocess.run(["rclone", "--config", conf, "--ca-cert", c.pki.ca] + list(args),
                           capture_output=True, timeout=120, env=env)
        check(p.returncode == 0, "rclone %s: %s %s" % (args, p.stdout, p.stderr))
        return p.stdout.decode()
    rclone("mkdir", "cairn:tls-rclone")
    rclone("copy", tree, "cairn:tls-rclone/t")
    back = os.path.join(c.tmp, "rback")
    rclone("copy", "cairn:tls-rclone/t", back)
    rclone("check", tree, back)
    rclone("purge", "cairn:tls-rclone")


def test_old_tls_refused(c):
    warnings.simplefilter("ignore", DeprecationWarning)   # ssl.TLSVersion.TLSv1: on purpose
    for v in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_ciphers("ALL:@SECLEVEL=0")   # so the client itself offers the old version
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = v
        try:
            with tls_connect(c, ctx) as s:
                raise AssertionError("%s handshake succeeded: %s" % (v, s.version()))
        except ssl.SSLError as e:
            # the server's protocol_version alert, not a local refusal
            check("PROTOCOL_VERSION" in str(e) or "UNSUPPORTED_PROTOCOL" in str(e),
                  "%s refused for another reason: %s" % (v, e))
    ctx = verifying_ctx(c)
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    with tls_connect(c, ctx) as s:
        name, version, _ = s.cipher()
        check(version == "TLSv1.2" and name.startswith("ECDHE-") and
              ("GCM" in name or "CHACHA20" in name), "TLS 1.2 suite %s %s" % (name, version))
    with tls_connect(c, verifying_ctx(c)) as s:
        check(s.version() == "TLSv1.3", "default is TLS 1.3: %s" % s.version())


def test_plain_http_to_tls_port(c):
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", c.tls_port), timeout=10)
    out = b""
    try:
        s.sendall(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n\r\n")
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except ConnectionResetError:
        pass
    finally:
        s.close()
    check(not out.startswith(b"HTTP/"), "plain HTTP answered on the TLS port: %r" % out[:80])
    check(time.monotonic() - t0 < 5, "the TLS port held a plain-HTTP client open")
    # nothing else was hurt: the plain port and the TLS port still serve
    check(c.raw(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
          .startswith(b"HTTP/1.1 200"), "plain port after the refusal")
    c.boto().list_buckets()
    https_boto(c).list_buckets()


def test_stalled_handshake(c):
    """A connection that never completes its handshake is closed after
    http.header_timeout (2 s here), not the keep-alive timeout."""
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", c.tls_port), timeout=20)
    try:
        s.sendall(b"\x16\x03\x01")   # the start of a ClientHello, then silence
        try:
            got = s.recv(100)
        except ConnectionResetError:
            got = b""
    finally:
        s.close()
    took = time.monotonic() - t0
    check(got == b"" and 1.5 < took < 10, "stalled handshake closed after %.1f s (%r)"
          % (took, got))


def test_close_paths(c):
    """The connection-closing paths over TLS: Connection: close ends in the
    response then a close (close_notify, then EOF), and a refused upload
    whose body is still coming gets its 403 read before the close (the
    lingering close reads through TLS instead of shutting the socket)."""
    with tls_connect(c, verifying_ctx(c)) as s:
        s.sendall(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
        check(out.startswith(b"HTTP/1.1 200") and out.endswith(b"ok\n"), "close: %r" % out)
    body = 4 * 1024 * 1024
    with tls_connect(c, verifying_ctx(c)) as s:
        s.sendall(b"PUT /nobucket/k HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % body)
        out = b""
        sent = 0
        s.settimeout(10)
        try:
            while sent < body:   # the gateway answers without reading it all
                sent += s.send(b"z" * 65536)
                s.setblocking(False)
                try:
                    out += s.recv(65536)
                except (ssl.SSLWantReadError, BlockingIOError):
                    pass
                s.settimeout(10)
            while True:
                b = s.recv(65536)
                if not b:
                    break
                out += b
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
            pass
        # an unsigned request reaches the access decision, so a missing bucket is
        # NoSuchBucket (as S3 answers anonymous clients); either way refused early
        check(out.startswith(b"HTTP/1.1 404") and b"NoSuchBucket" in out,
              "refused upload's answer: %r" % out[:400])


def wait_log(c, text, count, timeout=10):
    deadline = time.monotonic() + timeout
    while c.log_text().count(text) < count:
        check(time.monotonic() < deadline, "%r not logged:\n%s" % (text, c.log_text()[-3000:]))
        time.sleep(0.05)


def test_sighup_reload(c):
    check(peer_serial(c) == 0x1001, "serving the first certificate")
    # a connection opened before the reload keeps its session
    old = http.client.HTTPSConnection("127.0.0.1", c.tls_port, context=verifying_ctx(c),
                                      timeout=10)
    old.request("GET", "/_cairn/health")
    check(old.getresponse().read() == b"ok\n", "health before")
    c.pki.issue(0x2002)
    c.proc.send_signal(signal.SIGHUP)
    wait_log(c, "SIGHUP: TLS certificate reloaded", 1)
    check(peer_serial(c) == 0x2002, "a new connection sees the new certificate")
    old.request("GET", "/_cairn/health")
    check(old.getresponse().read() == b"ok\n", "the connection from before still works")
    old.close()
    # a broken replacement is refused; the certificate in use stays
    with open(c.pki.cert, "w") as f:
        f.write("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    c.proc.send_signal(signal.SIGHUP)
    wait_log(c, "TLS certificate not reloaded", 1)
    check(peer_serial(c) == 0x2002, "the previous certificate stays after a failed reload")
    c.pki.issue(0x1001)   # as it was, for the other cases
    c.proc.send_signal(signal.SIGHUP)
    wait_log(c, "SIGHUP: TLS certificate reloaded", 2)


def test_bad_files_refuse_start(c):
    """The gateway does not start on an unreadable or broken certificate, on
    a key that does not belong to it, or without one."""
    other = os.path.join(c.tmp, "other")
    os.makedirs(other)
    c.pki.issue(0x3003, os.path.join(other, "cert.pem"), os.path.join(other, "key.pem"))
    garbage = os.path.join(other, "garbage.pem")
    with open(garbage, "w") as f:
        f.write("hello\n")
    cases = [
        ({"http.tls_cert_file": os.path.join(other, "missing.pem")}, "http.tls_cert_file"),
        ({"http.tls_cert_file": garbage}, "http.tls_cert_file"),
        ({"http.tls_key_file": garbage}, "http.tls_key_file"),
        ({"http.tls_key_file": os.path.join(other, "key.pem")}, "mismatch"),
        ({"http.tls_cert_file": ""}, "http.tls_cert_file and http.tls_key_file are required"),
    ]
    for over, want in cases:
        settings = dict(c.settings)
        settings.update({"http.port": free_port(), "http.tls_port": free_port()})
        settings.update(over)
        cfg = os.path.join(other, "gateway.conf")
        with open(cfg, "w") as f:
            for k, v in settings.items():
                f.write("%s = %s\n" % (k, v))
        p = subprocess.run([os.path.join(BIN, "cairn-gateway"), "--config", cfg],
                           capture_output=True, timeout=30)
        out = (p.stdout + p.stderr).decode(errors="replace")
        print("  refused: %s" % out.strip().splitlines()[-1][25:])
        check(p.returncode != 0 and want in out, "%r: rc %d, output:\n%s" % (over, p.returncode,
                                                                           out[-2000:]))


def main():
    tmp = tempfile.mkdtemp(prefix="cairn-tls-")
    try:
        pki = Pki(tmp)
        pki.issue(0x1001)
        tls_port = free_port()
        settings = {"http.tls_port": tls_port, "http.tls_cert_file": pki.cert,
                    "http.tls_key_file": pki.key, "http.header_timeout": "2s"}
        tests = [test_boto3_https, test_post_object_https, test_awscli_https, test_rclone_https, test_old_tls_refused,
                 test_plain_http_to_tls_port, test_stalled_handshake, test_close_paths, test_sighup_reload, test_bad_files_refuse_start]
        with Cluster(nodes=1, settings=settings) as c:
            c.pki, c.tls_port = pki, tls_port
            for t in tests:
                t0 = time.monotonic()
                t(c)
                print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
        print("all %d passed" % len(tests))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
