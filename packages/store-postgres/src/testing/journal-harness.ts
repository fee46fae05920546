import { PGlite } from "@electric-sql/pglite";
import {
  createDurableRuntime,
  type DurableDefinitionSource,
  type DurableRuntime,
  type DurableWorker,
} from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { afterAll, afterEach } from "vitest";
import { type PgliteStoreOptions, pgliteStore } from "../postgres-store.js";

/**
 * One embedded database per test file (PGlite takes seconds to start) with a schema per test,
 * and the runtimes and workers a test makes, stopped after it.
 */
export function journalHarness() {
  const db = PGlite.create();
  const cleanup: (() => Promise<void>)[] = [];
  let n = 0;
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
  });
  afterAll(async () => (await db).close());

  return {
    /** A fresh store and runtime on their own schema. */
    async setup(
      options: Pick<PgliteStoreOptions, "journalDurability" | "onQuery"> = {},
    ): Promise<{ store: RunStoreV1; runtime: DurableRuntime }> {
      const store = await pgliteStore({ db: await db, schema: `journal_${process.pid}_${++n}`, ...options });
      cleanup.push(() => store.close());
      return { store, runtime: createDurableRuntime({ store }) };
    },
    /** Registers `flows` and starts a worker for them (short lease); stopped after the test. */
    async worker(
      runtime: DurableRuntime,
      flows: readonly DurableDefinitionSource[],
      options: { leaseMs?: number; workerId?: string } = {},
    ): Promise<DurableWorker> {
      const plans = [];
      for (const flow of flows) plans.push(await runtime.register(flow));
      const worker = runtime.worker({
        plans,
        leaseMs: options.leaseMs ?? 10_000,
        ...(options.workerId ? { workerId: options.workerId } : {}),
        ...(process.env.JOURNAL_DEBUG
          ? { log: (level, message, data) => console.log(level, message, JSON.stringify(data)) }
          : {}),
      });
      await worker.start();
      cleanup.push(() => worker.stop({ drain: false }));
      return worker;
    },
  };
}

/** Waits until `check` holds (polling every 20 ms), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
