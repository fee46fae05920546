import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, mkdtempSync, rmSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { s3ArtifactStore } from "@openrath/artifacts-s3";
import { type ArtifactStoreV1, filesystemArtifactStore } from "@openrath/runtime-durable";
import { elapsedUs, emit, median, progressFor, round } from "./internal/report.js";

// Artifact put/get throughput for 1 MiB and 100 MiB objects: the S3 store against a plain
// @aws-sdk/lib-storage upload and GetObject download of the same bytes to the same s3rver process,
// and the filesystem store against a plain temp-file write (fsync, rename) and read stream. Every
// sample of a case is paired with an anchor sample taken right after it.

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const progress = progressFor("artifacts.bench");
const MIB = 1024 * 1024;
const PART = 8 * MIB;
const QUEUE = 4;
const TARGET_RATIO = 1.2;
const SIZES = [
  { label: "1MiB", bytes: MIB, runs: 40 },
  { label: "100MiB", bytes: 100 * MIB, runs: 6 },
];

function pseudoRandom(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i + 4 <= size; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.writeUInt32LE(x >>> 0, i);
  }
  return out;
}

/** The buffer as 1 MiB chunks, the way a file or a socket delivers it. */
function* chunksOf(body: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < body.length; offset += MIB) yield body.subarray(offset, offset + MIB);
}

async function drain(stream: Readable | AsyncIterable<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += (chunk as Uint8Array).byteLength;
  return bytes;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return elapsedUs(start) / 1000;
}

interface Pair {
  readonly name: string;
  readonly subject: () => Promise<unknown>;
  readonly anchor: () => Promise<unknown>;
  readonly anchorName: string;
  /** Runs before each sample of either side, untimed (to delete what the last one stored). */
  readonly reset?: () => Promise<unknown>;
}

async function measure(size: (typeof SIZES)[number], pair: Pair, extra: Record<string, unknown> = {}) {
  progress(`${pair.name} ${size.label}: warm-up`);
  for (let i = 0; i < 2; i++) {
    await pair.reset?.();
    await pair.subject();
    await pair.reset?.();
    await pair.anchor();
  }
  progress(`${pair.name} ${size.label}: ${size.runs} paired runs`);
  const subject: number[] = [];
  const anchor: number[] = [];
  for (let i = 0; i < size.runs; i++) {
    await pair.reset?.();
    subject.push(await time(pair.subject));
    await pair.reset?.();
    anchor.push(await time(pair.anchor));
  }
  const s = median(subject);
  const a = median(anchor);
  const ratio = s / a;
  emit({
    case: pair.name,
    size: size.label,
    bytes: size.bytes,
    runs: size.runs,
    median_ms: round(s, 2),
    mib_per_s: round(size.bytes / MIB / (s / 1000), 1),
    anchor: pair.anchorName,
    anchor_median_ms: round(a, 2),
    anchor_mib_per_s: round(size.bytes / MIB / (a / 1000), 1),
    ratio_to_anchor: round(ratio, 3),
    target: `within ${TARGET_RATIO}x of the anchor`,
    meets_target: ratio <= TARGET_RATIO,
    ...extra,
  });
}

async function startS3rver(dir: string) {
  const launcher = fileURLToPath(import.meta.resolve("@openrath/artifacts-s3/package.json")).replace(
    /package\.json$/,
    "src/testing/serve-s3rver.mjs",
  );
  const child = spawn(process.execPath, [launcher, "--dir", dir], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`s3rver exited (${code})`)));
  });
  const { port } = JSON.parse(line) as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => child.kill("SIGTERM") };
}

