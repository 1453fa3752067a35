"""cairn-local up --tls: a local CA and a certificate for 127.0.0.1 in
D/tls, the gateway serving HTTPS next to plain HTTP, and `env` pointing the
aws cli at the https endpoint with AWS_CA_BUNDLE (no --ca-bundle needed).
A second up keeps the CA, so clients that trust it keep working."""
import os
import shutil
import tempfile

from test_local_cluster import BIN, LOCAL, free_block, run


def env_of(common):
    env = dict(os.environ)
    for line in run(LOCAL, "env", *common).stdout.splitlines():
        if line.startswith("export "):
            k, v = line[len("export "):].split("=", 1)
            env[k] = v
    return env


def main():
    d = tempfile.mkdtemp(prefix="cairn-local-tls-")
    base = free_block()
    gw = base + 4
    common = ["--dir", d, "--build", os.path.dirname(BIN)]
    up = ["up", "-d", "--no-build", "--nodes", "1", "--gateway-port", str(gw),
          "--base-port", str(base), "--tls", "--tls-port", str(base + 2)]
    try:
        out = run(LOCAL, *up, *common).stdout
        assert "https://127.0.0.1:%d" % (base + 2) in out, out
        env = env_of(common)
        assert env["AWS_ENDPOINT_URL"] == "https://127.0.0.1:%d" % (base + 2), env
        ca = env["AWS_CA_BUNDLE"]
        assert ca == os.path.join(d, "tls", "ca.pem"), ca
        assert os.stat(os.path.join(d, "tls", "server.key")).st_mode & 0o077 == 0
        aws = ["/usr/bin/aws", "--endpoint-url", env["AWS_ENDPOINT_URL"]]
        src = os.path.join(d, "hello.txt")
        with open(src, "w") as f:
            f.write("hello over https\n")
        run(*aws, "s3", "mb", "s3://local-tls", env=env)
        run(*aws, "s3", "cp", src, "s3://local-tls/hello.txt", env=env)
        # the certificate really is checked against that CA
        bad = dict(env, AWS_CA_BUNDLE="/etc/ssl/certs/ca-certificates.crt")
        p = run(*aws, "s3", "ls", env=bad, check=False)
        assert p.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in p.stderr, p.stderr
        # the plain port serves the same store
        plain = dict(env)
        plain.pop("AWS_CA_BUNDLE")
        got = run("/usr/bin/aws", "--endpoint-url", "http://127.0.0.1:%d" % gw, "s3", "cp",
                  "s3://local-tls/hello.txt", "-", env=plain).stdout
        assert got == "hello over https\n", got
        with open(ca) as f:
            ca_pem = f.read()
        run(LOCAL, "down", *common)
        run(LOCAL, *up, *common)
        with open(ca) as f:
            assert f.read() == ca_pem, "the CA changed on a second up"
        got = run(*aws, "s3", "cp", "s3://local-tls/hello.txt", "-", env=env_of(common)).stdout
        assert got == "hello over https\n", got
        # without --tls the environment is plain HTTP again
        run(LOCAL, "down", *common)
        run(LOCAL, *up[:-3], *common)
        printed = run(LOCAL, "env", *common).stdout
        assert "AWS_ENDPOINT_URL=http://127.0.0.1:%d\n" % gw in printed, printed
        assert "AWS_CA_BUNDLE" not in printed, printed
    finally:
        run(LOCAL, "down", *common, check=False)
        shutil.rmtree(d, ignore_errors=True)
    print("ok: cairn-local up --tls, env over https, CA kept across ups")


if __name__ == "__main__":
    main()
