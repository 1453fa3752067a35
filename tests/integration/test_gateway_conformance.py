"""S3 conformance of cairn-gateway, case by case after the independent suites
that judge S3 implementations: each test is named after the ceph/s3-tests
case (s3tests_boto3/functional/test_s3.py, test_headers.py) whose behaviour
it checks, and expects what AWS S3 answers (status, error code, headers,
XML shapes). docs/s3-compat.md lists what is covered and what differs."""
import base64
import datetime
import hashlib
import itertools
import os
import re
import socket
import sys
import urllib.parse
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check, error_code, run_tests  # noqa: E402

_names = itertools.count()


def new_bucket(c, keys=()):
    """A fresh bucket holding keys (each object's body is its key). The
    client presigns with SigV4 (boto3's default presigner is SigV2)."""
    s3 = c.boto(signature_version="s3v4")
    name = "conf-%d" % next(_names)
    s3.create_bucket(Bucket=name)
    for k in keys:
        s3.put_object(Bucket=name, Key=k, Body=k.encode())
    return s3, name


def with_headers(s3, op, headers, fn, *args, **kw):
    """Calls fn with extra request headers on operation op, the way s3-tests
    does (a before-call hook on the request's header dict)."""
    def add(params, **_):
        params["headers"].update(headers)
    event = "before-call.s3.%s" % op
    s3.meta.events.register(event, add, unique_id="conf-headers")
    try:
        return fn(*args, **kw)
    finally:
        s3.meta.events.unregister(event, unique_id="conf-headers")


def keys_of(resp):
    return [o["Key"] for o in resp.get("Contents", [])]


def prefixes_of(resp):
    return [p["Prefix"] for p in resp.get("CommonPrefixes", [])]


def headers_of(resp):
    return resp["ResponseMetadata"]["HTTPHeaders"]


