// AWS SDK for JavaScript v3 (@aws-sdk/client-s3) against cairn-gateway, with
// the SDK's DEFAULT checksum behaviour: uploads carry a CRC32 trailer
// (STREAMING-UNSIGNED-PAYLOAD-TRAILER, aws-chunked), GetObject asks for and
// validates response checksums. Driven by tests/integration/test_gateway_jssdk.py:
//   node s3_sdk_v3.mjs <endpoint> <access key> <secret key>
// Prints "ok <step>" per step and exits non-zero on the first failure.
import { Readable } from "node:stream";
import { createHash } from "node:crypto";
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  S3Client,
  CreateBucketCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  PutObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  CopyObjectCommand,
  DeleteObjectsCommand,
  DeleteObjectCommand,
  DeleteBucketCommand,
} from "@aws-sdk/client-s3";

const [endpoint, accessKeyId, secretAccessKey] = process.argv.slice(2);
if (!endpoint || !accessKeyId || !secretAccessKey) {
  console.error("usage: s3_sdk_v3.mjs ENDPOINT ACCESS_KEY SECRET_KEY");
  process.exit(2);
}

const s3 = new S3Client({
  endpoint,
  region: "us-east-1",
  forcePathStyle: true,
  credentials: { accessKeyId, secretAccessKey },
  maxAttempts: 1,
  // requestChecksumCalculation / responseChecksumValidation left at their
  // defaults (WHEN_SUPPORTED): that is what real applications run with.
});

// Records the headers of every request the SDK sends, so the test can show
// which upload mode was really exercised.
const seen = [];
s3.middlewareStack.add(
  (next) => async (args) => {
    const h = args.request?.headers ?? {};
    seen.push({
      method: args.request?.method,
      path: args.request?.path,
      sha: h["x-amz-content-sha256"],
      trailer: h["x-amz-trailer"],
      encoding: h["content-encoding"],
      crc32: h["x-amz-checksum-crc32"],
      te: h["transfer-encoding"],
    });
    return next(args);
  },
  { step: "finalizeRequest", name: "cairnRecordHeaders", priority: "low" },
);

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
}

function md5(buf) {
  return createHash("md5").update(buf).digest("hex");
}

async function step(name, fn) {
  const t0 = Date.now();
  await fn();
  console.log("ok " + name + " (" + (Date.now() - t0) + " ms)");
}

// The SDK error name (and HTTP status) of a call that must fail.
async function errorOf(cmd) {
  try {
    await s3.send(cmd);
  } catch (e) {
    return { name: e.name, code: e.Code, status: e.$metadata?.httpStatusCode };
  }
  throw new Error(cmd.constructor.name + " did not fail");
}

async function body(out) {
  return Buffer.from(await out.Body.transformToByteArray());
}

const bucket = "jssdk-" + Date.now().toString(36);
const big = Buffer.alloc(3 * 1024 * 1024 + 12345);
for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
const small = Buffer.from("hello from the js sdk\n");

await step("CreateBucket", async () => {
  const r = await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  check(r.$metadata.httpStatusCode === 200, "status " + r.$metadata.httpStatusCode);
  await s3.send(new HeadBucketCommand({ Bucket: bucket }));
  const l = await s3.send(new ListBucketsCommand({}));
  check(l.Buckets.some((b) => b.Name === bucket), "ListBuckets has the bucket");
  check(l.Buckets.every((b) => b.CreationDate instanceof Date), "CreationDate parsed");
});

await step("PutObject string", async () => {
  const r = await s3.send(new PutObjectCommand({
    Bucket: bucket, Key: "dir/string.txt", Body: "a string body", ContentType: "text/plain",
    Metadata: { colour: "blue" },
  }));
  check(r.ETag === '"' + md5(Buffer.from("a string body")) + '"', "etag " + r.ETag);
  check(typeof r.ChecksumCRC32 === "string", "CRC32 echoed: " + JSON.stringify(r));
});

await step("PutObject Buffer", async () => {
  const r = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "dir/buffer.bin", Body: small }));
  check(r.ETag === '"' + md5(small) + '"', "etag");
});

await step("PutObject 3 MiB Buffer", async () => {
  const r = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "big.bin", Body: big }));
  check(r.ETag === '"' + md5(big) + '"', "etag");
});

