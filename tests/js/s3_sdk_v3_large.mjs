// AWS SDK for JavaScript v3 with its default checksums against cairn-gateway's
// large-object path (tests/integration/test_gateway_jssdk_large.py):
//   - PutObject of a 100 MiB stream: aws-chunked with a CRC32 trailer
//     (STREAMING-UNSIGNED-PAYLOAD-TRAILER), cut into chunks by the gateway;
//   - GetObject of it (sha256 round trip) and a range across a chunk boundary;
//   - a multipart upload with unequal parts (each part with its CRC32),
//     read back whole and by partNumber.
//   node s3_sdk_v3_large.mjs <endpoint> <access key> <secret key>
import { Readable } from "node:stream";
import { createHash, randomBytes } from "node:crypto";
import {
  S3Client, CreateBucketCommand, PutObjectCommand, GetObjectCommand,
  CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand,
  DeleteObjectCommand, DeleteBucketCommand,
} from "@aws-sdk/client-s3";

const [endpoint, accessKeyId, secretAccessKey] = process.argv.slice(2);
const s3 = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true,
  credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1 });
const seen = [];
s3.middlewareStack.add((next) => async (args) => {
  const h = args.request?.headers ?? {};
  seen.push({ method: args.request?.method, sha: h["x-amz-content-sha256"], trailer: h["x-amz-trailer"] });
  return next(args);
}, { step: "finalizeRequest", name: "cairnRecord", priority: "low" });

const MIB = 1024 * 1024;
function check(c, what) { if (!c) throw new Error("check failed: " + what); }
const sha = (b) => createHash("sha256").update(b).digest("hex");
async function body(r) {
  const parts = [];
  for await (const p of r.Body) parts.push(p);
  return Buffer.concat(parts);
}
async function step(name, fn) {
  const t0 = Date.now();
  await fn();
  console.log("ok   " + name + " (" + ((Date.now() - t0) / 1000).toFixed(1) + "s)");
}

const bucket = "jslarge";
const block = randomBytes(MIB);
const SIZE = 100 * MIB;
function blockN(i) { const b = Buffer.from(block); b.writeUInt32BE(i, 0); return b; }
const whole = createHash("sha256");
for (let i = 0; i < SIZE / MIB; i++) whole.update(blockN(i));
const wholeSha = whole.digest("hex");

await step("CreateBucket", async () => { await s3.send(new CreateBucketCommand({ Bucket: bucket })); });

await step("PutObject 100 MiB stream (CRC32 trailer)", async () => {
  async function* gen() { for (let i = 0; i < SIZE / MIB; i++) yield blockN(i); }
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "big", Body: Readable.from(gen()),
    ContentLength: SIZE }));
  const p = seen.filter((s) => s.method === "PUT").pop();
  check(p.sha === "STREAMING-UNSIGNED-PAYLOAD-TRAILER" && p.trailer === "x-amz-checksum-crc32",
    "trailer upload " + JSON.stringify(p));
});

await step("GetObject 100 MiB, sha256", async () => {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "big" }));
  check(r.ContentLength === SIZE, "length");
  check(sha(await body(r)) === wholeSha, "sha256 round trip");
  const g = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "big", Range: "bytes=5242000-5243000" }));
  const want = Buffer.concat([blockN(4), blockN(5)]).subarray(5242000 - 4 * MIB, 5243001 - 4 * MIB);
  check((await body(g)).equals(want), "range across a chunk boundary");
});

await step("multipart, unequal parts with CRC32", async () => {
  const parts = [randomBytes(5 * MIB + 17), randomBytes(7 * MIB), randomBytes(12345)];
  const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "mp" }));
  const done = [];
  for (let i = 0; i < parts.length; i++) {
    const r = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: "mp", UploadId: up.UploadId,
      PartNumber: i + 1, Body: parts[i] }));
    done.push({ PartNumber: i + 1, ETag: r.ETag, ChecksumCRC32: r.ChecksumCRC32 });
  }
  await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: "mp", UploadId: up.UploadId,
    MultipartUpload: { Parts: done } }));
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "mp" }));
  check((await body(r)).equals(Buffer.concat(parts)), "multipart body");
  for (let i = 0; i < parts.length; i++) {
    const g = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "mp", PartNumber: i + 1 }));
    check(g.PartsCount === parts.length, "parts count " + g.PartsCount);
    check((await body(g)).equals(parts[i]), "part " + (i + 1));
  }
});

await step("cleanup", async () => {
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "big" }));
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "mp" }));
  await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
});