def raw_get(c, path):
    """An unsigned GET; returns (status, headers, body)."""
    try:
        with urllib.request.urlopen(c.url + path, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


# ---- listings --------------------------------------------------------------

def validate_list(s3, bucket, prefix, delim, marker, max_keys, truncated, objs, prefixes,
                  next_marker):
    r = s3.list_objects(Bucket=bucket, Delimiter=delim, Marker=marker, MaxKeys=max_keys,
                        Prefix=prefix)
    check(r["IsTruncated"] == truncated, "truncated %r" % r)
    check(r.get("NextMarker") == next_marker, "NextMarker %r want %r" % (r.get("NextMarker"),
                                                                         next_marker))
    check(keys_of(r) == objs and prefixes_of(r) == prefixes, "page %r" % r)
    return r.get("NextMarker")


def validate_listv2(s3, bucket, prefix, delim, token, max_keys, truncated, objs, prefixes,
                    last=False):
    params = dict(Bucket=bucket, Delimiter=delim, MaxKeys=max_keys, Prefix=prefix)
    if token is not None:
        params["ContinuationToken"] = token
    else:
        params["StartAfter"] = ""
    r = s3.list_objects_v2(**params)
    check(r["IsTruncated"] == truncated, "truncated %r" % r)
    if last:
        check("NextContinuationToken" not in r, "token on last page %r" % r)
    check(keys_of(r) == objs and prefixes_of(r) == prefixes, "page %r" % r)
    check(r["KeyCount"] == len(objs) + len(prefixes), "KeyCount %r" % r)
    return r.get("NextContinuationToken")


def test_bucket_list_delimiter_prefix(c):
    s3, b = new_bucket(c, ["asdf", "boo/bar", "boo/baz/xyzzy", "cquux/thud", "cquux/bla"])
    m = validate_list(s3, b, "", "/", "", 1, True, ["asdf"], [], "asdf")
    m = validate_list(s3, b, "", "/", m, 1, True, [], ["boo/"], "boo/")
    validate_list(s3, b, "", "/", m, 1, False, [], ["cquux/"], None)
    m = validate_list(s3, b, "", "/", "", 2, True, ["asdf"], ["boo/"], "boo/")
    validate_list(s3, b, "", "/", m, 2, False, [], ["cquux/"], None)
    m = validate_list(s3, b, "boo/", "/", "", 1, True, ["boo/bar"], [], "boo/bar")
    validate_list(s3, b, "boo/", "/", m, 1, False, [], ["boo/baz/"], None)
    validate_list(s3, b, "boo/", "/", "", 2, False, ["boo/bar"], ["boo/baz/"], None)


def test_bucket_listv2_delimiter_prefix(c):
    s3, b = new_bucket(c, ["asdf", "boo/bar", "boo/baz/xyzzy", "cquux/thud", "cquux/bla"])
    t = validate_listv2(s3, b, "", "/", None, 1, True, ["asdf"], [])
    t = validate_listv2(s3, b, "", "/", t, 1, True, [], ["boo/"])
    validate_listv2(s3, b, "", "/", t, 1, False, [], ["cquux/"], last=True)
    t = validate_listv2(s3, b, "", "/", None, 2, True, ["asdf"], ["boo/"])
    validate_listv2(s3, b, "", "/", t, 2, False, [], ["cquux/"], last=True)
    t = validate_listv2(s3, b, "boo/", "/", None, 1, True, ["boo/bar"], [])
    validate_listv2(s3, b, "boo/", "/", t, 1, False, [], ["boo/baz/"], last=True)


def test_bucket_list_delimiter_prefix_ends_with_delimiter(c):
    s3, b = new_bucket(c, ["asdf/"])
    validate_list(s3, b, "asdf/", "/", "", 1000, False, ["asdf/"], [], None)
    validate_listv2(s3, b, "asdf/", "/", None, 1000, False, ["asdf/"], [], last=True)


def test_bucket_list_delimiter_alt(c):
    s3, b = new_bucket(c, ["bar", "baz", "cab", "foo"])
    for v2 in (False, True):
        r = (s3.list_objects_v2 if v2 else s3.list_objects)(Bucket=b, Delimiter="a")
        check(r["Delimiter"] == "a", "Delimiter echoed")
        check(keys_of(r) == ["foo"] and prefixes_of(r) == ["ba", "ca"], "alt %r" % r)


def test_bucket_list_delimiter_prefix_underscore(c):
    s3, b = new_bucket(c, ["_obj1_", "_under1/bar", "_under1/baz/xyzzy", "_under2/thud",
                           "_under2/bla"])
    m = validate_list(s3, b, "", "/", "", 1, True, ["_obj1_"], [], "_obj1_")
    m = validate_list(s3, b, "", "/", m, 1, True, [], ["_under1/"], "_under1/")
    validate_list(s3, b, "", "/", m, 1, False, [], ["_under2/"], None)


def test_bucket_list_delimiter_multichar_and_special(c):
    """test_bucket_list_delimiter_percentage / _whitespace / _dot /
    _unreadable / _not_exist / _empty / _none."""
    s3, b = new_bucket(c, ["b%ar", "b%az", "c%ab", "foo", "b ar2", "c ab2", "b.ar3", "c.ab3",
                           "b\nar4"])
    r = s3.list_objects(Bucket=b, Delimiter="%")
    check(prefixes_of(r) == ["b%", "c%"], "percentage %r" % prefixes_of(r))
    r = s3.list_objects(Bucket=b, Delimiter=" ")
    check(prefixes_of(r) == ["b ", "c "], "whitespace %r" % prefixes_of(r))
    r = s3.list_objects(Bucket=b, Delimiter=".")
    check(prefixes_of(r) == ["b.", "c."], "dot %r" % prefixes_of(r))
    r = s3.list_objects(Bucket=b, Delimiter="\n")
    check(prefixes_of(r) == ["b\n"], "unreadable %r" % prefixes_of(r))
    r = s3.list_objects(Bucket=b, Delimiter="/")
    check(prefixes_of(r) == [] and len(keys_of(r)) == 9, "not exist %r" % r)
    r = s3.list_objects(Bucket=b, Delimiter="")
    check(prefixes_of(r) == [] and len(keys_of(r)) == 9, "empty delimiter %r" % r)
    check(r.get("Delimiter", "") == "", "empty delimiter echoed %r" % r.get("Delimiter"))
    r = s3.list_objects(Bucket=b)
    check("Delimiter" not in r, "no Delimiter element without one")


def test_bucket_list_delimiter_not_skip_special(c):
    s3, b = new_bucket(c)
    for k in ["0/%d" % i for i in range(1000, 1010)] + ["1999", "1999#", "1999+", "2000"]:
        s3.put_object(Bucket=b, Key=k, Body=b"")
    r = s3.list_objects(Bucket=b, Delimiter="/")
    check(keys_of(r) == ["1999", "1999#", "1999+", "2000"], "keys %r" % keys_of(r))
    check(prefixes_of(r) == ["0/"], "prefixes")


def test_bucket_list_prefix_delimiter_alt(c):
    s3, b = new_bucket(c, ["bar", "bazar", "cab", "foo"])
    r = s3.list_objects(Bucket=b, Delimiter="a", Prefix="ba")
    check(r["Prefix"] == "ba" and r["Delimiter"] == "a", "echo")
    check(keys_of(r) == ["bar"] and prefixes_of(r) == ["baza"], "alt %r" % r)
    r = s3.list_objects(Bucket=b, Delimiter="d", Prefix="b")
    check(keys_of(r) == ["bar", "bazar"] and prefixes_of(r) == [], "delim not exist")
    r = s3.list_objects(Bucket=b, Delimiter="/", Prefix="y")
    check(keys_of(r) == [] and prefixes_of(r) == [], "prefix not exist")


def test_bucket_list_prefix_unreadable(c):
    """boto3 asks for encoding-type=url when a parameter is unreadable, and
    AWS then URL-encodes Prefix too (the API reference lists it; botocore
    does not decode it in ListObjects v1, so s3-tests' literal '\\n'
    expectation only holds on servers that leave Prefix unencoded)."""
    s3, b = new_bucket(c, ["foo/bar", "foo/baz", "quux", "\nx"])
    r = s3.list_objects(Bucket=b, Prefix="\n")
    check(urllib.parse.unquote_plus(r["Prefix"]) == "\n" and keys_of(r) == ["\nx"],
          "prefix \\n %r" % r)
    r = s3.list_objects_v2(Bucket=b, Prefix="\n")
    check(r["Prefix"] == "\n" and keys_of(r) == ["\nx"], "v2 prefix \\n %r" % r)


def test_bucket_list_maxkeys(c):
    """test_bucket_list_maxkeys_one / _zero / _none / _invalid."""
    s3, b = new_bucket(c, ["bar", "baz", "foo", "quxx"])
    r = s3.list_objects(Bucket=b, MaxKeys=1)
    check(r["IsTruncated"] and keys_of(r) == ["bar"], "one")
    check("NextMarker" not in r, "v1 NextMarker only with a delimiter (AWS)")
    r = s3.list_objects(Bucket=b, Marker="bar")
    check(not r["IsTruncated"] and keys_of(r) == ["baz", "foo", "quxx"], "rest")
    for v2 in (False, True):
        r = (s3.list_objects_v2 if v2 else s3.list_objects)(Bucket=b, MaxKeys=0)
        check(not r["IsTruncated"] and keys_of(r) == [] and r["MaxKeys"] == 0, "zero %r" % r)
    r = s3.list_objects(Bucket=b)
    check(r["MaxKeys"] == 1000 and not r["IsTruncated"], "none")

    def bad_maxkeys(request, **kw):
        request.url = request.url.replace("max-keys=1", "max-keys=blah")
    s3.meta.events.register("before-sign.s3.ListObjects", bad_maxkeys)
    check(error_code(s3.list_objects, Bucket=b, MaxKeys=1) == ("InvalidArgument", 400),
          "invalid max-keys")


def test_bucket_list_marker(c):
    """test_bucket_list_marker_none / _empty / _unreadable / _not_in_list /
    _after_list and the v2 start-after counterparts."""
    s3, b = new_bucket(c, ["bar", "baz", "foo", "quxx"])
    r = s3.list_objects(Bucket=b)
    check(r.get("Marker") == "", "Marker element %r" % r.get("Marker"))
    r = s3.list_objects(Bucket=b, Marker="")
    check(r["Marker"] == "" and keys_of(r) == ["bar", "baz", "foo", "quxx"], "empty")
    r = s3.list_objects(Bucket=b, Marker="\n")
    check(r["Marker"] == "\n" and keys_of(r) == ["bar", "baz", "foo", "quxx"], "unreadable")
    r = s3.list_objects(Bucket=b, Marker="blah")
    check(r["Marker"] == "blah" and keys_of(r) == ["foo", "quxx"], "not in list")
    r = s3.list_objects(Bucket=b, Marker="zzz")
    check(r["Marker"] == "zzz" and keys_of(r) == [] and not r["IsTruncated"], "after list")
    r = s3.list_objects_v2(Bucket=b, StartAfter="blah")
    check(r["StartAfter"] == "blah" and keys_of(r) == ["foo", "quxx"], "v2 not in list")
    r = s3.list_objects_v2(Bucket=b, StartAfter="zzz")
    check(keys_of(r) == [] and not r["IsTruncated"] and r["KeyCount"] == 0, "v2 after")


def test_bucket_listv2_continuationtoken_empty(c):
    s3, b = new_bucket(c, ["bar", "baz", "foo", "quxx"])
    r = s3.list_objects_v2(Bucket=b, ContinuationToken="")
    check(r["ContinuationToken"] == "" and keys_of(r) == ["bar", "baz", "foo", "quxx"],
          "empty token %r" % r)


def test_bucket_listv2_both_continuationtoken_startafter(c):
    s3, b = new_bucket(c, ["bar", "baz", "foo", "quxx"])
    r1 = s3.list_objects_v2(Bucket=b, StartAfter="bar", MaxKeys=1)
    check(keys_of(r1) == ["baz"] and r1["IsTruncated"], "first")
    r2 = s3.list_objects_v2(Bucket=b, StartAfter="bar",
                            ContinuationToken=r1["NextContinuationToken"])
    check(r2["StartAfter"] == "bar" and keys_of(r2) == ["foo", "quxx"], "both %r" % r2)
    check(r2["ContinuationToken"] == r1["NextContinuationToken"], "token echoed")


def test_bucket_listv2_fetchowner(c):
    """test_bucket_listv2_fetchowner_notempty / _defaultempty / _empty."""
    s3, b = new_bucket(c, ["foo/bar", "foo/baz", "quux"])
    r = s3.list_objects_v2(Bucket=b, FetchOwner=True)
    check("Owner" in r["Contents"][0], "owner with fetch-owner")
    r = s3.list_objects_v2(Bucket=b)
    check("Owner" not in r["Contents"][0], "no owner by default")
    r = s3.list_objects_v2(Bucket=b, FetchOwner=False)
    check("Owner" not in r["Contents"][0], "no owner when false")


def test_bucket_list_return_data(c):
    s3, b = new_bucket(c, ["bar", "baz", "foo"])
    r = s3.list_objects(Bucket=b)
    for o in r["Contents"]:
        h = s3.head_object(Bucket=b, Key=o["Key"])
        check(o["ETag"] == h["ETag"] and o["Size"] == h["ContentLength"], "etag/size")
        check(o["Owner"]["ID"] == "cairn-dev" and o["Owner"]["DisplayName"] == "cairn", "owner")
        check(o["StorageClass"] == "STANDARD", "storage class")
        check(abs((o["LastModified"] - h["LastModified"]).total_seconds()) < 1, "mtime")


def test_bucket_list_encoding_basic(c):
    s3, b = new_bucket(c, ["foo+1/bar", "foo/bar/xyzzy", "quux ab/thud", "asdf+b"])
    for v2 in (False, True):
        fn = s3.list_objects_v2 if v2 else s3.list_objects
        r = fn(Bucket=b, Delimiter="/", EncodingType="url")
        check(r["Delimiter"] == "/", "delimiter")
        check(keys_of(r) == ["asdf%2Bb"], "keys %r" % keys_of(r))
        check(prefixes_of(r) == ["foo%2B1/", "foo/", "quux%20ab/"], "prefixes %r" % r)


def test_bucket_list_encoding_url_elements(c):
    """encoding-type=url also encodes Prefix, Delimiter, Marker/StartAfter and
    NextMarker (AWS ListObjects reference); the v2 token is opaque."""
    s3, b = new_bucket(c, ["a b/1", "a b/2", "a b/3"])

    def raw_list(query):
        resp = s3.list_objects(Bucket=b, **query)
        return resp
    # boto3 decodes the url-encoded fields it knows; read the raw XML instead
    url = s3.generate_presigned_url("list_objects", Params={
        "Bucket": b, "Prefix": "a b/", "Delimiter": "/", "Marker": "a b/1", "MaxKeys": 1,
        "EncodingType": "url"})
    st, _, body = raw_get(c, url[len(c.url):])
    check(st == 200, "status %d %r" % (st, body))
    for el in (b"<Prefix>a%20b/</Prefix>", b"<Marker>a%20b/1</Marker>",
               b"<NextMarker>a%20b/2</NextMarker>", b"<Key>a%20b/2</Key>",
               b"<Delimiter>/</Delimiter>", b"<EncodingType>url</EncodingType>"):
        check(el in body, "%r in %r" % (el, body))
    del raw_list


def test_bucket_list_invalid_encoding_type(c):
    s3, b = new_bucket(c)

    def bad(request, **kw):
        request.url = request.url.replace("encoding-type=url", "encoding-type=xml")
    s3.meta.events.register("before-sign.s3.ListObjects", bad)
    check(error_code(s3.list_objects, Bucket=b, EncodingType="url") == ("InvalidArgument", 400),
          "encoding-type=xml")


def test_bucket_list_long_name_and_special_prefix(c):
    """test_bucket_list_long_name, test_bucket_list_special_prefix."""
    s3 = c.boto()
    name = "conf-long-" + "a" * 53
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="foo", Body=b"")
    check(keys_of(s3.list_objects(Bucket=name)) == ["foo"], "long name")
    s3b, b = new_bucket(c, ["_bla/1", "_bla/2", "_bla/3", "_bla/4", "abcd"])
    r = s3b.list_objects(Bucket=b, Prefix="_bla/")
    check(len(keys_of(r)) == 4, "special prefix")


