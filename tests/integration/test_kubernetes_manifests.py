#!/usr/bin/env python3
"""deploy/kubernetes/*.yaml, offline: every object validates against the
Kubernetes API schemas (the kubernetes-models package from the npm registry,
pinned by tests/k8s/package-lock.json and installed with `npm ci` into
<build>/k8s-js as test_gateway_jssdk.py does for the JS SDK; when npm cannot
reach its registry that part prints SKIP); and the manifests agree with
cairn and with each other: every CAIRN_* variable is a setting of the binary
the container runs and parses (--dump-config), every file setting points
into a mounted volume, the cluster file names exactly the StatefulSet's
pods, selectors, ports, ConfigMaps, Secrets and volumes that are referred
to exist, the probes hit /_cairn/ready and /_cairn/health, the drain fits
in the grace period, and kustomization.yaml lists every manifest."""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check  # noqa: E402

SRC = os.environ.get("CAIRN_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                               "..", ".."))
K8S = os.path.join(SRC, "deploy", "kubernetes")
JS_SRC = os.path.join(SRC, "tests", "k8s")
BIN = os.environ.get("CAIRN_BIN", "build/bin")
JS_DIR = os.path.join(os.path.dirname(os.path.abspath(BIN)), "k8s-js")
NODE = shutil.which("node") or "/usr/bin/node"
NPM = shutil.which("npm") or "/usr/bin/npm"
OFFLINE_MARKS = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET",
                 "ENETUNREACH", "EHOSTUNREACH", "network request", "network connectivity")
# cairn-admin's own variables (the storage node's readiness probe runs it)
ADMIN_ENV = {"CAIRN_STORAGE_AUTH", "CAIRN_STORAGE_CURVE_SECRET_KEY_FILE",
             "CAIRN_STORAGE_CURVE_SERVER_KEY_FILE"}


def load():
    """[(file, doc)] of every manifest, secrets.example.yaml included."""
    out = []
    for name in sorted(os.listdir(K8S)):
        if name.endswith(".yaml"):
            with open(os.path.join(K8S, name)) as f:
                for doc in yaml.safe_load_all(f):
                    if doc is not None:
                        out.append((name, doc))
    return out


