import {
  createDurableRuntime,
  type DurableRuntime,
  defineWorkflow,
  type RunRecord,
} from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { afterEach, describe, expect, it } from "vitest";
import { postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
});

const ticker = defineWorkflow("ticker").step(
  "answer",
  async (session) => session.append({ kind: "assistant", content: "tock" }),
  { entry: true },
);

/** A runtime with a worker on its own handle of the schema, as another process would have. */
async function workerProcess(schema: string): Promise<DurableRuntime> {
  const store: RunStoreV1 = await postgresStore({ connectionString: POSTGRES_URL!, schema, migrate: true });
  const runtime = createDurableRuntime({ store });
  await runtime.register(ticker);
  // Ticks five times a second, so both workers race for every firing.
  await runtime.worker({ concurrency: 4, jobs: { tickMs: 200 } }).start();
  cleanup.push(() => runtime.close({ drain: false }));
  return runtime;
}

describe.runIf(postgres.available)("schedules on PostgreSQL", () => {
  it("two workers on one database fire an every-second schedule: each firing starts exactly one run", async () => {
    const schema = `schedules_${process.pid}_${Date.now()}`;
    const [a, b] = [await workerProcess(schema), await workerProcess(schema)];
    const schedule = await a.schedules.create({ workflow: "ticker", input: "tick", cron: "* * * * * *" });
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    await b.schedules.update(schedule.id, { enabled: false });
    // A firing in flight when it was disabled has committed by now (one transaction).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const runs: RunRecord[] = [];
    for (let after: string | undefined; ; ) {
      const page = await a.listRuns({ limit: 500, ...(after ? { after } : {}) });
      runs.push(...page);
      if (page.length < 500) break;
      after = page.at(-1)?.id;
    }
    const fireTimes = runs.map((run) => (run.metadata.schedule as { fireAt: string }).fireAt);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    // One run per fire time, keyed by it; the fire times are whole seconds.
    expect(new Set(fireTimes).size).toBe(runs.length);
    for (const run of runs) {
      const fireAt = Date.parse((run.metadata.schedule as { fireAt: string }).fireAt);
      expect(fireAt % 1000).toBe(0);
      expect(run.idempotencyKey).toBe(`schedule:${schedule.id}:${fireAt}`);
    }
    const last = await a.schedules.get(schedule.id);
    expect(last?.lastRunId).toBe(runs.at(-1)?.id);
    const all = await Promise.all(runs.map((run) => a.wait(run.id)));
    expect(all.every((run) => run.status === "succeeded")).toBe(true);
  }, 60_000);
});