def test_bucket_list_empty_shapes(c):
    """test_bucket_list_empty: the XML of an empty listing (v1 and v2)."""
    s3, b = new_bucket(c)
    url = s3.generate_presigned_url("list_objects_v2", Params={"Bucket": b})
    st, h, body = raw_get(c, url[len(c.url):])
    check(st == 200 and h.get("Content-Type") == "application/xml", "status %d %r" % (st, h))
    check(b"<Contents>" not in body and b"<KeyCount>0</KeyCount>" in body, "v2 empty %r" % body)
    check(b"<IsTruncated>false</IsTruncated>" in body, "v2 truncated")
    r = s3.list_objects(Bucket=b)
    check("Contents" not in r and r["IsTruncated"] is False and r["Name"] == b, "v1 empty")


def test_list_object_versions_unversioned(c):
    """ListObjectVersions of a bucket that was never versioned: each object is
    its only version "null" (IsLatest), as S3 lists it. This is the cleanup
    path of s3-tests itself (functional/__init__.py list_versions() and
    nuke_bucket(): list_object_versions pages, delete_objects with VersionId,
    then delete_bucket), so without it every s3-tests case errors in teardown."""
    s3, b = new_bucket(c, ["a", "b", "d/1", "d/2", "e"])
    batches, kwargs = [], {"Bucket": b, "MaxKeys": 2}
    while True:  # the s3-tests generator, verbatim in behaviour
        listing = s3.list_object_versions(**kwargs)
        kwargs["KeyMarker"] = listing.get("NextKeyMarker")
        kwargs["VersionIdMarker"] = listing.get("NextVersionIdMarker")
        objs = listing.get("Versions", []) + listing.get("DeleteMarkers", [])
        check(all(o["VersionId"] == "null" and o["IsLatest"] for o in objs), "%r" % objs)
        batches.append([{"Key": o["Key"], "VersionId": o["VersionId"]} for o in objs])
        if not listing["IsTruncated"]:
            break
    check([o["Key"] for bt in batches for o in bt] == ["a", "b", "d/1", "d/2", "e"],
          "pages %r" % batches)
    v = s3.list_object_versions(Bucket=b, Delimiter="/")
    check([o["Key"] for o in v["Versions"]] == ["a", "b", "e"] and
          [p["Prefix"] for p in v["CommonPrefixes"]] == ["d/"], "delimiter %r" % v)
    h = s3.head_object(Bucket=b, Key="a")
    check(v["Versions"][0]["ETag"] == h["ETag"] and v["Versions"][0]["Size"] == 1, "entry")
    check(s3.get_object(Bucket=b, Key="a", VersionId="null")["Body"].read() == b"a",
          "versionId=null is the object")
    s3.copy_object(Bucket=b, Key="a", CopySource={"Bucket": b, "Key": "b", "VersionId": "null"})
    check(s3.get_object(Bucket=b, Key="a")["Body"].read() == b"b", "copy from version null")
    check(error_code(s3.copy_object, Bucket=b, Key="a",
                     CopySource={"Bucket": b, "Key": "b", "VersionId": "3HL4kqtJlcpX"}) ==
          ("InvalidArgument", 400), "copy from another version")
    check(error_code(s3.get_object, Bucket=b, Key="a", VersionId="3HL4kqtJlcpXroDTDmJ") ==
          ("InvalidArgument", 400), "other version id")
    for bt in batches:
        r = s3.delete_objects(Bucket=b, Delete={"Objects": bt, "Quiet": True},
                              BypassGovernanceRetention=True)
        check("Errors" not in r, "delete %r" % r)
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "x", "VersionId": "nope"}]})
    check(r["Errors"][0]["Code"] == "NoSuchVersion", "bad version %r" % r)
    s3.delete_bucket(Bucket=b)


# ---- buckets ---------------------------------------------------------------

def test_bucket_create_naming(c):
    """test_bucket_create_naming_bad_* / good_*: S3's bucket name rules."""
    s3 = c.boto()
    for bad in ["a", "ab", "a" * 64, "Abc", "abc_def", "abc-", "-abc", "abc.", ".abc",
                "a..b", "a.-b", "a-.b", "192.168.5.123", "xn--abc", "abc-s3alias"]:
        check(error_code(s3.create_bucket, Bucket=bad) == ("InvalidBucketName", 400),
              "bad %r" % bad)
    for good in ["abc", "a" * 63, "a.b.c", "a-b-c", "0abc", "abc9"]:
        s3.create_bucket(Bucket=good)
        s3.delete_bucket(Bucket=good)


def test_bucket_notexist(c):
    """test_bucket_notexist, test_bucket_delete_notexist,
    test_object_write_to_nonexist_bucket, test_object_delete_key_bucket_gone,
    test_object_raw_get_bucket_gone."""
    s3 = c.boto()
    check(error_code(s3.list_objects, Bucket="conf-nope") == ("NoSuchBucket", 404), "list")
    check(error_code(s3.list_objects_v2, Bucket="conf-nope") == ("NoSuchBucket", 404), "list2")
    check(error_code(s3.delete_bucket, Bucket="conf-nope") == ("NoSuchBucket", 404), "delete")
    check(error_code(s3.put_object, Bucket="conf-nope", Key="foo", Body=b"x") ==
          ("NoSuchBucket", 404), "put")
    check(error_code(s3.delete_object, Bucket="conf-nope", Key="foo") ==
          ("NoSuchBucket", 404), "delete object")
    check(error_code(s3.get_object, Bucket="conf-nope", Key="foo") ==
          ("NoSuchBucket", 404), "get object")
    check(error_code(s3.head_bucket, Bucket="conf-nope") == ("404", 404), "head")


def test_bucket_recreate_not_overriding(c):
    s3, b = new_bucket(c, ["mykey1", "mykey2"])
    s3.create_bucket(Bucket=b)   # us-east-1: the owner's re-create is 200 (as S3)
    check(keys_of(s3.list_objects(Bucket=b)) == ["mykey1", "mykey2"], "kept")


def test_bucket_get_location(c):
    s3, b = new_bucket(c)
    r = s3.get_bucket_location(Bucket=b)
    check(r.get("LocationConstraint") in (None, ""), "us-east-1 is empty %r" % r)
    check(error_code(s3.get_bucket_location, Bucket="conf-nope") == ("NoSuchBucket", 404),
          "missing")


