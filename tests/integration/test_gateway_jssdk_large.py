"""AWS SDK for JavaScript v3 (default checksums) on large objects:
tests/js/s3_sdk_v3_large.mjs — a 100 MiB streamed PutObject (aws-chunked,
CRC32 trailer) cut into chunks, read back with a sha256 round trip and a
range across a chunk boundary, and a multipart upload with unequal parts.
The SDK install is test_gateway_jssdk.py's (npm ci into <build>/js, SKIP
only when the registry is out of reach)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import ACCESS_KEY, SECRET_KEY, Cluster  # noqa: E402
from test_gateway_jssdk import JS_DIR, JS_SRC, NODE, install_sdk  # noqa: E402


def main():
    why = install_sdk()
    if why is not None:
        print("SKIP test_gateway_jssdk_large: " + why)
        return
    script = os.path.join(JS_DIR, "s3_sdk_v3_large.mjs")
    shutil.copyfile(os.path.join(JS_SRC, "s3_sdk_v3_large.mjs"), script)
    with Cluster(node_settings={"obj_containers.sync_mode": "none"}) as c:
        env = dict(os.environ, AWS_CONFIG_FILE="/dev/null",
                   AWS_SHARED_CREDENTIALS_FILE="/dev/null", HOME=c.tmp)
        for k in ("AWS_REQUEST_CHECKSUM_CALCULATION", "AWS_RESPONSE_CHECKSUM_VALIDATION",
                  "AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL"):
            env.pop(k, None)
        p = subprocess.run([NODE, script, c.url, ACCESS_KEY, SECRET_KEY], cwd=JS_DIR, env=env,
                           capture_output=True, text=True, timeout=300)
        sys.stdout.write(p.stdout)
        if p.returncode != 0:
            sys.stderr.write(p.stderr)
            raise AssertionError("s3_sdk_v3_large.mjs exited %d" % p.returncode)
    print("all 1 passed")


if __name__ == "__main__":
    main()
