/**
 * The claim check end to end: durable runs on the embedded store (PGlite) whose large chunk
 * content goes to an artifact store (the filesystem store and the S3 store on s3rver). A 50 MB
 * tool result never enters a database row nor is copied on the heap; the Session read back
 * is equal; garbage collection keeps what checkpoints refer to and deletes the rest after its
 * grace period; an artifact removed behind the store's back is a coded error naming its digest.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { DeleteObjectCommand } from "@aws-sdk/client-s3";
import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import {
  collectArtifactGarbage,
  createDurableRuntime,
  type DurableWorker,
  defineWorkflow,
  filesystemArtifactStore,
  withArtifactOffload,
} from "@openrath/runtime-durable";
import { type ArtifactStoreV1, offloadedArtifacts } from "@openrath/runtime-durable/store";
import { pgliteStore } from "@openrath/store-postgres";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { s3ArtifactStore } from "./s3-artifact-store.js";
import { createTestBucket, rawClient, s3TestService } from "./testing/s3-service.js";

const MB = 1_000_000;
const dir = mkdtempSync(join(tmpdir(), "openrath-offload-"));
const db = await PGlite.create();
const service = await s3TestService();
afterAll(async () => {
  await db.close();
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
});
const workers: DurableWorker[] = [];
const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop({ drain: false });
  for (const resource of closing.splice(0)) await resource.close();
});

/** 50 MB of text that does not compress: what a big tool result looks like to the stores. */
const TOOL_OUTPUT = randomBytes(37_500_000).toString("base64");
const TOOL_DIGEST = createHash("sha256").update(TOOL_OUTPUT).digest("hex");

const toolRun = defineWorkflow("tool-run").step(
  "call",
  async (session: Session) =>
    session
      .append({
        kind: "assistant",
        content: null,
        toolCalls: [{ id: "call_1", type: "function", function: { name: "dump", arguments: "{}" } }],
      })
      .append({ kind: "tool_result", toolCallId: "call_1", name: "dump", content: TOOL_OUTPUT }),
  { entry: true },
);

interface Backend {
  readonly name: string;
  readonly available: boolean;
  readonly reason: string;
  make(): ArtifactStoreV1;
  /** Removes an object behind the store's back. */
  remove(tenant: string, digest: string): Promise<void>;
}

let schemas = 0;
const fsRoot = join(dir, "artifacts");
const backends: Backend[] = [
  {
    name: "filesystem",
    available: true,
    reason: "",
    make: () => filesystemArtifactStore({ root: fsRoot }),
    remove: (tenant, digest) => unlink(join(fsRoot, tenant, digest.slice(0, 2), digest)),
  },
];
if (service.available) {
  const s3 = service.s3!;
  const bucket = await createTestBucket(s3, "offload");
  const raw = rawClient(s3);
  afterAll(() => raw.destroy());
  backends.push({
    name: "s3 (s3rver)",
    available: true,
    reason: "",
    make: () =>
      s3ArtifactStore({
        bucket,
        endpoint: s3.endpoint,
        region: s3.region,
        credentials: s3.credentials,
        forcePathStyle: true,
        multipartThresholdBytes: 5 << 20,
        partSizeBytes: 5 << 20,
        queueSize: 2,
      }),
    remove: async (tenant, digest) => {
      await raw.send(
        new DeleteObjectCommand({
          Bucket: bucket,
          Key: `openrath/${tenant}/${digest.slice(0, 2)}/${digest}`,
        }),
      );
    },
  });
} else {
  backends.push({
    name: "s3",
    available: false,
    reason: service.reason,
    make: () => null as never,
    remove: async () => {},
  });
}

async function setUp(backend: Backend) {
  const schema = `offload_${++schemas}`;
  const artifacts = backend.make();
  const base = await pgliteStore({ db, schema });
  const store = withArtifactOffload(base, { artifacts });
  closing.push(base, artifacts);
  const runtime = createDurableRuntime({ store });
  await runtime.register(toolRun);
  const worker = runtime.worker({ leaseMs: 5_000 });
  workers.push(worker);
  await worker.start();
  return { schema, artifacts, store, runtime };
}

