import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { describe, expect, it } from "vitest";
import { postgresStore, type QueryEvent } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const STEPS = 5;

/** Runs a five-step chain on a fresh schema and returns its final Session and the statements sent. */
async function chainOn(stepDurability: "relaxed" | "strict" | undefined) {
  const sent: QueryEvent[] = [];
  const store = await postgresStore({
    connectionString: POSTGRES_URL,
    schema: `durability_${randomBytes(5).toString("hex")}`,
    migrate: true,
    ...(stepDurability ? { stepDurability } : {}),
    onQuery: (event) => sent.push(event),
  });
  const runtime = createDurableRuntime({ store });
  try {
    const flow = defineWorkflow("chain");
    for (let i = 0; i < STEPS; i++) {
      flow.step(`s${i}`, (s) => s.append({ kind: "assistant", content: `step ${i}` }), {
        entry: i === 0,
        ...(i + 1 < STEPS ? { next: `s${i + 1}` } : {}),
      });
    }
    await runtime.register(flow);
    const worker = runtime.worker({ concurrency: 1, leaseMs: 10_000 });
    await worker.start();
    sent.length = 0;
    const out = await runtime.result((await runtime.submit("chain", Session.fromUserMessage("go"))).id);
    // Step commits only: the submission and the claim (relaxed too, ADR 0018, decision 1) are counted apart.
    const relaxed = sent.filter(
      (e) =>
        !e.failed &&
        /set_config\('synchronous_commit'/.test(e.sql) &&
        !/'run\.(claimed|created)'/.test(e.sql),
    );
    return { texts: out.chunks.map((c) => (c.kind === "assistant" ? c.content : c.kind)), relaxed };
  } finally {
    await runtime.close();
  }
}

describe.skipIf(!postgres.available)(`step commit durability on PostgreSQL (${postgres.reason})`, () => {
  it("relaxes the step commits that do not end the run by default, never the final one", async () => {
    const { texts, relaxed } = await chainOn(undefined);
    expect(texts).toEqual(["user", ...Array.from({ length: STEPS }, (_, i) => `step ${i}`)]);
    // Steps 1..4 commit checkpoints relaxed (the steps that finish while a commit is in flight go
    // in one batch); the fifth ends the run with a flushed commit.
    const checkpoints = relaxed.map((e) => e.sql.match(/insert into "[^"]+"\."checkpoints"/g)?.length ?? 0);
    expect(checkpoints.reduce((a, b) => a + b, 0)).toBe(STEPS - 1);
    for (const event of relaxed) expect(event.sql).toMatch(/non_idempotent/);
  });

  it("a submission alone commits without waiting for the flush, notifies inside, and answers only after a WAL flush; a group commits flushed", async () => {
    for (const stepDurability of ["relaxed", "strict"] as const) {
      const sent: QueryEvent[] = [];
      const store = await postgresStore({
        connectionString: POSTGRES_URL,
        schema: `durability_${randomBytes(5).toString("hex")}`,
        migrate: true,
        stepDurability,
        onQuery: (event) => sent.push(event),
      });
      const runtime = createDurableRuntime({ store });
      try {
        await runtime.register(defineWorkflow("one").step("a", (s) => s, { entry: true }));
        // Alone.
        sent.length = 0;
        const lone = await runtime.submit("one", Session.fromUserMessage("alone"));
        const loneSubmit = sent.filter((e) => /'run\.created'/.test(e.sql));
        const loneFlush = sent.filter((e) => /pg_logical_emit_message\(true, 'openrath\.flush'/.test(e.sql));
        expect(loneSubmit).toHaveLength(1);
        if (stepDurability === "relaxed") {
          expect(loneSubmit[0]!.sql).toMatch(/pg_notify/);
          expect(loneSubmit[0]!.sql).toMatch(/set_config\('synchronous_commit', 'off'/);
          expect(loneFlush).toHaveLength(1);
          expect(sent.indexOf(loneFlush[0]!)).toBeGreaterThan(sent.indexOf(loneSubmit[0]!));
        } else {
          expect(loneSubmit[0]!.sql).not.toMatch(/set_config/);
          expect(loneFlush).toHaveLength(0);
        }
        expect(lone.status).toBe("queued");
        // Together.
        sent.length = 0;
        const runs = await Promise.all(
          Array.from({ length: 8 }, (_, i) => runtime.submit("one", Session.fromUserMessage(`go ${i}`))),
        );
        // Submissions made together share insert statements (one `run.created` insert per run).
        const submits = sent.filter((e) => /'run\.created'/.test(e.sql));
        expect(submits.reduce((n, e) => n + (e.sql.match(/'run\.created'/g)?.length ?? 0), 0)).toBe(8);
        const flushes = sent.filter((e) => /pg_logical_emit_message\(true, 'openrath\.flush'/.test(e.sql));
        // A group commits flushed in its own statement (relaxed: notifying inside).
        if (stepDurability === "relaxed") for (const e of submits) expect(e.sql).toMatch(/pg_notify/);
        for (const e of submits.filter((e) => (e.sql.match(/'run\.created'/g)?.length ?? 0) > 1))
          expect(e.sql).not.toMatch(/set_config/);
        expect(submits.length).toBeLessThan(8);
        expect(flushes.length).toBeLessThanOrEqual(submits.length);
        expect(runs.every((r) => r.status === "queued")).toBe(true);
      } finally {
        await runtime.close();
      }
    }
  });

  it("strict step durability waits for the flush on every commit and gives the same run", async () => {
    const strict = await chainOn("strict");
    expect(strict.relaxed).toHaveLength(0);
    expect(strict.texts).toEqual((await chainOn("relaxed")).texts);
  });
});
