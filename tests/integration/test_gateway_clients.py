"""Real S3 clients against cairn-gateway over 3 storage nodes: the aws cli
(s3 mb/ls/cp/rm, s3api put/get/head/delete-object with --range,
list-objects-v2 with prefixes and delimiters, copy-object; its default
uploads are aws-chunked with CRC trailers), s3cmd and rclone."""
import filecmp
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import ACCESS_KEY, SECRET_KEY, check, run_tests  # noqa: E402


def test_awscli(c):
    d = c.tmp
    src = os.path.join(d, "src.bin")
    with open(src, "wb") as f:
        f.write(os.urandom(1 << 20))
    c.aws("s3", "mb", "s3://cli")
    check("cli" in c.aws("s3", "ls").stdout.decode(), "ls buckets")
    c.aws("s3", "cp", src, "s3://cli/dir/one.bin")
    c.aws("s3", "cp", src, "s3://cli/dir/sub/two.bin")
    out = c.aws("s3", "ls", "s3://cli/dir/").stdout.decode()
    check("one.bin" in out and "PRE sub/" in out, "ls dir %r" % out)
    dst = os.path.join(d, "dst.bin")
    c.aws("s3", "cp", "s3://cli/dir/one.bin", dst)
    check(filecmp.cmp(src, dst, shallow=False), "round trip")
    c.aws("s3api", "put-object", "--bucket", "cli", "--key", "api", "--body", src)
    h = json.loads(c.aws("s3api", "head-object", "--bucket", "cli", "--key", "api").stdout)
    check(h["ContentLength"] == 1 << 20, "head %r" % h)
    part = os.path.join(d, "part")
    c.aws("s3api", "get-object", "--bucket", "cli", "--key", "api", "--range", "bytes=10-19",
          part)
    with open(src, "rb") as f, open(part, "rb") as g:
        check(g.read() == f.read()[10:20], "range")
    r = json.loads(c.aws("s3api", "list-objects-v2", "--bucket", "cli", "--prefix", "dir/",
                         "--delimiter", "/").stdout)
    check([o["Key"] for o in r["Contents"]] == ["dir/one.bin"], "v2 keys %r" % r)
    check([p["Prefix"] for p in r["CommonPrefixes"]] == ["dir/sub/"], "v2 prefixes")
    c.aws("s3api", "copy-object", "--bucket", "cli", "--key", "copy",
          "--copy-source", "cli/api")
    c.aws("s3api", "delete-object", "--bucket", "cli", "--key", "api")
    p = c.aws("s3api", "head-object", "--bucket", "cli", "--key", "api", check_rc=False)
    check(p.returncode != 0 and b"404" in p.stderr, "deleted")
    c.aws("s3", "rm", "--recursive", "s3://cli/")
    c.aws("s3", "rb", "s3://cli")


def test_s3cmd(c):
    cfg = os.path.join(c.tmp, "s3cfg")
    with open(cfg, "w") as f:
        f.write("[default]\naccess_key = %s\nsecret_key = %s\nhost_base = 127.0.0.1:%d\n"
                "host_bucket = 127.0.0.1:%d\nuse_https = False\nsignature_v2 = False\n"
                "bucket_location = us-east-1\n" % (ACCESS_KEY, SECRET_KEY, c.port, c.port))
    src = os.path.join(c.tmp, "s3cmd.bin")
    with open(src, "wb") as f:
        f.write(os.urandom(100000))

    def s3cmd(*args):
        p = subprocess.run(["s3cmd", "-c", cfg] + list(args), capture_output=True,
                           timeout=120)
        check(p.returncode == 0, "s3cmd %s: %s %s" % (args, p.stdout, p.stderr))
        return p.stdout.decode()
    s3cmd("mb", "s3://s3cmdb")
    s3cmd("put", src, "s3://s3cmdb/x/file")
    check("s3://s3cmdb/x/file" in s3cmd("ls", "-r", "s3://s3cmdb"), "s3cmd ls")
    dst = os.path.join(c.tmp, "s3cmd.out")
    s3cmd("get", "s3://s3cmdb/x/file", dst)
    check(filecmp.cmp(src, dst, shallow=False), "s3cmd round trip")
    s3cmd("del", "s3://s3cmdb/x/file")
    s3cmd("rb", "s3://s3cmdb")


def test_rclone(c):
    conf = os.path.join(c.tmp, "rclone.conf")
    with open(conf, "w") as f:
        f.write("[cairn]\ntype = s3\nprovider = Other\naccess_key_id = %s\n"
                "secret_access_key = %s\nendpoint = %s\nregion = us-east-1\n"
                % (ACCESS_KEY, SECRET_KEY, c.url))
    tree = os.path.join(c.tmp, "tree")
    os.makedirs(os.path.join(tree, "a", "b"))
    for i, p in enumerate(["f1", "a/f2", "a/b/f3"]):
        with open(os.path.join(tree, p), "wb") as f:
            f.write(os.urandom(1000 * (i + 1)))

    def rclone(*args):
        env = dict(os.environ)
        env.pop("AWS_CA_BUNDLE", None)  # rclone refuses a CA bundle on plain http
        p = subprocess.run(["rclone", "--config", conf] + list(args), capture_output=True,
                           timeout=120, env=env)
        check(p.returncode == 0, "rclone %s: %s %s" % (args, p.stdout, p.stderr))
        return p.stdout.decode()
    rclone("mkdir", "cairn:rcl")
    rclone("copy", tree, "cairn:rcl/t")
    out = rclone("lsf", "-R", "cairn:rcl/t")
    check(sorted(out.split()) == ["a/", "a/b/", "a/b/f3", "a/f2", "f1"], "lsf %r" % out)
    back = os.path.join(c.tmp, "back")
    rclone("copy", "cairn:rcl/t", back)
    rclone("check", tree, back)
    rclone("purge", "cairn:rcl")
    shutil.rmtree(back)


if __name__ == "__main__":
    run_tests([test_awscli, test_s3cmd, test_rclone])