def test_bucket_config_defaults(c):
    """What a bucket without a configuration answers: the first checks of
    test_versioning_bucket_create_suspend (no Status), test_set_cors
    (NoSuchCORSConfiguration), test_set_bucket_tagging (NoSuchTagSet),
    test_get_bucket_encryption_s3 (ServerSideEncryptionConfigurationNotFound-
    Error), plus NoSuchBucketPolicy and NoSuchLifecycleConfiguration."""
    s3, b = new_bucket(c)
    r = s3.get_bucket_versioning(Bucket=b)
    check("Status" not in r and "MFADelete" not in r, "versioning %r" % r)
    for fn, code in ((s3.get_bucket_cors, "NoSuchCORSConfiguration"),
                     (s3.get_bucket_tagging, "NoSuchTagSet"),
                     (s3.get_bucket_policy, "NoSuchBucketPolicy"),
                     (s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration"),
                     (s3.get_bucket_encryption,
                      "ServerSideEncryptionConfigurationNotFoundError")):
        check(error_code(fn, Bucket=b) == (code, 404), "%s" % code)
    check(error_code(s3.get_bucket_versioning, Bucket="conf-nope") == ("NoSuchBucket", 404),
          "missing bucket first")
    # versioning can be set (test_gateway_versioning.py), MFA Delete cannot
    check(error_code(s3.put_bucket_versioning, Bucket=b, MFA="1 2",
                     VersioningConfiguration={"Status": "Enabled", "MFADelete": "Enabled"}) ==
          ("NotImplemented", 501), "put versioning with MFA delete")
    check("Status" not in s3.get_bucket_versioning(Bucket=b), "left unset")
    # what S3 answers a new bucket
    for fn, code in ((s3.get_bucket_website, "NoSuchWebsiteConfiguration"),
                     (s3.get_bucket_replication, "ReplicationConfigurationNotFoundError"),
                     (s3.get_object_lock_configuration, "ObjectLockConfigurationNotFoundError")):
        check(error_code(fn, Bucket=b) == (code, 404), "%s" % code)
    r = s3.get_bucket_logging(Bucket=b)
    check("LoggingEnabled" not in r, "logging %r" % r)
    r = s3.get_bucket_accelerate_configuration(Bucket=b)
    check("Status" not in r, "accelerate %r" % r)
    check(s3.get_bucket_request_payment(Bucket=b)["Payer"] == "BucketOwner", "payer")
    r = s3.get_bucket_notification_configuration(Bucket=b)
    check(not any(k.endswith("Configurations") for k in r), "notification %r" % r)
    # cairn's defaults (s3.default_object_ownership = ObjectWriter, as Ceph
    # RGW and MinIO): ACLs enabled, no public access block configuration
    r = s3.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"]
    check(r == [{"ObjectOwnership": "ObjectWriter"}], "ownership %r" % r)
    check(error_code(s3.get_public_access_block, Bucket=b) ==
          ("NoSuchPublicAccessBlockConfiguration", 404), "no public access block")
    check(error_code(s3.get_bucket_website, Bucket="conf-nope") == ("NoSuchBucket", 404),
          "missing bucket before the configuration")
    check(error_code(s3.put_bucket_request_payment, Bucket=b,
                     RequestPaymentConfiguration={"Payer": "Requester"}) ==
          ("NotImplemented", 501), "put request payment")


def test_get_obj_tagging_none(c):
    """test_get_obj_tagging on an object without tags, and DeleteObjectTagging:
    reading answers an empty TagSet and deleting 204; a missing key or bucket
    is NoSuchKey / NoSuchBucket (tags themselves: test_gateway_tagging.py)."""
    s3, b = new_bucket(c, ["k"])
    check(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"] == [], "empty tag set")
    r = s3.delete_object_tagging(Bucket=b, Key="k")
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "delete tags")
    check(error_code(s3.get_object_tagging, Bucket=b, Key="nope") == ("NoSuchKey", 404),
          "missing key")
    check(error_code(s3.get_object_tagging, Bucket="conf-nope", Key="k") ==
          ("NoSuchBucket", 404), "missing bucket")
    check(s3.get_object(Bucket=b, Key="k")["Body"].read() == b"k", "object untouched")


def test_bucket_create_bad_location(c):
    """test_bucket_create_exists variants: a LocationConstraint of another
    region is refused (the gateway serves one)."""
    s3 = c.boto()
    code = error_code(s3.create_bucket, Bucket="conf-eu",
                      CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    check(code == ("IllegalLocationConstraintException", 400), "eu %r" % (code,))


def test_list_buckets_anonymous_and_bad_auth(c):
    """test_list_buckets_anonymous, test_list_buckets_invalid_auth,
    test_list_buckets_bad_auth."""
    st, h, body = raw_get(c, "/")
    check(st == 403 and b"<Code>AccessDenied</Code>" in body, "anonymous %d" % st)
    bad = c.boto(access_key="AKIANOSUCHKEY0000000")
    check(error_code(bad.list_buckets) == ("InvalidAccessKeyId", 403), "invalid key")
    bad = c.boto(secret_key="wrong-secret")
    check(error_code(bad.list_buckets) == ("SignatureDoesNotMatch", 403), "bad secret")


# ---- objects ---------------------------------------------------------------

def test_object_write_check_etag(c):
    s3, b = new_bucket(c)
    r = s3.put_object(Bucket=b, Key="foo", Body=b"bar")
    check(r["ETag"] == '"37b51d194a7513e45b56f6524f2d51f2"', "etag %r" % r["ETag"])
    check(headers_of(r)["content-length"] == "0", "empty PUT answer")


def test_object_head_zero_bytes(c):
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="foo", Body=b"")
    r = s3.head_object(Bucket=b, Key="foo")
    check(r["ContentLength"] == 0, "length")
    check(r["ETag"] == '"d41d8cd98f00b204e9800998ecf8427e"', "empty etag")


def test_object_response_headers(c):
    """x-amz-request-id, Last-Modified (RFC 1123 GMT), ETag quoting,
    Accept-Ranges, Content-Length on GET/HEAD; RequestId in the error body
    equals the header (test_object_requestid_matches_header_on_error)."""
    s3, b = new_bucket(c, ["foo"])
    r = s3.get_object(Bucket=b, Key="foo")
    h = headers_of(r)
    check(re.fullmatch(r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT",
                       h["last-modified"]) is not None, "Last-Modified %r" % h["last-modified"])
    check(re.fullmatch(r'"[0-9a-f]{32}"', h["etag"]) is not None, "etag")
    check(h["accept-ranges"] == "bytes" and h["content-length"] == "3", "headers %r" % h)
    check(h.get("x-amz-request-id") and h.get("x-amz-id-2"), "ids")
    check(h["content-type"] == "binary/octet-stream", "default content type %r" % h)
    from botocore.exceptions import ClientError
    try:
        s3.get_object(Bucket=b, Key="nope")
        check(False, "no error")
    except ClientError as e:
        check(e.response["Error"]["Code"] == "NoSuchKey", "code")
        check(e.response["Error"].get("Key") == "nope", "Key in error %r" % e.response)
        check(e.response["ResponseMetadata"]["RequestId"] ==
              e.response["ResponseMetadata"]["HTTPHeaders"]["x-amz-request-id"], "request id")


def test_object_write_cache_control_expires(c):
    """test_object_write_cache_control, test_object_write_expires."""
    s3, b = new_bucket(c)
    exp = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    s3.put_object(Bucket=b, Key="foo", Body=b"x", CacheControl="public, max-age=14400",
                  Expires=exp, ContentLanguage="en", ContentDisposition="attachment")
    r = s3.get_object(Bucket=b, Key="foo")
    check(r["CacheControl"] == "public, max-age=14400", "cache control")
    check(headers_of(r)["expires"] == "Wed, 02 Jan 2030 03:04:05 GMT", "expires %r" %
          headers_of(r)["expires"])
    check(r["ContentLanguage"] == "en" and r["ContentDisposition"] == "attachment", "others")


def test_object_metadata(c):
    """test_object_set_get_metadata_none_to_good / _overwrite_to_empty,
    test_object_metadata_replaced_on_put, the 2 KiB user metadata limit."""
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="foo", Body=b"x", Metadata={"meta1": "mymeta"})
    check(s3.get_object(Bucket=b, Key="foo")["Metadata"] == {"meta1": "mymeta"}, "good")
    s3.put_object(Bucket=b, Key="foo", Body=b"x", Metadata={"meta1": ""})
    check(s3.get_object(Bucket=b, Key="foo")["Metadata"] == {"meta1": ""}, "empty value")
    s3.put_object(Bucket=b, Key="foo", Body=b"x")
    check(s3.get_object(Bucket=b, Key="foo")["Metadata"] == {}, "replaced on put")
    check(error_code(s3.put_object, Bucket=b, Key="big", Body=b"x",
                     Metadata={"m": "v" * 2100}) == ("MetadataTooLarge", 400), "2 KiB limit")


def test_object_storage_class(c):
    """x-amz-storage-class: S3's class names are accepted (one class is
    stored: listings say STANDARD), anything else is InvalidStorageClass."""
    s3, b = new_bucket(c)
    for sc in ("STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA"):
        s3.put_object(Bucket=b, Key="sc", Body=b"x", StorageClass=sc)
    check(error_code(s3.put_object, Bucket=b, Key="bad", Body=b"x", StorageClass="FOO") ==
          ("InvalidStorageClass", 400), "FOO")
    check(error_code(s3.copy_object, Bucket=b, Key="bad", CopySource={"Bucket": b, "Key": "sc"},
                     StorageClass="FOO") == ("InvalidStorageClass", 400), "copy FOO")
    check(keys_of(s3.list_objects_v2(Bucket=b)) == ["sc"], "nothing stored")


