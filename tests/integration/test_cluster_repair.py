"""Anti-entropy repair and cluster status with cairn-admin, on loopback: a
storage node loses its disk (stopped, data directory wiped, restarted
empty); `cairn-admin repair` refills it from the other replicas while a
client keeps reading and writing through the gateway; afterwards every
replica of every key agrees and `repair --dry-run` finds zero differences.
The gateway and cairn-admin both read the same cluster file."""
import os
import random
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_util import cluster, converged  # noqa: E402
from s3util import check  # noqa: E402
from snclient import admin_env  # noqa: E402

BIN = os.environ.get("CAIRN_BIN", "build/bin")


def admin(cluster_file, *args, timeout=300):
    p = subprocess.run([os.path.join(BIN, "cairn-admin"), "--cluster", cluster_file] +
                       list(args), capture_output=True, timeout=timeout, env=admin_env())
    return p.returncode, p.stdout.decode() + p.stderr.decode()


def all_storage_keys(cl):
    keys = set()
    for n in cl.nodes:
        c = n.client()
        after = None
        while True:
            f = {"prefix": b"", "limit": 1000, "flags": 1}
            if after is not None:
                f["after"] = after
            r = c.call("LIST", **f)
            check(r.st == 0, "LIST with tombstones: %r" % r)
            ents = r.get("ents") or []
            keys.update(e["key"] for e in ents)
            if not r.get("more"):
                break
            after = ents[-1]["key"]
        c.close()
    return sorted(keys)


def traffic(cl, stop, out):
    """PUTs and GETs of its own keys; counts errors and wrong bodies."""
    s3 = cl.boto()
    rnd = random.Random(7)
    mine = {}
    i = 0
    while not stop.is_set():
        k = "t%04d" % (i % 150)
        data = rnd.randbytes(rnd.randint(1, 4000))
        try:
            s3.put_object(Bucket="repair", Key=k, Body=data)
            mine[k] = data
            g = rnd.choice(sorted(mine))
            if s3.get_object(Bucket="repair", Key=g)["Body"].read() != mine[g]:
                out["wrong"] += 1
        except Exception as e:  # noqa: BLE001
            out["errors"] += 1
            out["last"] = repr(e)
        out["ops"] += 2
        i += 1


def main():
    # R = 1: the last check reads every object from the refilled node alone
    # (two nodes stopped), which a read quorum of 2 would rightly refuse
    with cluster(settings={"consistency.read": 1}) as cl:
        # the gateway reads a cluster file naming the nodes by id
        cf = os.path.join(cl.tmp, "cluster.conf")
        with open(cf, "w") as f:
            f.write("# test cluster\n")
            for i, n in enumerate(cl.nodes):
                f.write("node sn%d %s zone=z%d\n" % (i, n.endpoint, i))
        cl.proc.terminate()
        cl.proc.wait()
        cl.settings["cluster.file"] = cf
        cl.start()
        check("in zones" in cl.log_text(), "gateway did not read the cluster file")
        s3 = cl.boto()
        s3.create_bucket(Bucket="repair")
        rnd = random.Random(3)
        expect = {}
        for i in range(200):
            expect["o%03d" % i] = rnd.randbytes(rnd.randint(0, 30000))
            s3.put_object(Bucket="repair", Key="o%03d" % i, Body=expect["o%03d" % i])
        for i in range(0, 200, 10):
            s3.delete_object(Bucket="repair", Key="o%03d" % i)
            del expect["o%03d" % i]
        big = rnd.randbytes(6 << 20 | 12345)  # a chunked large object, if that path exists
        s3.put_object(Bucket="repair", Key="big", Body=big)
        expect["big"] = big

        rc, out = admin(cf, "status")
        print(out, end="")
        check(rc == 0 and out.count(" up ") == 3, "status: %s" % out)
        shares = [float(x.split("ring=")[1].split("%")[0]) for x in out.splitlines()]
        check(abs(sum(shares) - 100) < 0.5, "ring ownership does not add up: %r" % shares)

        # node 1 loses its disk
        lost = cl.nodes[1]
        lost.stop()
        rc, out = admin(cf, "status", "--timeout", "500")
        check(rc == 1 and "down" in out, "status with a node down: %s" % out)
        shutil.rmtree(lost.data_dir)
        lost.start()
        rc, out = admin(cf, "repair", "--dry-run")
        print(out, end="")
        before = int(out.split(" differences")[0].rsplit(" ", 1)[1])
        check(rc == 1 and before >= 150, "dry run should see the empty node: %s" % out)

        stop, stats = threading.Event(), {"ops": 0, "errors": 0, "wrong": 0, "last": None}
        th = threading.Thread(target=traffic, args=(cl, stop, stats))
        th.start()
        try:
            time.sleep(0.5)
            t0 = time.monotonic()
            rc, out = admin(cf, "repair")
            took = time.monotonic() - t0
            time.sleep(0.5)
        finally:
            stop.set()
            th.join()
        print(out, end="")
        check(rc == 0, "repair failed: %s" % out)
        print("   repair refilled the node in %.2fs while serving %d requests (%d errors, "
              "%d wrong bodies)" % (took, stats["ops"], stats["errors"], stats["wrong"]))
        check(stats["errors"] == 0 and stats["wrong"] == 0, "traffic during repair: %r" % stats)
        # the client's writes during the repair may have raced its listing:
        # a second pass settles them, then nothing differs
        admin(cf, "repair")
        rc, out = admin(cf, "repair", "--dry-run")
        print(out, end="")
        check(rc == 0 and " 0 differences" in out, "replicas still differ: %s" % out)
        keys = all_storage_keys(cl)
        diff = converged(cl, keys)
        check(not diff, "%d keys differ after repair, e.g. %r" % (len(diff), diff[:1]))
        print("   %d records identical on all 3 nodes" % len(keys))
        for k, data in expect.items():
            check(s3.get_object(Bucket="repair", Key=k)["Body"].read() == data, "GET " + k)
        # the refilled node alone serves every object
        for n in (cl.nodes[0], cl.nodes[2]):
            n.stop()
        try:
            for k, data in list(expect.items())[:50] + [("big", big)]:
                check(s3.get_object(Bucket="repair", Key=k)["Body"].read() == data,
                      "refilled node alone: GET " + k)
        finally:
            for n in (cl.nodes[0], cl.nodes[2]):
                n.start()
        print("ok   repair of a node that lost its disk")
    print("all passed")


if __name__ == "__main__":
    main()
