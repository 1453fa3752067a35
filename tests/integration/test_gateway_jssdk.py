"""AWS SDK for JavaScript v3 (@aws-sdk/client-s3) against cairn-gateway over 3
storage nodes, with the SDK's default checksum behaviour (CRC32 trailers on
uploads, validated response checksums): tests/js/s3_sdk_v3.mjs.

The SDK comes from the npm registry at the versions pinned by
tests/js/package-lock.json, installed with `npm ci` into <build>/js (next to
CAIRN_BIN, git-ignored) and reused while the lock file is unchanged. When npm
cannot reach its registry the test prints SKIP and passes; any other install
failure fails it. To move to another SDK version, edit tests/js/package.json
and run `npm install --package-lock-only` in tests/js."""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import ACCESS_KEY, SECRET_KEY, Cluster  # noqa: E402

SRC = os.environ.get("CAIRN_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
JS_SRC = os.path.join(SRC, "tests", "js")
BIN = os.environ.get("CAIRN_BIN", "build/bin")
JS_DIR = os.path.join(os.path.dirname(os.path.abspath(BIN)), "js")
NODE = shutil.which("node") or "/usr/bin/node"
NPM = shutil.which("npm") or "/usr/bin/npm"

# npm's words for "the registry is out of reach" (no network, DNS, proxy).
OFFLINE_MARKS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET",
                 "ENETUNREACH", "EHOSTUNREACH", "network request", "network connectivity")


def lock_digest():
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        with open(os.path.join(JS_SRC, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def install_sdk():
    """npm ci into JS_DIR unless the same lock is installed there. Returns
    None when ready, or the reason to skip (registry unreachable). Tests
    that share the install may run at once (ctest -j): a file lock makes
    one of them install while the others wait."""
    os.makedirs(JS_DIR, exist_ok=True)
    with open(os.path.join(JS_DIR, ".cairn-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return install_sdk_locked()


def install_sdk_locked():
    stamp = os.path.join(JS_DIR, ".cairn-lock-sha256")
    want = lock_digest()
    if os.path.exists(stamp) and open(stamp).read().strip() == want and \
            os.path.isdir(os.path.join(JS_DIR, "node_modules", "@aws-sdk", "client-s3")):
        return None
    if not os.path.exists(NPM) or not os.path.exists(NODE):
        raise AssertionError("node/npm missing: install the nodejs and npm packages "
                             "(deploy/deps/test.txt)")
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(os.path.join(JS_SRC, name), os.path.join(JS_DIR, name))
    p = subprocess.run([NPM, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=JS_DIR, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        out = p.stdout + p.stderr
        if any(m in out for m in OFFLINE_MARKS):
            return "npm cannot reach its registry:\n" + out[-2000:]
        raise AssertionError("npm ci failed %d:\n%s" % (p.returncode, out[-4000:]))
    with open(stamp, "w") as f:
        f.write(want + "\n")
    return None


def main():
    why = install_sdk()
    if why is not None:
        print("SKIP test_gateway_jssdk: " + why)
        return
    # ESM resolves packages from the script's own folder: run a copy there.
    script = os.path.join(JS_DIR, "s3_sdk_v3.mjs")
    shutil.copyfile(os.path.join(JS_SRC, "s3_sdk_v3.mjs"), script)
    # R = 2: read-after-write as S3 (the script overwrites then reads; the
    # default R = 1 may read the lagging replica, docs/s3-compat.md)
    with Cluster(settings={"consistency.read": 2}) as c:
        env = dict(os.environ, AWS_CONFIG_FILE="/dev/null",
                   AWS_SHARED_CREDENTIALS_FILE="/dev/null", HOME=c.tmp)
        for k in ("AWS_REQUEST_CHECKSUM_CALCULATION", "AWS_RESPONSE_CHECKSUM_VALIDATION",
                  "AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL"):
            env.pop(k, None)
        p = subprocess.run([NODE, script, c.url, ACCESS_KEY, SECRET_KEY], cwd=JS_DIR, env=env,
                           capture_output=True, text=True, timeout=120)
        sys.stdout.write(p.stdout)
        if p.returncode != 0:
            sys.stderr.write(p.stderr)
            raise AssertionError("s3_sdk_v3.mjs exited %d" % p.returncode)
    print("all 1 passed")


if __name__ == "__main__":
    main()
