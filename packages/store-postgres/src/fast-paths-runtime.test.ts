import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import { createDurableRuntime, type DurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { pgliteStore } from "./postgres-store.js";

const db = PGlite.create();
afterAll(async () => (await db).close());
let n = 0;
const runtimes: DurableRuntime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close({ drain: false });
});

type Counted = "submit" | "findSessionHead" | "commitStep" | "commitSteps" | "submitIfNew";

/**
 * The store seen with its fast paths hidden (`plain`) or not, counting the calls of the members
 * the runtime picks between.
 */
function counting(store: RunStoreV1, plain: boolean) {
  const calls: Record<Counted, number> = {
    submit: 0,
    findSessionHead: 0,
    commitStep: 0,
    commitSteps: 0,
    submitIfNew: 0,
  };
  const counted = <F extends (...args: never[]) => unknown>(name: Counted, fn: F) =>
    ((...args: never[]) => {
      calls[name]++;
      return fn(...args);
    }) as F;
  const hidden = new Set<PropertyKey>(["groupCommit", "newSessionSubmit", "claimOnSubmit"]);
  const capabilities = plain
    ? { ...store.capabilities, groupCommit: false, newSessionSubmit: false, claimOnSubmit: false }
    : store.capabilities;
  const wrapped = new Proxy(store, {
    get(target, key) {
      if (key === "capabilities") return capabilities;
      if (plain && hidden.has(key)) return undefined;
      const value = Reflect.get(target, key, target);
      if (key === "groupCommit") return { ...value, commitSteps: counted("commitSteps", value.commitSteps) };
      if (key === "newSessionSubmit")
        return { ...value, submitIfNew: counted("submitIfNew", value.submitIfNew) };
      if (key === "submit" || key === "findSessionHead" || key === "commitStep")
        return counted(key, value.bind(target));
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: wrapped, calls };
}

/** Six steps, the middle ones fast, so steps finish while an earlier commit is in flight. */
function sixSteps() {
  const flow = defineWorkflow(`six-${++n}`);
  for (let i = 0; i < 6; i++)
    flow.step(`s${i}`, (s) => s.append({ kind: "assistant", content: `step ${i}` }), {
      ...(i === 0 ? { entry: true } : {}),
      ...(i < 5 ? { next: `s${i + 1}` } : {}),
    });
  return flow;
}

describe("the runtime over a store with and without its fast paths", () => {
  for (const plain of [true, false]) {
    it(`runs the same workflow to the same result ${plain ? "on the plain path alone" : "with the fast paths"}`, async () => {
      const { store, calls } = counting(await pgliteStore({ db: await db, schema: `fast_${++n}` }), plain);
      const rt = createDurableRuntime({ store });
      runtimes.push(rt);
      await rt.register(sixSteps());
      await rt.worker({ leaseMs: 3_000 }).start();
      const [plan] = rt.plans;
      const session = Session.fromUserMessage("go");
      const run = await rt.submit(plan!, session);
      const result = await rt.result(run.id);
      expect(result.messages().map((m) => m.content)).toEqual([
        "go",
        ...Array.from({ length: 6 }, (_, i) => `step ${i}`),
      ]);
      if (plain) {
        // A new session: its head is read, then the plain submit; each step commit on its own.
        expect(calls).toMatchObject({ findSessionHead: 1, submit: 1, submitIfNew: 0, commitSteps: 0 });
        expect(calls.commitStep).toBe(5);
      } else {
        // One round trip for the new session; step commits in batches, the last step in its finish.
        expect(calls).toMatchObject({ submitIfNew: 1, findSessionHead: 0, submit: 0 });
        expect(calls.commitStep + calls.commitSteps).toBeGreaterThan(0);
        expect(calls.commitStep + calls.commitSteps).toBeLessThanOrEqual(5);
      }
    });
  }
});