def test_object_sse_refused(c):
    """Server-side encryption is not implemented: a request asking for it
    (SSE-S3, SSE-KMS, SSE-C) is NotImplemented, never stored in the clear."""
    s3, b = new_bucket(c, ["src"])
    for kw in ({"ServerSideEncryption": "AES256"},
               {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": "k"},
               {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": "k" * 32}):
        check(error_code(s3.put_object, Bucket=b, Key="enc", Body=b"x", **kw) ==
              ("NotImplemented", 501), "put %r" % kw)
        check(error_code(s3.copy_object, Bucket=b, Key="enc",
                         CopySource={"Bucket": b, "Key": "src"}, **kw) ==
              ("NotImplemented", 501), "copy %r" % kw)
    check(keys_of(s3.list_objects_v2(Bucket=b)) == ["src"], "nothing stored")


def test_object_lock_refused(c):
    """Buckets here never have Object Lock: lock headers on a write are
    InvalidRequest as S3 answers for such a bucket (test_object_lock_put_obj_
    lock_invalid_bucket); lock-enabled buckets are NotImplemented."""
    s3, b = new_bucket(c)
    code = error_code(s3.put_object, Bucket=b, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE",
                      ObjectLockRetainUntilDate=datetime.datetime(2030, 1, 1))
    check(code == ("InvalidRequest", 400), "lock %r" % (code,))
    check(error_code(s3.create_bucket, Bucket="conf-locked", ObjectLockEnabledForBucket=True) ==
          ("NotImplemented", 501), "lock-enabled bucket")
    check(keys_of(s3.list_objects_v2(Bucket=b)) == [], "nothing stored")


def owner_only_acl(r, owner_id):
    """Is r (GetBucketAcl / GetObjectAcl) the owner's FULL_CONTROL alone?"""
    grants = r.get("Grants", [])
    return (r["Owner"]["ID"] == owner_id and len(grants) == 1 and
            grants[0]["Permission"] == "FULL_CONTROL" and
            grants[0]["Grantee"]["Type"] == "CanonicalUser" and
            grants[0]["Grantee"]["ID"] == owner_id)


def test_bucket_acl_default(c):
    """test_bucket_acl_default, test_object_acl_default and the canned
    private cases (test_bucket_acl_canned_private_to_private,
    test_object_acl_canned_bucketownerfullcontrol): with ACLs disabled, as
    S3's bucket-owner-enforced default, reading an ACL shows the owner's
    FULL_CONTROL and setting one is accepted only when it says the same."""
    s3, b = new_bucket(c, ["k"])
    owner = s3.list_buckets()["Owner"]["ID"]
    r = s3.get_bucket_acl(Bucket=b)
    check(owner_only_acl(r, owner), "bucket acl %r" % r)
    r = s3.get_object_acl(Bucket=b, Key="k")
    check(owner_only_acl(r, owner), "object acl %r" % r)
    check(error_code(s3.get_object_acl, Bucket=b, Key="nope") == ("NoSuchKey", 404),
          "acl of a missing key")
    check(error_code(s3.get_bucket_acl, Bucket="conf-nope") == ("NoSuchBucket", 404),
          "acl of a missing bucket")
    check(error_code(s3.get_object_acl, Bucket="conf-nope", Key="k") == ("NoSuchBucket", 404),
          "object acl in a missing bucket")
    s3.put_bucket_acl(Bucket=b, ACL="private")
    s3.put_object_acl(Bucket=b, Key="k", ACL="private")
    s3.put_object_acl(Bucket=b, Key="k", ACL="bucket-owner-full-control")
    check(error_code(s3.put_object_acl, Bucket=b, Key="nope", ACL="private") ==
          ("NoSuchKey", 404), "put acl of a missing key")
    check(owner_only_acl(s3.get_bucket_acl(Bucket=b), owner), "still owner only")


def test_acl_not_supported(c):
    """AccessControlListNotSupported (400) for any ACL beyond the owner's
    own, on ?acl and on writes, and nothing is written; CreateBucket answers
    InvalidBucketAclWithObjectOwnership (what S3 answers under bucket owner
    enforced, AWS's default for new buckets; cairn's default is ObjectWriter,
    so the bucket asks for it)."""
    s3, b = new_bucket(c, ["k"])
    s3.put_bucket_ownership_controls(
        Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    owner = s3.list_buckets()["Owner"]["ID"]
    nope = ("AccessControlListNotSupported", 400)
    check(error_code(s3.put_bucket_acl, Bucket=b, ACL="public-read") == nope, "bucket canned")
    check(error_code(s3.put_object_acl, Bucket=b, Key="k", ACL="public-read-write") == nope,
          "object canned")
    check(error_code(s3.put_object_acl, Bucket=b, Key="k",
                     GrantRead='uri="http://acs.amazonaws.com/groups/global/AllUsers"') == nope,
          "grant header")
    policy = {"Owner": {"ID": owner}, "Grants": [
        {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"},
         "Permission": "READ"}]}
    check(error_code(s3.put_bucket_acl, Bucket=b, AccessControlPolicy=policy) == nope,
          "xml acl")
    check(error_code(s3.put_object, Bucket=b, Key="pub", Body=b"x", ACL="public-read") == nope,
          "put object")
    check(error_code(s3.copy_object, Bucket=b, Key="cp", CopySource="%s/k" % b,
                     ACL="authenticated-read") == nope, "copy")
    check(error_code(s3.create_multipart_upload, Bucket=b, Key="mp", ACL="public-read") == nope,
          "multipart")
    check(keys_of(s3.list_objects_v2(Bucket=b)) == ["k"], "nothing written")
    check(s3.list_multipart_uploads(Bucket=b).get("Uploads", []) == [], "no upload")
    check(error_code(s3.create_bucket, Bucket="conf-public", ACL="public-read",
                     ObjectOwnership="BucketOwnerEnforced") ==
          ("InvalidBucketAclWithObjectOwnership", 400), "create bucket")
    check(error_code(s3.head_bucket, Bucket="conf-public")[1] == 404, "no bucket made")
    check(owner_only_acl(s3.get_object_acl(Bucket=b, Key="k"), owner), "acl unchanged")
    s3.put_object(Bucket=b, Key="own", Body=b"x", ACL="bucket-owner-full-control")
    check(s3.get_object(Bucket=b, Key="own")["Body"].read() == b"x", "owner acl write")


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli), bitwise: the reference for the gateway's ISA-L one."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def composite(algo, part_b64s):
    """S3's COMPOSITE multipart checksum, computed here independently: the
    checksum of the parts' raw checksums concatenated, base64, "-N"."""
    raw = b"".join(base64.b64decode(v) for v in part_b64s)
    if algo == "CRC32":
        d = zlib.crc32(raw).to_bytes(4, "big")
    elif algo == "CRC32C":
        d = crc32c(raw).to_bytes(4, "big")
    else:
        d = hashlib.new(algo.lower(), raw).digest()
    return "%s-%d" % (base64.b64encode(d).decode(), len(part_b64s))


def test_multipart_checksum_composite(c):
    """s3-tests test_multipart_checksum_sha256 / test_multipart_use_cksum_helper_*:
    an upload created with ChecksumAlgorithm gets each part's checksum back
    from UploadPart and ListParts, and Complete answers (and HEAD with
    ChecksumMode serves) the composite checksum "<base64>-N"."""
    s3, b = new_bucket(c)
    for algo in ("CRC32", "CRC32C", "SHA1", "SHA256"):
        key = "ck-" + algo
        u = s3.create_multipart_upload(Bucket=b, Key=key, ChecksumAlgorithm=algo)
        check(u.get("ChecksumAlgorithm") == algo, "create echoes %s: %r" % (algo, u))
        parts, sums = [], []
        for n, body in ((1, b"A" * (5 << 20)), (2, b"tail of " + algo.encode())):
            r = s3.upload_part(Bucket=b, Key=key, UploadId=u["UploadId"], PartNumber=n, Body=body,
                               ChecksumAlgorithm=algo)
            v = r.get("Checksum" + algo)
            check(v is not None, "part %d checksum echoed (%s)" % (n, algo))
            sums.append(v)
            parts.append({"PartNumber": n, "ETag": r["ETag"], "Checksum" + algo: v})
        lp = s3.list_parts(Bucket=b, Key=key, UploadId=u["UploadId"])
        check([p.get("Checksum" + algo) for p in lp["Parts"]] == sums, "list parts %s" % algo)
        check(lp.get("ChecksumAlgorithm") == algo, "list parts algorithm %s" % algo)
        want = composite(algo, sums)
        r = s3.complete_multipart_upload(Bucket=b, Key=key, UploadId=u["UploadId"],
                                         MultipartUpload={"Parts": parts})
        check(r.get("Checksum" + algo) == want, "complete %s: %r, want %s" % (algo, r, want))
        h = s3.head_object(Bucket=b, Key=key, ChecksumMode="ENABLED")
        check(h.get("Checksum" + algo) == want, "head %s: %r" % (algo, h))
        check("x-amz-checksum-algorithm" not in headers_of(h), "no algorithm header on the object")
    # the client's own composite value is checked (s3-tests sends one)
    u = s3.create_multipart_upload(Bucket=b, Key="ck-own", ChecksumAlgorithm="SHA256")
    r = s3.upload_part(Bucket=b, Key="ck-own", UploadId=u["UploadId"], PartNumber=1, Body=b"x",
                       ChecksumAlgorithm="SHA256")
    part = {"PartNumber": 1, "ETag": r["ETag"], "ChecksumSHA256": r["ChecksumSHA256"]}
    good = composite("SHA256", [r["ChecksumSHA256"]])
    bad = composite("SHA256", [base64.b64encode(hashlib.sha256(b"y").digest()).decode()])
    check(error_code(s3.complete_multipart_upload, Bucket=b, Key="ck-own", UploadId=u["UploadId"],
                     MultipartUpload={"Parts": [part]}, ChecksumSHA256=bad)[0] == "BadDigest",
          "wrong composite refused")
    r = s3.complete_multipart_upload(Bucket=b, Key="ck-own", UploadId=u["UploadId"],
                                     MultipartUpload={"Parts": [part]}, ChecksumSHA256=good)
    check(r.get("ChecksumSHA256") == good, "own composite %r" % r)


def test_multipart_checksum_refusals(c):
    """What an upload with a checksum algorithm refuses: a part checksum of
    another algorithm (InvalidRequest, the part is not stored), a Complete
    without a part's checksum (InvalidRequest) or with a wrong one
    (InvalidPart); an unknown algorithm is InvalidRequest; full-object
    checksums (and CRC64NVME, S3's only full-object one) are NotImplemented."""
    s3, b = new_bucket(c)
    u = s3.create_multipart_upload(Bucket=b, Key="k", ChecksumAlgorithm="SHA256")
    uid = u["UploadId"]
    code = error_code(s3.upload_part, Bucket=b, Key="k", UploadId=uid, PartNumber=1, Body=b"x",
                      ChecksumAlgorithm="CRC32")
    check(code == ("InvalidRequest", 400), "other algorithm %r" % (code,))
    check(s3.list_parts(Bucket=b, Key="k", UploadId=uid).get("Parts", []) == [], "not stored")
    r = s3.upload_part(Bucket=b, Key="k", UploadId=uid, PartNumber=1, Body=b"x",
                       ChecksumAlgorithm="SHA256")
    code = error_code(s3.complete_multipart_upload, Bucket=b, Key="k", UploadId=uid,
                      MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": r["ETag"]}]})
    check(code == ("InvalidRequest", 400), "missing part checksum %r" % (code,))
    wrong = base64.b64encode(hashlib.sha256(b"y").digest()).decode()
    code = error_code(s3.complete_multipart_upload, Bucket=b, Key="k", UploadId=uid,
                      MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": r["ETag"],
                                                  "ChecksumSHA256": wrong}]})
    check(code == ("InvalidPart", 400), "wrong part checksum %r" % (code,))
    check(error_code(s3.head_object, Bucket=b, Key="k")[1] == 404, "nothing completed")
    hdr = {"x-amz-checksum-algorithm": "MD4"}
    code = with_headers(s3, "CreateMultipartUpload", hdr, error_code, s3.create_multipart_upload,
                        Bucket=b, Key="k2")
    check(code == ("InvalidRequest", 400), "unknown algorithm %r" % (code,))
    hdr = {"x-amz-checksum-algorithm": "CRC64NVME", "x-amz-checksum-type": "COMPOSITE"}
    code = with_headers(s3, "CreateMultipartUpload", hdr, error_code, s3.create_multipart_upload,
                        Bucket=b, Key="k2")
    check(code == ("InvalidRequest", 400), "composite crc64nvme %r" % (code,))
    hdr = {"x-amz-checksum-algorithm": "SHA256", "x-amz-checksum-type": "FULL_OBJECT"}
    code = with_headers(s3, "CreateMultipartUpload", hdr, error_code, s3.create_multipart_upload,
                        Bucket=b, Key="k2")
    check(code == ("InvalidRequest", 400), "full object sha256 %r" % (code,))
    check([u["Key"] for u in s3.list_multipart_uploads(Bucket=b).get("Uploads", [])] == ["k"],
          "only the first upload exists")


def _crc_table(poly):
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (poly if c & 1 else 0)
        t.append(c)
    return t


_CRC32C_T = _crc_table(0x82F63B78)
_CRC64NVME_T = _crc_table(0x9A6C9329AC4BC9B5)


def crc_run(table, mask, data, crc=0):
    """A reflected CRC with init and xorout all ones, table-driven; crc is the
    value over the data before (so crc_run(t, m, b, crc_run(t, m, a)) is the
    CRC of a + b)."""
    c = crc ^ mask
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ mask


def test_multipart_checksum_full_object(c):
    """FULL_OBJECT checksums (CRC64NVME: the newer SDKs' default for
    multipart; CRC32, CRC32C): Complete answers the CRC of the whole object,
    combined from the parts' CRCs, and checks the client's value; per-part
    checksums are optional in the Complete request."""
    s3, b = new_bucket(c)
    body1, body2 = b"first part " * 500000, b"and the rest"
    whole = body1 + body2
    for algo, hdr in (("CRC64NVME", {"x-amz-checksum-algorithm": "CRC64NVME"}),
                      ("CRC32", {"x-amz-checksum-algorithm": "CRC32",
                                 "x-amz-checksum-type": "FULL_OBJECT"}),
                      ("CRC32C", {"x-amz-checksum-algorithm": "CRC32C",
                                  "x-amz-checksum-type": "FULL_OBJECT"})):
        if algo == "CRC32":
            c1 = zlib.crc32(body1)
            c2, cw = zlib.crc32(body2), zlib.crc32(body2, c1)
        else:
            t, mask = ((_CRC64NVME_T, (1 << 64) - 1) if algo == "CRC64NVME"
                       else (_CRC32C_T, 0xFFFFFFFF))
            c1 = crc_run(t, mask, body1)
            c2, cw = crc_run(t, mask, body2), crc_run(t, mask, body2, c1)
        width = 8 if algo == "CRC64NVME" else 4
        b64 = lambda v: base64.b64encode(v.to_bytes(width, "big")).decode()  # noqa: E731
        key = "full-" + algo
        u = with_headers(s3, "CreateMultipartUpload", hdr, s3.create_multipart_upload,
                         Bucket=b, Key=key)
        h = headers_of(u)
        check(h.get("x-amz-checksum-type") == "FULL_OBJECT", "type echoed %r" % h)
        parts = []
        for n, body, v in ((1, body1, c1), (2, body2, c2)):
            ph = {"x-amz-checksum-" + algo.lower(): b64(v)}
            r = with_headers(s3, "UploadPart", ph, s3.upload_part, Bucket=b, Key=key,
                             UploadId=u["UploadId"], PartNumber=n, Body=body)
            parts.append({"PartNumber": n, "ETag": r["ETag"]})
        want = b64(cw)
        bad = b64(cw ^ 1)
        code = with_headers(s3, "CompleteMultipartUpload", {"x-amz-checksum-" + algo.lower(): bad},
                            error_code, s3.complete_multipart_upload, Bucket=b, Key=key,
                            UploadId=u["UploadId"], MultipartUpload={"Parts": parts})
        check(code[0] == "BadDigest", "wrong whole-object value %s %r" % (algo, code))
        r = with_headers(s3, "CompleteMultipartUpload", {"x-amz-checksum-" + algo.lower(): want},
                         s3.complete_multipart_upload, Bucket=b, Key=key,
                         UploadId=u["UploadId"], MultipartUpload={"Parts": parts})
        # (this boto3 predates CRC64NVME: its model drops that element)
        check(algo == "CRC64NVME" or r.get("Checksum" + algo) == want,
              "complete answers %s: %r" % (algo, r))
        g = s3.get_object(Bucket=b, Key=key, ChecksumMode="ENABLED")
        gh = headers_of(g)
        check(g["Body"].read() == whole, "object %s" % algo)
        check(gh.get("x-amz-checksum-" + algo.lower()) == want,
              "full-object checksum %s: %r, want %s" % (algo, gh, want))
        check(gh.get("x-amz-checksum-type") == "FULL_OBJECT", "type %r" % gh)


def test_object_write_read_update_read_delete(c):
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="foo", Body=b"bar")
    check(s3.get_object(Bucket=b, Key="foo")["Body"].read() == b"bar", "read")
    s3.put_object(Bucket=b, Key="foo", Body=b"soup")
    check(s3.get_object(Bucket=b, Key="foo")["Body"].read() == b"soup", "update")
    r = s3.delete_object(Bucket=b, Key="foo")
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "204")
    check(error_code(s3.get_object, Bucket=b, Key="foo") == ("NoSuchKey", 404), "gone")
    check(error_code(s3.head_object, Bucket=b, Key="foo") == ("404", 404), "head gone")