async function s3Cases(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "openrath-bench-s3-"));
  const server = await startS3rver(dir);
  const config = {
    endpoint: server.endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  };
  // The anchor: a plain client with the SDK's defaults.
  const plain = new S3Client(config);
  const bucket = "openrath-bench";
  await plain.send(new CreateBucketCommand({ Bucket: bucket }));
  const store = s3ArtifactStore({
    ...config,
    bucket,
    prefix: "bench",
    partSizeBytes: PART,
    queueSize: QUEUE,
  });
  try {
    for (const size of SIZES) {
      const body = pseudoRandom(size.bytes, 7 + size.bytes);
      const digest = createHash("sha256").update(body).digest("hex");
      const key = `plain/${size.label}`;
      const objectKey = `bench/acme/${digest.slice(0, 2)}/${digest}`;
      const plainPut = () =>
        new Upload({
          client: plain,
          params: { Bucket: bucket, Key: key, Body: body },
          partSize: PART,
          queueSize: QUEUE,
        }).done();
      const deleteBoth = async () => {
        await plain.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey }));
        await plain.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      };
      await measure(
        size,
        {
          name: "s3_put",
          subject: () => store.put("acme", body),
          anchor: plainPut,
          anchorName: "@aws-sdk/lib-storage Upload of the same bytes (SDK defaults)",
          reset: deleteBoth,
        },
        { note: "a buffer: hashed first, then sent straight to its content key" },
      );
      await measure(
        size,
        {
          name: "s3_put_stream",
          subject: () => store.put("acme", Readable.from(chunksOf(body))),
          anchor: () =>
            new Upload({
              client: plain,
              params: { Bucket: bucket, Key: key, Body: Readable.from(chunksOf(body)) },
              partSize: PART,
              queueSize: QUEUE,
            }).done(),
          anchorName: "@aws-sdk/lib-storage Upload of the same stream (SDK defaults)",
          reset: deleteBoth,
        },
        {
          note:
            size.bytes > 8 * MIB
              ? "digest unknown until the end: staged multipart upload, then a server-side copy"
              : "read into memory, one PutObject",
        },
      );
      await measure(
        size,
        {
          name: "s3_put_digest_declared",
          subject: async () => {
            const declared = createHash("sha256").update(body).digest("hex");
            return store.put("acme", body, { digest: declared, size: body.length });
          },
          anchor: plainPut,
          anchorName: "@aws-sdk/lib-storage Upload of the same bytes (SDK defaults)",
          reset: deleteBoth,
        },
        { note: "timing includes hashing the body to declare its digest" },
      );
      await store.put("acme", body);
      await plainPut();
      await measure(
        size,
        {
          name: "s3_get",
          subject: async () => drain(await store.get("acme", digest)),
          anchor: async () =>
            drain((await plain.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body as Readable),
          anchorName: "GetObject of the same bytes, body drained (SDK defaults)",
        },
        { note: "every byte hashed and checked against the digest" },
      );
    }
  } finally {
    await store.close();
    plain.destroy();
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function filesystemCases(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "openrath-bench-fs-"));
  const store: ArtifactStoreV1 = filesystemArtifactStore({ root: join(dir, "store") });
  try {
    for (const size of SIZES) {
      const body = pseudoRandom(size.bytes, 11 + size.bytes);
      const digest = createHash("sha256").update(body).digest("hex");
      const plainPath = join(dir, `plain-${size.label}`);
      const plainWrite = async () => {
        const temp = `${plainPath}.tmp`;
        const handle = await open(temp, "w");
        await handle.write(body);
        await handle.sync();
        await handle.close();
        await rename(temp, plainPath);
      };
      await measure(size, {
        name: "fs_put",
        subject: () => store.put("acme", body),
        anchor: async () => {
          createHash("sha256").update(body).digest("hex");
          await plainWrite();
        },
        anchorName:
          "SHA-256 of the bytes, then write a temp file, fsync, rename (content addressing by hand)",
        reset: async () => {
          await store.delete("acme", digest);
          await unlink(plainPath).catch(() => {});
        },
      });
      await measure(size, {
        name: "fs_put_vs_unhashed_write",
        subject: () => store.put("acme", body),
        anchor: plainWrite,
        anchorName: "write a temp file, fsync, rename (no hashing)",
        reset: async () => {
          await store.delete("acme", digest);
          await unlink(plainPath).catch(() => {});
        },
      });
      await store.put("acme", body);
      await plainWrite();
      await measure(
        size,
        {
          name: "fs_get",
          subject: async () => drain(await store.get("acme", digest)),
          anchor: async () => {
            const hash = createHash("sha256");
            for await (const chunk of createReadStream(plainPath, { highWaterMark: MIB }))
              hash.update(chunk as Buffer);
            return hash.digest("hex");
          },
          anchorName: "fs.createReadStream of the same file, hashed with SHA-256 (verification by hand)",
        },
        { note: "every byte hashed and checked against the digest" },
      );
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await s3Cases();
await filesystemCases();