await step("PutObject stream with length", async () => {
  const r = await s3.send(new PutObjectCommand({
    Bucket: bucket, Key: "dir/sub/stream.bin", Body: Readable.from([big.subarray(0, 100000), big.subarray(100000, 200000)]),
    ContentLength: 200000,
  }));
  check(r.ETag === '"' + md5(big.subarray(0, 200000)) + '"', "etag");
});

// A file stream: the SDK learns its length from the file and sends it as
// aws-chunked inside HTTP Transfer-Encoding: chunked.
await step("PutObject fs.ReadStream", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-jssdk-"));
  try {
    const path = join(dir, "body.bin");
    writeFileSync(path, big.subarray(0, 300000));
    const r = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "dir/sub/file.bin", Body: createReadStream(path) }));
    check(r.ETag === '"' + md5(big.subarray(0, 300000)) + '"', "etag");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const p = seen[seen.length - 1];
  check(p.te === "chunked" && p.encoding === "aws-chunked", "framing " + JSON.stringify(p));
});

// Buffers and strings are hashed up front (CRC32 in a header); streams go
// as aws-chunked with the CRC32 in a trailer.
await step("uploads carried CRC32 checksums", async () => {
  const puts = seen.filter((s) => s.method === "PUT" && s.path.replace(/\/$/, "") !== "/" + bucket);
  check(puts.length >= 4, "puts recorded " + puts.length);
  for (const p of puts)
    check(p.crc32 !== undefined || p.trailer === "x-amz-checksum-crc32", "crc32 " + JSON.stringify(p));
  const streamed = puts.filter((p) => p.sha === "STREAMING-UNSIGNED-PAYLOAD-TRAILER");
  check(streamed.length >= 1, "a trailer upload " + JSON.stringify(puts));
  check(streamed.every((p) => p.encoding === "aws-chunked"), "aws-chunked " + JSON.stringify(streamed));
});

await step("GetObject", async () => {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "dir/string.txt" }));
  check((await body(r)).toString() === "a string body", "body");
  check(r.ContentType === "text/plain", "content type " + r.ContentType);
  check(r.Metadata.colour === "blue", "metadata " + JSON.stringify(r.Metadata));
  check(r.LastModified instanceof Date, "LastModified");
  const g = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "big.bin" }));
  const b = await body(g);
  check(b.equals(big), "3 MiB body");
  check(g.ContentLength === big.length, "length");
  const s = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "dir/sub/stream.bin" }));
  check((await body(s)).equals(big.subarray(0, 200000)), "stream body");
});

await step("GetObject Range", async () => {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "big.bin", Range: "bytes=1000-1999" }));
  check(r.$metadata.httpStatusCode === 206, "206");
  check(r.ContentRange === "bytes 1000-1999/" + big.length, "content range " + r.ContentRange);
  check((await body(r)).equals(big.subarray(1000, 2000)), "range body");
});

await step("HeadObject", async () => {
  const r = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: "big.bin" }));
  check(r.ContentLength === big.length, "length " + r.ContentLength);
  check(r.ETag === '"' + md5(big) + '"', "etag");
  check(r.AcceptRanges === "bytes", "accept ranges");
});

await step("ListObjectsV2 prefix/delimiter", async () => {
  const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "dir/", Delimiter: "/" }));
  check(JSON.stringify((r.Contents ?? []).map((o) => o.Key)) ===
    JSON.stringify(["dir/buffer.bin", "dir/string.txt"]), "keys " + JSON.stringify(r.Contents));
  check(JSON.stringify((r.CommonPrefixes ?? []).map((p) => p.Prefix)) === JSON.stringify(["dir/sub/"]),
    "prefixes");
  check(r.KeyCount === 3, "KeyCount " + r.KeyCount);
  check(r.IsTruncated === false, "not truncated");
  const all = [];
  let token;
  do {
    const p = await s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 2, ContinuationToken: token }));
    all.push(...(p.Contents ?? []).map((o) => o.Key));
    token = p.IsTruncated ? p.NextContinuationToken : undefined;
  } while (token);
  check(all.length === 5, "paged keys " + JSON.stringify(all));
  const e = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "nothing/" }));
  check(e.KeyCount === 0 && e.Contents === undefined, "empty listing");
});