def test_bucket_create_special_key_names(c):
    keys = [" ", '"', "$", "%", "&", "'", "<", ">", "_", "_ ", "_ _", "__", "a/../b", "./x",
            "x/.", "..", "a//b", "a?b", "a#b", "\u00e9t\u00e9", "\x01ctl"]
    s3, b = new_bucket(c, keys)
    got = keys_of(s3.list_objects(Bucket=b))
    check(got == sorted(keys, key=lambda k: k.encode()), "listed %r" % got)
    got = [urllib.parse.unquote_plus(k)
           for k in keys_of(s3.list_objects_v2(Bucket=b, EncodingType="url"))]
    check(got == sorted(keys, key=lambda k: k.encode()), "listed url %r" % got)
    for k in keys:
        check(s3.get_object(Bucket=b, Key=k)["Body"].read() == k.encode(), "get %r" % k)
        s3.delete_object(Bucket=b, Key=k)
    check(keys_of(s3.list_objects(Bucket=b)) == [], "all deleted")


def test_object_create_unreadable(c):
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="\n", Body=b"bar")
    check(s3.get_object(Bucket=b, Key="\n")["Body"].read() == b"bar", "newline key")


def test_object_read_unreadable(c):
    """A key that is not valid UTF-8: 400 InvalidURI, 'Couldn't parse the
    specified URI.'"""
    s3, b = new_bucket(c)
    r = c.raw(b"GET /" + b.encode() + b"/%ae%8a- HTTP/1.1\r\nHost: x\r\n"
              b"Connection: close\r\n\r\n")
    check(r.startswith(b"HTTP/1.1 400") and b"<Code>InvalidURI</Code>" in r, "raw %r" % r[:300])


def test_object_key_too_long(c):
    s3, b = new_bucket(c)
    check(error_code(s3.put_object, Bucket=b, Key="k" * 1025, Body=b"") ==
          ("KeyTooLongError", 400), "1025")
    s3.put_object(Bucket=b, Key="k" * 1024, Body=b"")


# ---- ranges ----------------------------------------------------------------

