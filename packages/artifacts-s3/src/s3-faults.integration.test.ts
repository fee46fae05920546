/**
 * Faults against a real S3-compatible server process (s3rver) that the test kills: an upload the
 * server dies under leaves no object, fails with a retryable coded error, and succeeds when
 * retried once the server is back.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readArtifact } from "@openrath/runtime-durable";
import { afterAll, describe, expect, it } from "vitest";
import { s3ArtifactStore } from "./s3-artifact-store.js";
import { createTestBucket, type S3rverProcess, startS3rver } from "./testing/s3-service.js";

const MIB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "openrath-s3-faults-"));
let server: S3rverProcess = await startS3rver({ dir });
const port = server.port;
const bucket = await createTestBucket(server, "faults");
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function chunk(n: number): Buffer {
  const out = Buffer.alloc(MIB);
  for (let i = 0; i < MIB; i += 4) out.writeUInt32LE((n * 2654435761 + i * 40503) >>> 0, i);
  return out;
}

/** 24 MiB, one 1 MiB chunk at a time; `onChunk` runs before chunk `n` is handed out. */
function content(onChunk: (n: number) => void | Promise<void> = () => {}) {
  return (async function* () {
    for (let n = 0; n < 24; n++) {
      await onChunk(n);
      yield chunk(n);
    }
  })();
}
const hash = createHash("sha256");
for (let n = 0; n < 24; n++) hash.update(chunk(n));
const digest = hash.digest("hex");

function newStore() {
  return s3ArtifactStore({
    bucket,
    prefix: `faults-${Math.random().toString(36).slice(2, 8)}`,
    endpoint: server.endpoint,
    region: server.region,
    credentials: server.credentials,
    forcePathStyle: true,
    partSizeBytes: 5 * MIB,
    multipartThresholdBytes: 5 * MIB,
    clientConfig: { maxAttempts: 2, requestHandler: { connectionTimeout: 2000, requestTimeout: 10_000 } },
  });
}

async function restart(): Promise<void> {
  server = await startS3rver({ dir, port });
}

describe("S3 store faults with a real s3rver process", () => {
  for (const declared of [true, false]) {
    it(`the server killed mid-upload (${declared ? "digest declared" : "staged"}): no object, a retryable error, success on retry`, async () => {
      const store = newStore();
      const put = store.put(
        "acme",
        content(async (n) => {
          // Parts 1 and 2 are on their way; the server dies while more follow.
          if (n === 12) await server.kill();
        }),
        declared ? { digest, size: 24 * MIB } : {},
      );
      await expect(put).rejects.toMatchObject({ code: "artifact_unavailable", retryable: true });
      await restart();
      expect(await store.stat("acme", digest), "a partial object became visible").toBeUndefined();
      const listed = [];
      for await (const stat of store.list()) listed.push(stat);
      expect(listed).toEqual([]);
      const info = await store.put("acme", content(), declared ? { digest, size: 24 * MIB } : {});
      expect(info).toMatchObject({ digest, size: 24 * MIB });
      const read = await readArtifact(store, "acme", digest);
      expect(createHash("sha256").update(read).digest("hex")).toBe(digest);
      await store.close();
    }, 120_000);
  }

  it("a put while the server is down fails retryably and succeeds once it is back", async () => {
    const store = newStore();
    await server.kill();
    await expect(store.put("acme", "small object")).rejects.toMatchObject({
      code: "artifact_unavailable",
      retryable: true,
    });
    await expect(store.stat("acme", digest)).rejects.toMatchObject({ code: "artifact_unavailable" });
    await restart();
    const info = await store.put("acme", "small object");
    expect(String(await readArtifact(store, "acme", info.digest))).toBe("small object");
    await store.close();
  }, 60_000);

  it("the server killed while an object streams out ends the stream with a retryable error, never a clean end", async () => {
    const store = newStore();
    await store.put("acme", content(), { digest, size: 24 * MIB });
    const stream = await store.get("acme", digest);
    let received = 0;
    let ended = false;
    const failure = await new Promise<unknown>((resolve) => {
      stream.on("data", (c: Buffer) => {
        received += c.length;
        if (received >= 2 * MIB && received - c.length < 2 * MIB) void server.kill();
      });
      stream.once("end", () => {
        ended = true;
        resolve(undefined);
      });
      stream.once("error", resolve);
    });
    expect(ended).toBe(false);
    expect(failure).toMatchObject({ code: "artifact_unavailable", retryable: true });
    expect(received).toBeLessThan(24 * MIB);
    await restart();
    const read = await readArtifact(store, "acme", digest);
    expect(read.length).toBe(24 * MIB);
    await store.close();
  }, 60_000);
});
