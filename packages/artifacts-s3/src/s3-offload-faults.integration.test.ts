/**
 * Durable runs whose artifacts live on an S3-compatible server process (s3rver) that the test
 * kills: a commit that cannot offload waits for the server and goes through (nothing partial is
 * ever visible), and a step that fails with the retryable coded error succeeds on its retry.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableWorker,
  defineWorkflow,
  readArtifactText,
  withArtifactOffload,
} from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { s3ArtifactStore } from "./s3-artifact-store.js";
import { createTestBucket, type S3rverProcess, startS3rver } from "./testing/s3-service.js";

const dir = mkdtempSync(join(tmpdir(), "openrath-s3-offload-faults-"));
let server: S3rverProcess = await startS3rver({ dir });
const port = server.port;
const bucket = await createTestBucket(server, "offload-faults");
const db = await PGlite.create();
const workers: DurableWorker[] = [];
const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop({ drain: false });
  for (const resource of closing.splice(0)) await resource.close();
});
afterAll(async () => {
  await server.stop();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** 20 MB of text: above the offload threshold and the multipart threshold. */
const RESULT = randomBytes(15_000_000).toString("base64");
const RESULT_DIGEST = createHash("sha256").update(RESULT).digest("hex");

const restartLater = (ms: number) =>
  setTimeout(() => {
    void startS3rver({ dir, port }).then((s) => {
      server = s;
    });
  }, ms);

let schemas = 0;
async function setUp(workflow: ReturnType<typeof defineWorkflow>) {
  const artifacts = s3ArtifactStore({
    bucket,
    prefix: `run-${++schemas}`,
    endpoint: server.endpoint,
    region: server.region,
    credentials: server.credentials,
    forcePathStyle: true,
    partSizeBytes: 5 << 20,
    multipartThresholdBytes: 5 << 20,
    clientConfig: { maxAttempts: 1, requestHandler: { connectionTimeout: 1000, requestTimeout: 10_000 } },
  });
  const base = await pgliteStore({ db, schema: `faults_${schemas}` });
  closing.push(base, artifacts);
  const runtime = createDurableRuntime({ store: withArtifactOffload(base, { artifacts }) });
  await runtime.register(workflow);
  const worker = runtime.worker({ leaseMs: 15_000 });
  workers.push(worker);
  await worker.start();
  return { runtime, artifacts, base };
}

describe("durable runs with artifacts on a killed s3rver", () => {
  it("a commit that cannot offload waits for the server and goes through; nothing partial is visible", async () => {
    const workflow = defineWorkflow("commit-while-down").step(
      "produce",
      async (session: Session) => {
        // The server dies after the step's work and before its checkpoint is written.
        await server.kill();
        restartLater(1500);
        return session.append({ kind: "assistant", content: RESULT });
      },
      { entry: true },
    );
    const { runtime, artifacts, base } = await setUp(workflow);
    const run = await runtime.submit("commit-while-down", Session.fromUserMessage("go"), {
      tenantId: "acme",
    });
    const done = await runtime.wait(run.id, { tenantId: "acme" });
    expect(done.status).toBe("succeeded");
    expect(done.attempt, "the step ran again instead of its commit waiting").toBe(1);
    const claims = (await base.readEvents(run.id)).filter((e) => e.type === "run.claimed");
    expect(claims, "the run was given up and claimed again instead of its commit waiting").toHaveLength(1);
    const listed = [];
    for await (const stat of artifacts.list({ tenant: "acme" })) listed.push(stat);
    expect(listed.map((s) => [s.digest, s.size])).toEqual([[RESULT_DIGEST, RESULT.length]]);
    const session = await runtime.session(run.id, undefined, { tenantId: "acme" });
    expect(session.text() === RESULT).toBe(true);
  }, 90_000);

  it("a step that fails with artifact_unavailable is retried and succeeds once the server is back", async () => {
    let artifactsOfStep: ReturnType<typeof s3ArtifactStore> | undefined;
    const attempts: number[] = [];
    const workflow = defineWorkflow("step-while-down").step(
      "read",
      async (session: Session, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) {
          await server.kill();
          restartLater(500);
        }
        const { digest } = await artifactsOfStep!.put("acme", "input the step reads");
        const text = await readArtifactText(artifactsOfStep!, "acme", digest);
        return session.append({ kind: "assistant", content: text });
      },
      { entry: true, retry: { maxAttempts: 5, baseMs: 1000, maxMs: 2000 } },
    );
    const { runtime, artifacts, base } = await setUp(workflow);
    artifactsOfStep = artifacts;
    const run = await runtime.submit("step-while-down", Session.fromUserMessage("go"), { tenantId: "acme" });
    const done = await runtime.wait(run.id, { tenantId: "acme" });
    expect(done.status).toBe("succeeded");
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    const events = await base.readEvents(run.id);
    const failures = events.filter((e) => JSON.stringify(e.data).includes("artifact_unavailable"));
    expect(failures.length, `events: ${events.map((e) => e.type).join(", ")}`).toBeGreaterThanOrEqual(1);
    expect((await runtime.session(run.id, undefined, { tenantId: "acme" })).text()).toBe(
      "input the step reads",
    );
  }, 90_000);
});