def test_ranged_request_response_code(c):
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="testobj", Body=b"testcontent")
    r = s3.get_object(Bucket=b, Key="testobj", Range="bytes=4-7")
    check(r["Body"].read() == b"cont" and r["ContentRange"] == "bytes 4-7/11", "4-7")
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 206, "206")
    r = s3.get_object(Bucket=b, Key="testobj", Range="bytes=4-")
    check(r["Body"].read() == b"content" and r["ContentRange"] == "bytes 4-10/11",
          "skip leading")
    r = s3.get_object(Bucket=b, Key="testobj", Range="bytes=-7")
    check(r["Body"].read() == b"content" and r["ContentRange"] == "bytes 4-10/11",
          "trailing")
    r = s3.get_object(Bucket=b, Key="testobj", Range="bytes=4-100")
    check(r["ContentRange"] == "bytes 4-10/11", "clamped end")


def test_ranged_request_invalid_range(c):
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="testobj", Body=b"testcontent")
    check(error_code(s3.get_object, Bucket=b, Key="testobj", Range="bytes=40-50") ==
          ("InvalidRange", 416), "beyond")
    s3.put_object(Bucket=b, Key="empty", Body=b"")
    check(error_code(s3.get_object, Bucket=b, Key="empty", Range="bytes=40-50") ==
          ("InvalidRange", 416), "empty object")


def test_ranged_request_checksum(c):
    """A ranged GET with x-amz-checksum-mode carries no whole-object checksum
    (AWS; SDKs that validate responses would fail)."""
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="k", Body=b"0123456789", ChecksumAlgorithm="CRC32")
    r = s3.get_object(Bucket=b, Key="k", ChecksumMode="ENABLED")
    check("ChecksumCRC32" in r, "whole object checksum")
    r = s3.get_object(Bucket=b, Key="k", ChecksumMode="ENABLED", Range="bytes=0-3")
    check("ChecksumCRC32" not in r and r["Body"].read() == b"0123", "range %r" % r)


# ---- conditionals ----------------------------------------------------------

def test_get_object_conditionals(c):
    """test_get_object_ifmatch_good/_failed, _ifnonematch_good/_failed,
    _ifmodifiedsince_good/_failed, _ifunmodifiedsince_good/_failed."""
    s3, b = new_bucket(c)
    etag = s3.put_object(Bucket=b, Key="foo", Body=b"bar")["ETag"]
    check(s3.get_object(Bucket=b, Key="foo", IfMatch=etag)["Body"].read() == b"bar", "ifmatch")
    check(error_code(s3.get_object, Bucket=b, Key="foo", IfMatch='"ABCORZ"') ==
          ("PreconditionFailed", 412), "ifmatch failed")
    s3.get_object(Bucket=b, Key="foo", IfNoneMatch='"ABCORZ"')
    check(error_code(s3.get_object, Bucket=b, Key="foo", IfNoneMatch=etag) ==
          ("304", 304), "ifnonematch")
    old = datetime.datetime(1994, 8, 1, tzinfo=datetime.timezone.utc)
    future = datetime.datetime(2100, 8, 1, tzinfo=datetime.timezone.utc)
    s3.get_object(Bucket=b, Key="foo", IfModifiedSince=old)
    check(error_code(s3.get_object, Bucket=b, Key="foo", IfModifiedSince=future) ==
          ("304", 304), "ifmodifiedsince failed")
    s3.get_object(Bucket=b, Key="foo", IfUnmodifiedSince=future)
    check(error_code(s3.get_object, Bucket=b, Key="foo", IfUnmodifiedSince=old) ==
          ("PreconditionFailed", 412), "ifunmodifiedsince failed")
    # a 304 carries the validators (RFC 7232 4.1) and no body
    r = send_raw(c, raw_signed(c, "GET", "/%s/foo" % b, headers={"If-None-Match": etag}))
    head = r.split(b"\r\n\r\n")[0].decode()
    check(r.startswith(b"HTTP/1.1 304") and ("\r\nETag: %s\r\n" % etag) in head and
          "\r\nLast-Modified: " in head and r.endswith(b"\r\n\r\n"), "304 %r" % r)


def test_put_object_conditionals(c):
    """test_put_object_ifnonmatch_nonexisted_good / _overwrite_existed_failed,
    test_put_object_ifmatch_good / _failed / _nonexisted_failed: S3's
    conditional writes (If-None-Match: * and If-Match on PutObject)."""
    s3, b = new_bucket(c)

    def put_if(key, body, name, value):
        return with_headers(s3, "PutObject", {name: value}, s3.put_object, Bucket=b, Key=key,
                            Body=body)
    put_if("foo", b"bar", "If-None-Match", "*")
    check(error_code(put_if, "foo", b"zar", "If-None-Match", "*") ==
          ("PreconditionFailed", 412), "if-none-match * on an existing key")
    check(s3.get_object(Bucket=b, Key="foo")["Body"].read() == b"bar", "unchanged")
    etag = s3.head_object(Bucket=b, Key="foo")["ETag"]
    put_if("foo", b"zar", "If-Match", etag)
    check(s3.get_object(Bucket=b, Key="foo")["Body"].read() == b"zar", "if-match good")
    check(error_code(put_if, "foo", b"war", "If-Match", etag) == ("PreconditionFailed", 412),
          "if-match failed")
    check(error_code(put_if, "nope", b"war", "If-Match", etag) == ("NoSuchKey", 404),
          "if-match on a missing key")
    check(s3.get_object(Bucket=b, Key="foo")["Body"].read() == b"zar", "unchanged after")
    put_if("foo", b"war", "If-None-Match", '"ABCORZ"')  # an ETag list that does not match
    big = os.urandom(6 << 20)  # over large_object.threshold: the chunked path
    check(error_code(put_if, "foo", big, "If-None-Match", "*") ==
          ("PreconditionFailed", 412), "large if-none-match *")
    check(s3.get_object(Bucket=b, Key="foo")["Body"].read() == b"war", "large refused")
    put_if("big", big, "If-None-Match", "*")
    check(s3.head_object(Bucket=b, Key="big")["ContentLength"] == len(big), "large created")


# ---- copy ------------------------------------------------------------------

def test_object_copy(c):
    """test_object_copy_zero_size, _same_bucket, _diff_bucket,
    _verify_contenttype, _retaining_metadata, _replacing_metadata."""
    s3, b = new_bucket(c)
    s3b, b2 = new_bucket(c)
    s3.put_object(Bucket=b, Key="foo123bar", Body=b"foo", ContentType="text/bla",
                  Metadata={"key1": "value1"})
    r = s3.copy_object(Bucket=b, Key="bar321foo", CopySource={"Bucket": b, "Key": "foo123bar"})
    check(r["CopyObjectResult"]["ETag"] == '"acbd18db4cc2f85cedef654fccc4a4d8"', "etag")
    g = s3.get_object(Bucket=b, Key="bar321foo")
    check(g["Body"].read() == b"foo" and g["ContentType"] == "text/bla", "same bucket")
    check(g["Metadata"] == {"key1": "value1"}, "retained")
    s3.copy_object(Bucket=b2, Key="x", CopySource={"Bucket": b, "Key": "foo123bar"},
                   MetadataDirective="REPLACE", ContentType="text/new", Metadata={"k": "v"})
    g = s3.get_object(Bucket=b2, Key="x")
    check(g["ContentType"] == "text/new" and g["Metadata"] == {"k": "v"}, "replaced")
    s3.put_object(Bucket=b, Key="zero", Body=b"")
    s3.copy_object(Bucket=b, Key="zero2", CopySource={"Bucket": b, "Key": "zero"})
    check(s3.get_object(Bucket=b, Key="zero2")["ContentLength"] == 0, "zero size")


def test_object_copy_to_itself(c):
    s3, b = new_bucket(c, ["foo123bar"])
    code = error_code(s3.copy_object, Bucket=b, Key="foo123bar",
                      CopySource={"Bucket": b, "Key": "foo123bar"})
    check(code == ("InvalidRequest", 400), "to itself %r" % (code,))
    s3.copy_object(Bucket=b, Key="foo123bar", CopySource={"Bucket": b, "Key": "foo123bar"},
                   MetadataDirective="REPLACE", Metadata={"foo": "bar"})
    check(s3.head_object(Bucket=b, Key="foo123bar")["Metadata"] == {"foo": "bar"},
          "to itself with metadata")


def test_object_copy_not_found(c):
    """test_object_copy_key_not_found, test_object_copy_bucket_not_found."""
    s3, b = new_bucket(c)
    check(error_code(s3.copy_object, Bucket=b, Key="x",
                     CopySource={"Bucket": b, "Key": "nope"}) == ("NoSuchKey", 404), "key")
    check(error_code(s3.copy_object, Bucket=b, Key="x",
                     CopySource={"Bucket": "conf-nobucket", "Key": "k"}) ==
          ("NoSuchBucket", 404), "bucket")


