#!/usr/bin/python3
"""The deployment files hold what the binaries accept.

- deploy/examples/*.conf load in their daemon (--dump-config) and show the
  values written there; the bench config loads with no warning;
- the command line of each systemd unit (ExecStart, with %i and paths
  pointed at a temp dir) starts a daemon that answers (storage node: cairn-admin
  ping; gateway: a TCP connect) and exits 0 on SIGTERM within the unit's
  TimeoutStopSec;
- systemd-analyze verify accepts the units (when systemd-analyze exists);
- docker-compose accepts deploy/docker-compose.yml (when installed).

A daemon not built yet is reported as SKIP and not tested; the test fails if
none at all can be tested. Uses CAIRN_BIN (build/bin) and CAIRN_SRC.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get("CAIRN_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.abspath(os.environ.get("CAIRN_BIN", os.path.join(SRC, "build", "bin")))
DEPLOY = os.path.join(SRC, "deploy")
failures = []
tested = 0


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def binary(name):
    path = os.path.join(BIN, name)
    if not os.access(path, os.X_OK):
        print("SKIP: %s is not built (%s)" % (name, path))
        return None
    return path


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def conf_values(path):
    """key = value lines of a cairn config file (comments dropped)."""
    out = {}
    with open(path) as f:
        for line in f:
            line = re.split(r"[#%]", line, 1)[0].strip()
            if "=" in line:
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip().strip('"')
    return out


def check_dump(exe, conf):
    global tested
    r = subprocess.run([exe, "--config", conf, "--dump-config"], capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0:
        fail("%s --config %s --dump-config: exit %d: %s" % (exe, conf, r.returncode, r.stderr.strip()))
        return
    dump = conf_values_from_text(r.stdout)
    values = conf_values(conf)
    missing = [k for k in values if k not in dump]
    if missing:
        fail("%s: keys %s are not in --dump-config" % (conf, missing))
        return
    # the same values given as --set must give the same settings (sizes and
    # durations are dumped normalized, so compare dumps, not texts)
    argv = [exe]
    for k, v in values.items():
        argv += ["--set", "%s=%s" % (k, v)]
    r2 = subprocess.run(argv + ["--dump-config"], capture_output=True, text=True, timeout=30)
    if r2.returncode != 0 or r2.stdout != r.stdout:
        fail("%s: loading the file and --set of its values differ: %s" % (conf, r2.stderr.strip()))
        return
    tested += 1
    print("ok: %s loads in %s" % (os.path.relpath(conf, SRC), os.path.basename(exe)))


def conf_values_from_text(text):
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip().strip('"')
    return out


def unit_exec_start(unit):
    with open(os.path.join(DEPLOY, "systemd", unit)) as f:
        text = f.read()
    m = re.search(r"^ExecStart=(.*)$", text, re.M)
    stop = re.search(r"^TimeoutStopSec=(\d+)$", text, re.M)
    return m.group(1).split(), int(stop.group(1)) if stop else 90


def run_unit_command(unit, instance, conf_text, conf_name, probe, extra_files=None):
    """Starts the unit's ExecStart with its config file replaced by conf_text
    (at the path the unit names, moved under a temp dir), probes it, stops it."""
    global tested
    argv, stop_s = unit_exec_start(unit)
    exe = binary(os.path.basename(argv[0]))
    if exe is None:
        return
    with tempfile.TemporaryDirectory(prefix="cairn-deploy-") as tmp:
        argv = [a.replace("%i", instance) for a in argv]
        conf_idx = argv.index("--config") + 1
        if os.path.basename(argv[conf_idx]) != conf_name:
            fail("%s reads %s, the docs say %s" % (unit, argv[conf_idx], conf_name))
        conf = os.path.join(tmp, os.path.basename(argv[conf_idx]))
        with open(conf, "w") as f:
            f.write(conf_text.replace("@TMP@", tmp))
        for name, text in (extra_files or {}).items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        argv = [exe] + argv[1:conf_idx] + [conf] + argv[conf_idx + 1:]
        log = open(os.path.join(tmp, "log"), "w+")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            ok = probe(p)
            if not ok:
                log.seek(0)
                fail("%s: %s did not answer; log:\n%s" % (unit, " ".join(argv), log.read()[-2000:]))
                return
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(timeout=stop_s)
            except subprocess.TimeoutExpired:
                fail("%s: no exit within TimeoutStopSec=%d after SIGTERM" % (unit, stop_s))
                return
            if rc != 0:
                log.seek(0)
                fail("%s: exit %d after SIGTERM; log:\n%s" % (unit, rc, log.read()[-2000:]))
                return
            tested += 1
            print("ok: %s's command line starts %s, which answers and stops on SIGTERM"
                  % (unit, os.path.basename(exe)))
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            log.close()


def make_keys(admin, d):
    """The key files the examples name under /etc/cairn (auth = curve), made
    in d as the docs say: node, gateway and operator (client) pairs, and the
    nodes' allow-list of the gateway's and the operator's public keys."""
    for name in ("node", "gateway", "client"):
        subprocess.run([admin, "keygen", os.path.join(d, name)], check=True,
                       capture_output=True, timeout=30)
    with open(os.path.join(d, "allowed_clients"), "w") as out:
        for name in ("gateway", "client"):
            with open(os.path.join(d, name + ".pub")) as f:
                out.write(f.read())


