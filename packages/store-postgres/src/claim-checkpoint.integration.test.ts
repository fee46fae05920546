import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "@openrath/core";
import {
  createDurableRuntime,
  defineWorkflow,
  filesystemArtifactStore,
  withArtifactOffload,
} from "@openrath/runtime-durable";
import { restoreSession } from "@openrath/runtime-durable/store";
import { afterEach, describe, expect, it } from "vitest";
import { postgresStore, type QueryEvent } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of open.splice(0).reverse()) await s.close();
});

async function store(schema: string, onQuery?: (e: QueryEvent) => void) {
  const s = await postgresStore({
    connectionString: POSTGRES_URL!,
    schema,
    migrate: true,
    ...(onQuery ? { onQuery } : {}),
  });
  open.push(s);
  return s;
}

const flow = () =>
  defineWorkflow("brought").step("only", (s) => s.append({ kind: "assistant", content: "done" }), {
    entry: true,
  });

describe.skipIf(!postgres.available)(`a claim brings a fresh run's checkpoint (${postgres.reason})`, () => {
  it("the claimed checkpoint is the one a read gives, and a worker in another process starts the run without reading it", async () => {
    const schema = `brought_${randomBytes(5).toString("hex")}`;
    const api = createDurableRuntime({ store: await store(schema) });
    const plan = await api.register(flow());
    let session = Session.fromUserMessage("first");
    for (let i = 0; i < 5; i++) session = session.append({ kind: "assistant", content: `reply ${i}` });
    const earlier = await api.submit(plan, session);
    const direct = await store(schema);
    const [claim] = await direct.claim({ workerId: "w", planHashes: [plan.hash], leaseMs: 5_000, limit: 1 });
    expect(claim!.checkpoint).toBeDefined();
    const read = await direct.loadCheckpoint(earlier.id, 0);
    expect(JSON.stringify(restoreSession(claim!.checkpoint!).toJSON())).toBe(
      JSON.stringify(restoreSession(read!).toJSON()),
    );
    await direct.finish(claim!.fence, { status: "succeeded" });

    const sent: string[] = [];
    const worker = createDurableRuntime({ store: await store(schema, (e) => sent.push(e.sql)) });
    await worker.register(flow());
    const w = worker.worker({ leaseMs: 5_000 });
    await w.start();
    // A continued session: its checkpoint 0 is a delta against the earlier run's checkpoint.
    const next = await api.submit(plan, session.append({ kind: "user", content: "and then?" }));
    const out = await api.result(next.id);
    expect(out.chunks.map((c) => (c as { content?: string }).content).slice(-2)).toEqual([
      "and then?",
      "done",
    ]);
    await w.stop();
    // The worker's statements: claims and the step's end, no checkpoint read.
    expect(sent.some((text) => /^\s*with recursive chain as/.test(text))).toBe(false);
    expect(sent.some((text) => /with recursive cand as/.test(text))).toBe(true);
  });

  it("a brought checkpoint holding claim-check stubs is dropped by the offloading store, so the worker reads it resolved", async () => {
    const schema = `brought_${randomBytes(5).toString("hex")}`;
    const artifacts = filesystemArtifactStore({ root: mkdtempSync(join(tmpdir(), "openrath-brought-")) });
    const offloading = withArtifactOffload(await store(schema), { artifacts, thresholdBytes: 1_024 });
    const rt = createDurableRuntime({ store: offloading });
    const plan = await rt.register(flow());
    const big = "x".repeat(4_096);
    const run = await rt.submit(plan, Session.fromUserMessage(big));
    const raw = await store(schema);
    const [claim] = await raw.claim({ workerId: "w", planHashes: [plan.hash], leaseMs: 5_000, limit: 1 });
    // The raw store brings the stub; the offloading store's claim leaves the checkpoint out.
    expect(JSON.stringify(claim!.checkpoint!.chunks)).not.toContain(big);
    await raw.release(claim!.fence);
    const [again] = await offloading.claim({
      workerId: "w",
      planHashes: [plan.hash],
      leaseMs: 5_000,
      limit: 1,
    });
    expect(again!.checkpoint).toBeUndefined();
    await offloading.release(again!.fence);
    const w = rt.worker({ leaseMs: 5_000 });
    await w.start();
    const out = await rt.result(run.id);
    expect((out.chunks[0] as { content: string }).content).toBe(big);
    await w.stop();
  });
});