def test_copy_object_conditionals(c):
    """test_copy_object_ifmatch_good / _failed, _ifnonematch_good / _failed."""
    s3, b = new_bucket(c)
    etag = s3.put_object(Bucket=b, Key="foo", Body=b"bar")["ETag"]
    src = {"Bucket": b, "Key": "foo"}
    s3.copy_object(Bucket=b, Key="bar", CopySource=src, CopySourceIfMatch=etag)
    check(error_code(s3.copy_object, Bucket=b, Key="bar", CopySource=src,
                     CopySourceIfMatch='"ABCORZ"') == ("PreconditionFailed", 412), "ifmatch")
    s3.copy_object(Bucket=b, Key="bar", CopySource=src, CopySourceIfNoneMatch='"ABCORZ"')
    check(error_code(s3.copy_object, Bucket=b, Key="bar", CopySource=src,
                     CopySourceIfNoneMatch=etag) == ("PreconditionFailed", 412), "ifnonematch")


# ---- multi-object delete ---------------------------------------------------

def test_multi_object_delete(c):
    """test_multi_object_delete, test_multi_objectv2_delete,
    test_multi_object_delete_key_limit."""
    s3, b = new_bucket(c, ["key0", "key1", "key2"])
    objs = [{"Key": k} for k in ("key0", "key1", "key2")]
    r = s3.delete_objects(Bucket=b, Delete={"Objects": objs})
    check(len(r["Deleted"]) == 3 and "Errors" not in r, "deleted %r" % r)
    check(keys_of(s3.list_objects(Bucket=b)) == [], "empty")
    r = s3.delete_objects(Bucket=b, Delete={"Objects": objs})
    check(len(r["Deleted"]) == 3, "again (missing keys are Deleted) %r" % r)
    many = [{"Key": "k%d" % i} for i in range(1001)]
    check(error_code(s3.delete_objects, Bucket=b, Delete={"Objects": many}) ==
          ("MalformedXML", 400), "1001 keys")


# ---- HTTP-level checks (test_headers.py) -----------------------------------

def test_object_create_bad_md5(c):
    """test_object_create_bad_md5_invalid_short / _bad / _empty."""
    s3, b = new_bucket(c)

    def with_md5(value):
        return with_headers(s3, "PutObject", {"Content-MD5": value}, error_code, s3.put_object,
                            Bucket=b, Key="foo", Body=b"bar")
    check(with_md5("YWJyYWNhZGFicmE=") == ("InvalidDigest", 400), "short")
    check(with_md5("rL0Y20zC+Fzt72VPzMSk2A==") == ("BadDigest", 400), "bad")
    check(with_md5("") == ("InvalidDigest", 400), "empty")
    check(error_code(s3.get_object, Bucket=b, Key="foo") == ("NoSuchKey", 404), "not stored")


def raw_signed(c, method, path, body=b"", headers=None, drop=()):
    """A header-signed request built by botocore and sent on a raw socket,
    so Content-Length and friends can be wrong on purpose."""
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    from s3util import ACCESS_KEY, SECRET_KEY
    h = dict(headers or {})
    req = AWSRequest(method=method, url=c.url + path, data=body, headers=h)
    S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", "us-east-1").add_auth(req)
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1:%d" % c.port]
    for k, v in req.headers.items():
        if k.lower() not in drop and k.lower() != "host":
            lines.append("%s: %s" % (k, v))
    return "\r\n".join(lines).encode() + b"\r\n"


def send_raw(c, head, body=b""):
    s = socket.create_connection(("127.0.0.1", c.port), timeout=10)
    try:
        s.sendall(head + b"Connection: close\r\n\r\n" + body)
        out = b""
        while True:
            d = s.recv(65536)
            if not d:
                return out
            out += d
    except socket.timeout:
        return out
    finally:
        s.close()


def test_object_create_bad_contentlength(c):
    """test_object_create_bad_contentlength_negative / _none / _empty,
    test_object_create_bad_contentlength_mismatch_below: 400s, 411."""
    s3, b = new_bucket(c)
    path = "/%s/foo" % b
    r = send_raw(c, raw_signed(c, "PUT", path, drop=("content-length",)) +
                 b"Content-Length: -1\r\n")
    check(r.startswith(b"HTTP/1.1 400"), "negative %r" % r[:200])
    r = send_raw(c, raw_signed(c, "PUT", path, drop=("content-length",)))
    check(r.startswith(b"HTTP/1.1 411") and b"MissingContentLength" in r, "none %r" % r[:300])
    r = send_raw(c, raw_signed(c, "PUT", path, drop=("content-length",)) +
                 b"Content-Length: \r\n")
    check(r.startswith(b"HTTP/1.1 400"), "empty %r" % r[:200])
    check(error_code(s3.get_object, Bucket=b, Key="foo") == ("NoSuchKey", 404), "not stored")


def test_object_write_with_chunked_transfer_encoding(c):
    s3, b = new_bucket(c)
    head = raw_signed(c, "PUT", "/%s/foo" % b, body=b"barsoup", drop=("content-length",))
    r = send_raw(c, head + b"Transfer-Encoding: chunked\r\n",
                 b"3\r\nbar\r\n4\r\nsoup\r\n0\r\n\r\n")
    check(r.startswith(b"HTTP/1.1 200"), "chunked %r" % r[:300])
    check(s3.get_object(Bucket=b, Key="foo")["Body"].read() == b"barsoup", "body")


def test_object_create_bad_authorization(c):
    """test_object_create_bad_authorization_empty / _none / _unreadable."""
    s3, b = new_bucket(c)
    path = "/%s/foo" % b
    for extra in (b"Authorization: \r\n", b"", b"Authorization: \x07\r\n"):
        r = send_raw(c, raw_signed(c, "PUT", path, drop=("authorization",)) + extra +
                     b"Content-Length: 0\r\n")
        check(r.startswith(b"HTTP/1.1 4") and b"<Code>" in r, "auth %r -> %r" % (extra, r[:300]))
        check(b"HTTP/1.1 403" in r[:20] or b"HTTP/1.1 400" in r[:20], "status")


def test_object_raw_presigned(c):
    """test_object_raw_get_x_amz_expires_not_expired / _out_range_zero /
    _out_max_range, test_object_presigned_put."""
    s3, b = new_bucket(c, ["foo"])
    url = s3.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "foo"},
                                    ExpiresIn=100)
    st, h, body = raw_get(c, url[len(c.url):])
    check(st == 200 and body == b"foo", "presigned get %d" % st)
    u = urllib.parse.urlsplit(url)
    q = urllib.parse.parse_qs(u.query)
    for bad in ("0", "604801"):
        q2 = dict(q)
        q2["X-Amz-Expires"] = [bad]
        st, h, body = raw_get(c, u.path + "?" + urllib.parse.urlencode(q2, doseq=True))
        check(st == 403 or st == 400, "expires %s: %d" % (bad, st))
    url = s3.generate_presigned_url("put_object", Params={"Bucket": b, "Key": "up"},
                                    ExpiresIn=100)
    req = urllib.request.Request(url, data=b"uploaded", method="PUT")
    with urllib.request.urlopen(req, timeout=10) as r:
        check(r.status == 200, "presigned put")
    check(s3.get_object(Bucket=b, Key="up")["Body"].read() == b"uploaded", "put stored")


def test_object_content_md5_and_checksums(c):
    """Content-MD5 and x-amz-checksum-* are verified and the checksum is
    returned with x-amz-checksum-mode: ENABLED."""
    s3, b = new_bucket(c)
    body = b"checksummed"
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    s3.put_object(Bucket=b, Key="k", Body=body, ContentMD5=md5, ChecksumAlgorithm="SHA256")
    r = s3.head_object(Bucket=b, Key="k", ChecksumMode="ENABLED")
    check(r.get("ChecksumSHA256") ==
          base64.b64encode(hashlib.sha256(body).digest()).decode(), "sha256 %r" % r)


def test_get_object_response_overrides(c):
    """test_object_raw_response_headers: response-* query parameters."""
    s3, b = new_bucket(c, ["foo"])
    url = s3.generate_presigned_url("get_object", Params={
        "Bucket": b, "Key": "foo", "ResponseContentType": "foo/bar",
        "ResponseContentDisposition": "bla", "ResponseContentLanguage": "esperanto",
        "ResponseContentEncoding": "aaa", "ResponseCacheControl": "no-cache",
        "ResponseExpires": "123"})
    st, h, body = raw_get(c, url[len(c.url):])
    check(st == 200 and h["Content-Type"] == "foo/bar" and
          h["Content-Disposition"] == "bla" and h["Content-Language"] == "esperanto" and
          h["Content-Encoding"] == "aaa" and h["Cache-Control"] == "no-cache" and
          h["Expires"] == "Thu, 01 Jan 1970 00:02:03 GMT", "overrides %r" % h)


# S3 reads are strongly consistent (read-after-write, also for overwrites
# and deletes). cairn is with R + W > N; the default R = 1 (W = 2, N = 3) is
# not: a GET right after an overwrite can reach the lagging replica
# (docs/cluster.md, docs/s3-compat.md). These cases check S3 behaviour, so
# they run with R = 2.
S3_CONSISTENT = {"settings": {"consistency.read": 2}}

if __name__ == "__main__":
    run_tests([v for k, v in sorted(globals().items()) if k.startswith("test_")],
              cluster_kw=S3_CONSISTENT)