def curve_env(keys):
    env = dict(os.environ)
    env.update(CAIRN_STORAGE_AUTH="curve",
               CAIRN_STORAGE_CURVE_SECRET_KEY_FILE=os.path.join(keys, "client.key"),
               CAIRN_STORAGE_CURVE_SERVER_KEY_FILE=os.path.join(keys, "node.pub"))
    return env


def test_storage_unit(keys):
    port = free_port()
    admin = binary("cairn-admin")
    if admin is None:
        return
    conf = open(os.path.join(DEPLOY, "examples", "storage.conf")).read()
    conf = re.sub(r"^listen = .*$", "listen = tcp://127.0.0.1:%d" % port, conf, flags=re.M)
    conf = re.sub(r"^data_dir = .*$", "data_dir = @TMP@/data", conf, flags=re.M)
    if not re.search(r"^auth = curve$", conf, re.M):
        fail("deploy/examples/storage.conf does not set auth = curve (issue 18)")
    conf = conf.replace("/etc/cairn/", keys + "/")
    endpoint = "tcp://127.0.0.1:%d" % port

    def probe(p):
        deadline = time.time() + 15
        while time.time() < deadline and p.poll() is None:
            r = subprocess.run([admin, "--nodes", endpoint, "--timeout", "1000", "ping"],
                               capture_output=True, text=True, env=curve_env(keys))
            if r.returncode == 0:
                # and a client without the cluster's key gets no answer
                r = subprocess.run([admin, "--nodes", endpoint, "--auth", "none", "--timeout",
                                    "500", "ping"], capture_output=True, text=True)
                if r.returncode == 0:
                    fail("the example node answered a client without a CURVE key")
                return True
            time.sleep(0.2)
        return False

    run_unit_command("cairn-storage@.service", "disk1", conf, "storage-disk1.conf", probe)


def test_gateway_unit(keys):
    port = free_port()
    conf = open(os.path.join(DEPLOY, "examples", "gateway.conf")).read()
    conf = conf.replace("/etc/cairn/gateway.key", keys + "/gateway.key")
    conf = conf.replace("/etc/cairn/node.pub", keys + "/node.pub")
    conf = re.sub(r"^http.listen = .*$", "http.listen = 127.0.0.1", conf, flags=re.M)
    conf = re.sub(r"^http.port = .*$", "http.port = %d" % port, conf, flags=re.M)
    conf = re.sub(r"^http.threads = .*$", "http.threads = 2", conf, flags=re.M)
    # the example cluster file, its addresses moved to local ports (ids and
    # zones kept, so a parse error in the example fails the gateway's start)
    cluster = open(os.path.join(DEPLOY, "examples", "cluster.example")).read()
    cluster = re.sub(r"tcp://[^\s]+", lambda m: "tcp://127.0.0.1:%d" % free_port(), cluster)
    if "cluster.file" in conf:
        conf = re.sub(r"^cluster.file = .*$", "cluster.file = @TMP@/cluster", conf, flags=re.M)
    else:
        fail("deploy/examples/gateway.conf names no cluster.file")
    conf = re.sub(r"^s3.credentials_file = .*$", "s3.credentials_file = %s"
                  % os.path.join(DEPLOY, "examples", "credentials.example"), conf, flags=re.M)

    def probe(p):
        deadline = time.time() + 15
        while time.time() < deadline and p.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                time.sleep(0.2)
        return False

    run_unit_command("cairn-gateway.service", "", conf, "gateway.conf", probe,
                      extra_files={"cluster": cluster})