await step("CopyObject", async () => {
  const r = await s3.send(new CopyObjectCommand({
    Bucket: bucket, Key: "copy.bin", CopySource: bucket + "/big.bin",
  }));
  check(r.CopyObjectResult.ETag === '"' + md5(big) + '"', "copy etag");
  const g = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "copy.bin" }));
  check((await body(g)).equals(big), "copy body");
  const m = await s3.send(new CopyObjectCommand({
    Bucket: bucket, Key: "dir/string.txt", CopySource: bucket + "/dir/string.txt",
    MetadataDirective: "REPLACE", Metadata: { colour: "red" }, ContentType: "text/x-new",
  }));
  check(m.$metadata.httpStatusCode === 200, "copy onto itself with REPLACE");
  const h = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: "dir/string.txt" }));
  check(h.Metadata.colour === "red" && h.ContentType === "text/x-new", "replaced metadata");
});

await step("errors", async () => {
  let e = await errorOf(new GetObjectCommand({ Bucket: bucket, Key: "missing" }));
  check(e.name === "NoSuchKey" && e.status === 404, "GetObject missing " + JSON.stringify(e));
  e = await errorOf(new HeadObjectCommand({ Bucket: bucket, Key: "missing" }));
  check(e.name === "NotFound" && e.status === 404, "HeadObject missing " + JSON.stringify(e));
  e = await errorOf(new ListObjectsV2Command({ Bucket: bucket + "-none" }));
  check(e.name === "NoSuchBucket" && e.status === 404, "no bucket " + JSON.stringify(e));
  e = await errorOf(new PutObjectCommand({ Bucket: bucket + "-none", Key: "k", Body: "x" }));
  check(e.name === "NoSuchBucket" && e.status === 404, "put no bucket " + JSON.stringify(e));
  e = await errorOf(new DeleteBucketCommand({ Bucket: bucket }));
  check(e.name === "BucketNotEmpty" && e.status === 409, "not empty " + JSON.stringify(e));
  // re-creating a bucket one owns is 200 in us-east-1 (legacy), 409
  // BucketAlreadyOwnedByYou in other regions: https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html
  const again = await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  check(again.$metadata.httpStatusCode === 200, "re-create own bucket " + JSON.stringify(again.$metadata));
  e = await errorOf(new CopyObjectCommand({ Bucket: bucket, Key: "c2", CopySource: bucket + "/missing" }));
  check(e.name === "NoSuchKey" && e.status === 404, "copy missing " + JSON.stringify(e));
});

await step("DeleteObjects", async () => {
  const r = await s3.send(new DeleteObjectsCommand({
    Bucket: bucket,
    Delete: { Objects: [{ Key: "dir/string.txt" }, { Key: "dir/buffer.bin" }, { Key: "never-existed" }] },
  }));
  const keys = (r.Deleted ?? []).map((d) => d.Key).sort();
  check(JSON.stringify(keys) === JSON.stringify(["dir/buffer.bin", "dir/string.txt", "never-existed"]),
    "deleted " + JSON.stringify(r));
  check((r.Errors ?? []).length === 0, "no errors");
  const q = await s3.send(new DeleteObjectsCommand({
    Bucket: bucket, Delete: { Objects: [{ Key: "copy.bin" }], Quiet: true },
  }));
  check((q.Deleted ?? []).length === 0, "quiet");
});

await step("DeleteObject", async () => {
  const r = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "big.bin" }));
  check(r.$metadata.httpStatusCode === 204, "204");
  const again = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "big.bin" }));
  check(again.$metadata.httpStatusCode === 204, "delete of a missing key is 204");
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "dir/sub/stream.bin" }));
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "dir/sub/file.bin" }));
  const l = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  check(l.KeyCount === 0, "bucket empty " + JSON.stringify(l.Contents));
});

await step("DeleteBucket", async () => {
  const r = await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
  check(r.$metadata.httpStatusCode === 204, "204");
  const e = await errorOf(new HeadBucketCommand({ Bucket: bucket }));
  check(e.name === "NotFound" && e.status === 404, "head deleted bucket " + JSON.stringify(e));
});

console.log("jssdk: all steps passed");
