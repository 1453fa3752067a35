#!/usr/bin/env python3
"""Response header injection: the response-* overrides of a (presigned)
GetObject are echoed into headers, so a value with CR, LF, NUL or another
control byte must be refused (400 InvalidArgument) before anything is sent;
no Set-Cookie may ever appear and the connection must not desynchronise.
Tried by the owner, by a second account and anonymously."""
import os
import socket
import sys
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from secutil import accounts, check, run_tests  # noqa: E402

BUCKET = "hdrs"
OVERRIDES = ["ResponseContentDisposition", "ResponseContentType", "ResponseCacheControl",
             "ResponseContentLanguage", "ResponseContentEncoding"]  # (Expires: a date to boto3)
EVIL = ["a\r\nSet-Cookie: x=1", "a\nSet-Cookie: x=1", "a\rSet-Cookie: x=1", "a\x00b",
        "a\x01b", "a\x7fb", "\r\n\r\nHTTP/1.1 200 OK\r\nSet-Cookie: x=1\r\n"]


def raw_get(c, url, extra=b""):
    """GETs url (a presigned URL of c) on a fresh connection, followed by
    extra pipelined bytes; returns everything read until close or timeout."""
    u = urlsplit(url)
    target = u.path + ("?" + u.query if u.query else "")
    close = "" if extra else "Connection: close\r\n"
    req = ("GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (target, u.netloc, close)).encode() + extra
    return c.raw(req, timeout=3)


def presign(cl, **params):
    p = {"Bucket": BUCKET, "Key": "doc"}
    p.update(params)
    return cl.generate_presigned_url("get_object", Params=p, ExpiresIn=300)


def setup(c):
    a, _, _ = accounts(c)
    a.create_bucket(Bucket=BUCKET)
    a.put_object(Bucket=BUCKET, Key="doc", Body=b"hello", ContentType="text/plain")


def test_owner_injection_refused(c):
    """The owner's own presigned URL with a control byte in any override:
    400 InvalidArgument, no injected header, and a request pipelined behind
    it is answered as itself (or the connection is closed), never smuggled."""
    a, _, _ = accounts(c)
    health = b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    for name in OVERRIDES:
        for evil in EVIL:
            out = raw_get(c, presign(a, **{name: evil}), health)
            head = out.split(b"\r\n\r\n", 1)[0]
            check(out.startswith(b"HTTP/1.1 400 "), "%s=%r: %r" % (name, evil, out[:200]))
            check(b"<Code>InvalidArgument</Code>" in out, "%s=%r: code" % (name, evil))
            check(b"set-cookie" not in out.lower(), "%s=%r: injected: %r" % (name, evil, out))
            check(out.count(b"HTTP/1.1 ") <= 2, "%s=%r: extra responses" % (name, evil))
            check(b"\r\nContent-Disposition" not in head, "override echoed")


def test_others_refused(c):
    """B's presigned URL for A's object and an unsigned one, with an
    injection: refused, nothing injected."""
    a, b, anon = accounts(c)
    for who, cl in (("B", b), ("anonymous", anon)):
        for evil in EVIL[:2]:
            out = raw_get(c, presign(cl, ResponseContentDisposition=evil))
            check(out.startswith(b"HTTP/1.1 400 ") or out.startswith(b"HTTP/1.1 403 "),
                  "%s %r: %r" % (who, evil, out[:200]))
            check(b"set-cookie" not in out.lower(), "%s %r: injected" % (who, evil))
        out = raw_get(c, presign(cl))
        check(out.startswith(b"HTTP/1.1 403 "), "%s plain presigned GET: %r" % (who, out[:100]))


def test_good_overrides_kept(c):
    """Legitimate overrides (spaces, quotes, tabs, UTF-8 bytes) are served
    as given, and the connection stays usable."""
    a, _, _ = accounts(c)
    disp = 'attachment; filename="r\u00e9sum\u00e9 v1.txt"'
    url = presign(a, ResponseContentDisposition=disp, ResponseContentType="text/x-a\tb",
                  ResponseCacheControl="no-cache")
    out = raw_get(c, url, b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(out.startswith(b"HTTP/1.1 200 "), "good overrides: %r" % out[:200])
    check(("Content-Disposition: %s\r\n" % disp).encode() in out, "disposition: %r" % out)
    check(b"Content-Type: text/x-a\tb\r\n" in out, "type")
    check(b"Cache-Control: no-cache\r\n" in out, "cache-control")
    check(out.count(b"HTTP/1.1 200 ") == 2 and out.endswith(b"ok\n"), "pipelined health")


if __name__ == "__main__":
    run_tests([setup, test_owner_injection_refused, test_others_refused,
               test_good_overrides_kept], {"nodes": 1})