def test_examples_load():
    global tested
    st = binary("cairn-storage")
    if st:
        check_dump(st, os.path.join(DEPLOY, "examples", "storage.conf"))
    gw = binary("cairn-gateway")
    if gw:
        check_dump(gw, os.path.join(DEPLOY, "examples", "gateway.conf"))
    bench = binary("cairn-bench")
    if bench:
        r = subprocess.run([bench, os.path.join(DEPLOY, "examples", "bench.config"), "--dump-config"],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0 or r.stderr.strip():
            fail("bench.config: exit %d, stderr: %s" % (r.returncode, r.stderr.strip()))
        else:
            tested += 1
            print("ok: deploy/examples/bench.config loads in cairn-bench with no warning")


def test_systemd_verify():
    global tested
    sa = shutil.which("systemd-analyze")
    if sa is None:
        print("SKIP: systemd-analyze not installed")
        return
    with tempfile.TemporaryDirectory(prefix="cairn-units-") as tmp:
        units = []
        for name in sorted(os.listdir(os.path.join(DEPLOY, "systemd"))):
            text = open(os.path.join(DEPLOY, "systemd", name)).read()
            m = re.search(r"^ExecStart=/usr/local/bin/(\S+)", text, re.M)
            if m and binary(m.group(1)) is None:
                continue
            text = text.replace("/usr/local/bin/", BIN.rstrip("/") + "/")
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
            if name.endswith("@.service"):
                inst = name.replace("@.service", "@disk1.service")
                os.symlink(name, os.path.join(tmp, inst))
                units.append(os.path.join(tmp, inst))
            else:
                units.append(os.path.join(tmp, name))
        r = subprocess.run([sa, "verify"] + units, capture_output=True, text=True, timeout=60)
        # verify also reports on the units ours name (network-online.target
        # ...) only when they are broken on this host; keep lines about ours
        ours = [l for l in (r.stdout + r.stderr).splitlines() if "cairn" in l]
        if r.returncode != 0 and ours:
            fail("systemd-analyze verify:\n" + "\n".join(ours))
        else:
            tested += 1
            print("ok: systemd-analyze verify: %s" % ", ".join(os.path.basename(u) for u in units))


def test_compose_file():
    global tested
    dc = shutil.which("docker-compose")
    if dc is None:
        print("SKIP: docker-compose not installed (deploy/deps/docker.txt)")
        return
    r = subprocess.run([dc, "-f", os.path.join(DEPLOY, "docker-compose.yml"), "config", "-q"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail("docker-compose config: " + r.stderr.strip())
    else:
        tested += 1
        print("ok: docker-compose accepts deploy/docker-compose.yml")


def main():
    test_examples_load()
    admin = binary("cairn-admin")
    with tempfile.TemporaryDirectory(prefix="cairn-deploy-keys-") as keys:
        if admin is not None:
            make_keys(admin, keys)
        test_storage_unit(keys)
        test_gateway_unit(keys)
    test_systemd_verify()
    test_compose_file()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    if tested == 0:
        print("FAIL: nothing could be tested (no binaries in %s)" % BIN)
        return 1
    print("all %d checks passed" % tested)
    return 0


if __name__ == "__main__":
    sys.exit(main())