/** The garbage collector, exposed for this test without a command-line flag. */
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/**
 * The JavaScript heap (where a copy of the string, or of the chunk's JSON, would live) sampled
 * after a full collection every 25 ms while `work` runs: resolves with the peak growth over the
 * level before it. Garbage does not count, only what is held. (Buffers are left out: V8 frees
 * their memory on a background thread after a collection, so an in-process sample of them is
 * noise; the database side is checked by the row size instead.)
 */
async function peakHeapGrowth(work: () => Promise<unknown>): Promise<number> {
  const live = () => {
    gc();
    return process.memoryUsage().heapUsed;
  };
  const baseline = live();
  let peak = baseline;
  const timer = setInterval(() => {
    peak = Math.max(peak, live());
  }, 25);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, live()) - baseline;
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`claim-check offload to ${backend.name} ${backend.reason}`, () => {
    it("a 50 MB tool result stays out of the database row and the heap, and reads back equal", async () => {
      const { schema, runtime, artifacts } = await setUp(backend);
      let runId = "";
      const growth = await peakHeapGrowth(async () => {
        const run = await runtime.submit("tool-run", Session.fromUserMessage("dump everything"), {
          tenantId: "acme",
        });
        runId = run.id;
        expect((await runtime.wait(run.id, { tenantId: "acme" })).status).toBe("succeeded");
      });
      // Serializing the chunk, or copying the string, would hold 50 MB more.
      expect(
        growth,
        `the heap grew by ${(growth / MB).toFixed(1)} MB while a 50 MB result was checkpointed`,
      ).toBeLessThan(8 * MB);
      const rows = await db.query<{ longest: number; total: number }>(
        `select max(octet_length(body))::int as longest, sum(octet_length(body))::int as total from ${schema}.checkpoints`,
      );
      expect(rows.rows[0]!.longest, "a checkpoint row holds the large content").toBeLessThan(2000);
      expect((await artifacts.stat("acme", TOOL_DIGEST))?.size).toBe(TOOL_OUTPUT.length);

      const session = await runtime.session(runId, undefined, { tenantId: "acme" });
      const result = session.chunks.at(-1)!;
      expect(result.kind).toBe("tool_result");
      expect((result as { content: string }).content === TOOL_OUTPUT).toBe(true);
    }, 120_000);

    it("garbage collection keeps what checkpoints refer to and deletes it once the session is erased", async () => {
      const { store, runtime, artifacts } = await setUp(backend);
      const run = await runtime.submit("tool-run", Session.fromUserMessage("dump again"), { tenantId: "gc" });
      await runtime.wait(run.id, { tenantId: "gc" });
      const orphan = await artifacts.put("gc", "never referenced");
      const loaded = await store.loadCheckpoint(run.id);
      expect(
        loaded?.chunks.some((c) => offloadedArtifacts(c).length > 0),
        "loadCheckpoint handed out a stub",
      ).toBe(false);

      const first = await collectArtifactGarbage({ artifacts, references: store, tenant: "gc", graceMs: 0 });
      expect(first.garbage.map((g) => g.digest)).toEqual([orphan.digest]);
      expect((await artifacts.stat("gc", TOOL_DIGEST))?.size).toBe(TOOL_OUTPUT.length);

      await store.eraseSession("gc", run.sessionId);
      const kept = await collectArtifactGarbage({
        artifacts,
        references: store,
        tenant: "gc",
        graceMs: 60_000,
      });
      expect(kept.garbage, "deleted inside the grace period").toEqual([]);
      const second = await collectArtifactGarbage({ artifacts, references: store, tenant: "gc", graceMs: 0 });
      expect(second.garbage.map((g) => g.digest)).toEqual([TOOL_DIGEST]);
      expect(await artifacts.stat("gc", TOOL_DIGEST)).toBeUndefined();
    }, 120_000);

    it("an offloaded result removed behind the store's back fails the read with artifact_not_found naming the digest", async () => {
      const { runtime } = await setUp(backend);
      const run = await runtime.submit("tool-run", Session.fromUserMessage("dump once more"), {
        tenantId: "lost",
      });
      await runtime.wait(run.id, { tenantId: "lost" });
      await backend.remove("lost", TOOL_DIGEST);
      const error = await runtime.session(run.id, undefined, { tenantId: "lost" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: "artifact_not_found",
        details: { tenant: "lost", digest: TOOL_DIGEST },
      });
      expect(String((error as Error).message)).toContain(TOOL_DIGEST);
    }, 120_000);
  });
}