def install_models():
    os.makedirs(JS_DIR, exist_ok=True)
    with open(os.path.join(JS_DIR, ".cairn-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        h = hashlib.sha256()
        for name in ("package.json", "package-lock.json"):
            with open(os.path.join(JS_SRC, name), "rb") as f:
                h.update(f.read())
        stamp = os.path.join(JS_DIR, ".cairn-lock-sha256")
        if os.path.exists(stamp) and open(stamp).read().strip() == h.hexdigest() and \
                os.path.isdir(os.path.join(JS_DIR, "node_modules", "kubernetes-models")):
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
            f.write(h.hexdigest() + "\n")
        return None


def validate_schemas(docs):
    why = install_models()
    if why is not None:
        print("SKIP schema validation: " + why)
        return
    script = os.path.join(JS_DIR, "validate.mjs")
    shutil.copyfile(os.path.join(JS_SRC, "validate.mjs"), script)

    def run(objs):
        p = subprocess.run([NODE, script], cwd=JS_DIR, capture_output=True, text=True,
                           timeout=120, input=json.dumps([{"file": f, "doc": d}
                                                          for f, d in objs]))
        return p.returncode, [json.loads(x) for x in p.stdout.splitlines()], p.stderr
    objs = [(f, d) for f, d in docs if d["kind"] != "Kustomization"]
    rc, res, err = run(objs)
    for r in res:
        check(r["ok"], "%s: %s %s: %s" % (r["file"], r["kind"], r["name"], r.get("error")))
    check(rc == 0 and len(res) == len(objs), "validate.mjs: rc %d, %d of %d: %s"
          % (rc, len(res), len(objs), err[-2000:]))
    # the validator is not a rubber stamp: a broken copy must fail
    sts = [(f, json.loads(json.dumps(d))) for f, d in objs if d["kind"] == "StatefulSet"][0]
    sts[1]["spec"]["replicas"] = "three"
    del sts[1]["spec"]["template"]["spec"]["containers"][0]["name"]
    rc, res, _ = run([sts])
    check(rc == 1 and not res[0]["ok"] and "replicas" in res[0]["error"],
          "a broken StatefulSet passed: %r" % res)
    print("ok   %d objects valid against the Kubernetes API schemas (kubernetes-models)"
          % len(objs))


def by_kind(docs, kind):
    return [d for _, d in docs if d["kind"] == kind]


def dump_config(binary, env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    e.update(env)
    p = subprocess.run([os.path.join(BIN, binary), "--dump-config"], capture_output=True,
                       text=True, timeout=30, env=e)
    check(p.returncode == 0, "%s --dump-config with the manifest's settings: %s"
          % (binary, p.stderr))
    return dict(line.split(" = ", 1) for line in p.stdout.splitlines() if " = " in line)


def env_name(key):
    return "CAIRN_" + key.upper().replace(".", "_")


def check_settings(docs):
    cms = {d["metadata"]["name"]: d for d in by_kind(docs, "ConfigMap")}
    for w in by_kind(docs, "StatefulSet") + by_kind(docs, "Deployment"):
        pod = w["spec"]["template"]["spec"]
        c = pod["containers"][0]
        binary = c["command"][0]
        check(binary in ("cairn-storage", "cairn-gateway"), "command %r" % c["command"])
        keys = dump_config(binary, {}).keys()
        names = {env_name(k): k for k in keys}
        env = {}
        for ef in c.get("envFrom", []):
            name = ef["configMapRef"]["name"]
            check(name in cms, "envFrom: no ConfigMap %s" % name)
            env.update(cms[name]["data"])
        for e in c.get("env", []):
            env[e["name"]] = e.get("value", "from-field")
        for k in env:
            check(k in names or (binary == "cairn-storage" and k in ADMIN_ENV),
                  "%s: %s is not a setting of %s" % (w["metadata"]["name"], k, binary))
        cfg = dump_config(binary, {k: v for k, v in env.items() if k in names})
        for k, v in env.items():
            if k in names and v != "from-field" and not re.fullmatch(r"\d+[a-zA-Z]+", v):
                check(cfg[names[k]] == v, "%s = %r, dumped as %r" % (k, v, cfg[names[k]]))
        mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
        for k, v in env.items():
            if k.endswith("_FILE") or k.endswith("_DIR"):
                check(any(v.startswith(m + "/") or v == m for m in mounts),
                      "%s = %s is in no volume of %s" % (k, v, binary))
        if binary == "cairn-gateway":
            grace = pod["terminationGracePeriodSeconds"]
            drain = int(cfg["http.shutdown_timeout"]) / 1000
            check(grace > drain, "grace %ss <= http.shutdown_timeout %ss" % (grace, drain))
            check(c["readinessProbe"]["httpGet"]["path"] == "/_cairn/ready", "readiness")
            check(c["livenessProbe"]["httpGet"]["path"] == "/_cairn/health", "liveness")
            ports = {p["name"]: p["containerPort"] for p in c["ports"]}
            check(ports["s3"] == int(cfg["http.port"]), "S3 port")
            check(ports["metrics"] == int(cfg["metrics.port"]), "metrics port")
        else:
            ports = {p["name"]: p["containerPort"] for p in c["ports"]}
            check("tcp://0.0.0.0:%d" % ports["zmq"] == cfg["listen"], "zmq port")
            check(ports["metrics"] == int(cfg["metrics.port"]), "metrics port")
            check(cfg["auth"] == "curve", "nodes take only CURVE clients")
    print("ok   every CAIRN_* variable is a setting, parses, and its files are mounted")


def check_refs(docs):
    cms = {d["metadata"]["name"] for d in by_kind(docs, "ConfigMap")}
    secrets = {d["metadata"]["name"] for d in by_kind(docs, "Secret")}
    services = {d["metadata"]["name"]: d for d in by_kind(docs, "Service")}
    workloads = by_kind(docs, "StatefulSet") + by_kind(docs, "Deployment")
    for _, d in docs:
        if d["kind"] not in ("Namespace", "Kustomization"):
            check(d["metadata"].get("namespace") == "cairn", "%s %s: namespace"
                  % (d["kind"], d["metadata"]["name"]))
    for w in workloads:
        name = w["metadata"]["name"]
        sel = w["spec"]["selector"]["matchLabels"]
        labels = w["spec"]["template"]["metadata"]["labels"]
        check(all(labels.get(k) == v for k, v in sel.items()), "%s: selector" % name)
        pod = w["spec"]["template"]["spec"]
        vols = {v["name"]: v for v in pod.get("volumes", [])}
        claims = {t["metadata"]["name"] for t in w["spec"].get("volumeClaimTemplates", [])}
        for v in vols.values():
            if "configMap" in v:
                check(v["configMap"]["name"] in cms, "%s: ConfigMap %s" % (name, v))
            if "secret" in v:
                check(v["secret"]["secretName"] in secrets, "%s: Secret %s" % (name, v))
        for c in pod.get("initContainers", []) + pod["containers"]:
            for m in c.get("volumeMounts", []):
                check(m["name"] in vols or m["name"] in claims,
                      "%s/%s mounts unknown volume %s" % (name, c["name"], m["name"]))
            ports = {p["name"] for p in c.get("ports", [])}
            for pr in ("readinessProbe", "livenessProbe", "startupProbe"):
                for how in ("httpGet", "tcpSocket"):
                    port = c.get(pr, {}).get(how, {}).get("port")
                    if isinstance(port, str):
                        check(port in ports, "%s: %s port %s" % (name, pr, port))
            r = c.get("resources")
            if c in pod["containers"]:
                check(r and r["requests"]["memory"] and r["limits"]["memory"],
                      "%s: memory request and limit" % name)
        for svc in services.values():
            if all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()):
                cports = {p["name"] for c in pod["containers"] for p in c.get("ports", [])}
                for p in svc["spec"]["ports"]:
                    check(p["targetPort"] in cports, "Service %s port %s"
                          % (svc["metadata"]["name"], p["targetPort"]))
        pdbs = [p for p in by_kind(docs, "PodDisruptionBudget")
                if all(labels.get(k) == v for k, v in p["spec"]["selector"]["matchLabels"].items())]
        check(len(pdbs) == 1, "%s: one PodDisruptionBudget" % name)
    sts = by_kind(docs, "StatefulSet")[0]
    headless = services[sts["spec"]["serviceName"]]
    check(headless["spec"]["clusterIP"] == "None", "the StatefulSet's Service is headless")
    cluster = [d for d in by_kind(docs, "ConfigMap") if d["metadata"]["name"] == "cairn-cluster"]
    lines = [x.split() for x in cluster[0]["data"]["cluster.conf"].splitlines()
             if x.strip() and not x.strip().startswith("#")]
    want = [["node", "%s-%d" % (sts["metadata"]["name"], i),
             "tcp://%s-%d.%s:7100" % (sts["metadata"]["name"], i, headless["metadata"]["name"])]
            for i in range(sts["spec"]["replicas"])]
    check(lines == want, "cluster.conf names the StatefulSet's pods: %r" % lines)
    with open(os.path.join(K8S, "kustomization.yaml")) as f:
        kust = yaml.safe_load(f)
    files = sorted(n for n in os.listdir(K8S) if n.endswith(".yaml") and
                   n not in ("kustomization.yaml", "secrets.example.yaml"))
    check(sorted(kust["resources"]) == files, "kustomization lists %r" % files)
    print("ok   references, selectors, ports, probes, PDBs, cluster file, kustomization")


def main():
    docs = load()
    check(docs, "no manifests")
    check_refs(docs)
    check_settings(docs)
    validate_schemas(docs)
    print("all passed")


if __name__ == "__main__":
    main()
