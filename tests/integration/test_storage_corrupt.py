"""A flipped byte in a container file is detected on read (CORRUPT naming the
key, never the bad bytes), slices away from the damage still read, and SCRUB
finds and lists the record (and logs it), with any number of scrub
threads."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snclient import StorageNode  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def flip_in_file(path, marker):
    with open(path, "r+b") as f:
        blob = f.read()
        at = blob.find(marker)
        check(at >= 0, "marker found in the container")
        f.seek(at + 10)
        f.write(bytes([blob[at + 10] ^ 0x01]))
    return at


def main():
    with StorageNode({"scrub_threads": 3}) as node:
        c = node.client()
        data = {}
        for i in range(20):
            data[b"obj/%d" % i] = os.urandom(50000 + i * 10000)
            check(c.put(b"obj/%d" % i, data[b"obj/%d" % i]).st == 0, "put")
        victim = b"obj/7"
        r = c.call("SCRUB")
        check(r.st == 0 and r["stats"]["corrupt"] == 0 and r["stats"]["records"] == 20, "clean scrub %r" % r)
        # flip one byte 100 KiB + 10 into the victim's data (its 2nd block)
        marker = data[victim][100000:100016]
        flip_in_file(node.container_files()[0], marker)
        r = c.get(victim)
        check(r.status == "CORRUPT" and r.payload is None, "read of damaged record: %r" % r)
        check("obj/7" in r["err"], "err names the key: %r" % r["err"])
        r = c.get(victim, off=0, length=65536)
        check(r.st == 0 and r.payload == data[victim][:65536], "undamaged block still reads")
        r = c.get(victim, off=100005, length=10)
        check(r.status == "CORRUPT", "slice over the damage")
        check(c.get(b"obj/8").payload == data[b"obj/8"], "neighbour intact")
        for _ in range(2):
            r = c.call("SCRUB")
            check(r.st == 0, "scrub %r" % r)
            check(r["stats"]["corrupt"] == 1 and r["stats"]["records"] == 20, "scrub counts %r" % r["stats"])
            check([e["key"] for e in r["ents"]] == [victim], "scrub lists the victim %r" % r["ents"])
            check(r["ents"][0]["size"] == len(data[victim]), "entry size")
        st = c.stats()
        check(st["corrupt_found"] >= 3 and st["scrub_corrupt"] >= 2, "counters %r" % st)
        check("corrupt record 'obj/7'" in node.log_text(), "scrub logs the key")
        # a damaged header: the record is reported, the records after it are still verified
        hdr_victim = b"obj/12"
        with open(node.container_files()[0], "r+b") as f:
            blob = f.read()
            # the key right after a fixed header (magic "CNR1" 56 bytes before
            # it): "obj/1" followed by a block CRC starting with "2" also
            # reads "obj/12" (1 run in 256 damaged obj/1 instead)
            at = blob.find(hdr_victim)
            while at >= 0 and blob[at - 56:at - 52] != b"CNR1":
                at = blob.find(hdr_victim, at + 1)
            check(at > 0, "key bytes in header")
            f.seek(at - 20)   # inside the fixed header (data_len)
            f.write(b"\xff")
        r = c.get(hdr_victim)
        check(r.status == "CORRUPT", "damaged header: %r" % r)
        r = c.call("SCRUB")
        keys = sorted(e["key"] for e in r["ents"])
        check(keys == sorted([victim, hdr_victim]), "scrub after header damage %r" % keys)
        check(r["stats"]["headers_corrupt"] == 1, "header damage counted")
        # overwrite both: dead damaged records are counted, not listed
        check(c.put(victim, b"fresh", ver=2).st == 0 and c.put(hdr_victim, b"fresh", ver=2).st == 0, "overwrite")
        r = c.call("SCRUB")
        check(r["ents"] == [] and r["stats"]["corrupt"] == 0, "no live corrupt records %r" % r)
        c.close()
    print("test_storage_corrupt: ok")


if __name__ == "__main__":
    main()
