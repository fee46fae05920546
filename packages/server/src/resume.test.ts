import { Session } from "@openrath/core";
import { createDurableRuntime, type DurableRuntime, type RunRecord } from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { createServer } from "./server.js";
import { echo } from "./testing/harness.js";

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

/** A server with no worker: the test claims runs itself and parks them for review as a worker would. */
async function setup(): Promise<{ runtime: DurableRuntime; app: FastifyInstance }> {
  const store = await pgliteStore();
  const runtime = createDurableRuntime({ store });
  open.push(() => runtime.close());
  await runtime.register(echo);
  const app = await createServer({ runtime, auth: { mode: "local" } });
  open.push(() => app.close());
  return { runtime, app };
}

/** A submitted run, claimed by a worker of the test's, with an ambiguous send under review or none. */
async function parkedForReview(runtime: DurableRuntime, options: { effect: boolean; tenantId?: string }) {
  const submitted = await runtime.submit("echo", Session.fromUserMessage("hi"), {
    ...(options.tenantId ? { tenantId: options.tenantId } : {}),
  });
  const claimAs = async (workerId: string, leaseMs: number) => {
    const [claim] = await runtime.store.claim({ workerId, planHashes: [submitted.planHash], leaseMs });
    if (!claim || claim.run.id !== submitted.id) throw new Error(`the run was not claimed by ${workerId}`);
    return claim;
  };
  // A short lease: the first worker goes away with a send in flight.
  let claim = await claimAs("worker-a", options.effect ? 100 : 30_000);
  const journal = runtime.store.journal;
  if (!journal) throw new Error("the store has no journal");
  let effectId: string | undefined;
  if (options.effect) {
    const { effect } = await journal.beginEffect(claim.fence, {
      checkpointSeq: 0,
      stepId: "answer",
      position: "t/0/1",
      tool: "send_mail",
      callId: "call_1",
      effect: "non_idempotent",
      idempotencyKey: null,
      argumentsDigest: "digest-1",
      arguments: { to: "ana@example.com" },
    });
    effectId = effect.id;
    // The next worker finds the send of the lease before it, not safe to repeat: under review.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await runtime.store.sweep();
    claim = await claimAs("worker-b", 30_000);
    await journal.reviewEffect(claim.fence, effect.id);
  } else {
    await runtime.store.park(claim.fence, { status: "needs_review", reason: "an operator should look" });
  }
  const run = (await runtime.get(submitted.id, options)) as RunRecord;
  expect(run.status).toBe("needs_review");
  return { run, effectId };
}

describe("POST /v1/runs/{id}/resume", () => {
  it("puts a run parked for review back in the queue, audited, and a worker finishes it", async () => {
    const { runtime, app } = await setup();
    const { run } = await parkedForReview(runtime, { effect: false });
    const resumed = await app.inject({
      method: "POST",
      url: `/v1/runs/${run.id}/resume`,
      payload: { reason: "checked the provider's log" },
    });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json()).toMatchObject({ id: run.id, status: "queued" });
    const events = await runtime.store.readEvents(run.id);
    expect(events.at(-1)).toMatchObject({
      data: { from: "needs_review", to: "queued", reason: "checked the provider's log" },
    });
    const audit = await runtime.store.access?.listAudit({ tenantId: run.tenantId, limit: 50 });
    expect(audit?.items.map((record) => [record.action, record.resourceId, record.outcome])).toContainEqual([
      "run.resume",
      run.id,
      "allowed",
    ]);
    const worker = runtime.worker();
    await worker.start();
    expect((await runtime.wait(run.id)).status).toBe("succeeded");
  });

  it("refuses while an effect is under review; resolving it resumes the run, and a second resume is a conflict", async () => {
    const { runtime, app } = await setup();
    const { run, effectId } = await parkedForReview(runtime, { effect: true });
    const refused = await app.inject({ method: "POST", url: `/v1/runs/${run.id}/resume` });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatchObject({
      code: "effects_under_review",
      details: { runId: run.id, effectIds: [effectId] },
    });
    expect((await runtime.get(run.id))?.status).toBe("needs_review");
    const resolved = await app.inject({
      method: "POST",
      url: `/v1/effects/${effectId}/resolution`,
      payload: { kind: "failed", reason: "never sent" },
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect((await runtime.get(run.id))?.status).toBe("queued");
    const again = await app.inject({ method: "POST", url: `/v1/runs/${run.id}/resume` });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe("invalid_transition");
  });

  it("is a 404 for another tenant's run, and that run stays parked", async () => {
    const { runtime, app } = await setup();
    const { run } = await parkedForReview(runtime, { effect: false, tenantId: "other" });
    const response = await app.inject({ method: "POST", url: `/v1/runs/${run.id}/resume` });
    expect(response.statusCode, response.body).toBe(404);
    expect(response.json().error.code).toBe("run_not_found");
    // Cancel takes no body either, and is as blind to the other tenant.
    const cancel = await app.inject({ method: "POST", url: `/v1/runs/${run.id}/cancel` });
    expect(cancel.statusCode, cancel.body).toBe(404);
    expect((await runtime.get(run.id, { tenantId: "other" }))?.status).toBe("needs_review");
  });
});
