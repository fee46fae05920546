import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeAllSandboxes, defaultRegistry, Session } from "@openrath/core";
import { createDurableRuntime, type DurableRuntime, type RunStoreV1 } from "@openrath/runtime-durable";
import { localSandbox } from "@openrath/sandbox-local";
import { pgliteStore } from "@openrath/store-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedBrain } from "../scripted-brain.js";
import { TASK } from "../task.js";
import { DurableMamsWorkflow } from "./durable-mams-workflow.js";

let dir: string;
let store: RunStoreV1;
let runtime: DurableRuntime;

beforeAll(async () => {
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
  dir = await mkdtemp(join(tmpdir(), "openrath-demo-durable-"));
  store = await pgliteStore();
  runtime = createDurableRuntime({ store });
}, 60_000);

afterAll(async () => {
  await runtime.close();
  await closeAllSandboxes();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Runs one submitted run of `flow` to its end with one worker. Returns the steps it went through:
 * each checkpointed step, then the one the last checkpoint named, whose result finished the run.
 */
async function runToEnd(flow: DurableMamsWorkflow) {
  await runtime.register(flow);
  const run = await runtime.submit(flow.name, Session.fromUserMessage(TASK, { author: "user" }));
  const worker = runtime.worker({ concurrency: 1 });
  await worker.start();
  try {
    const ended = await runtime.wait(run.id);
    const checkpoints = (await store.readEvents(run.id))
      .filter((e) => e.type === "run.checkpoint")
      .map((e) => e.data as { stepId: string; nextStep: string | null });
    const steps = [...checkpoints.map((c) => c.stepId), checkpoints.at(-1)?.nextStep];
    return { ended, steps, session: await runtime.result(run.id) };
  } finally {
    await worker.stop({ drain: false });
    await closeAllSandboxes();
  }
}

describe("the durable MAMS workflow", () => {
  it("checkpoints after every member's turn and ends with the writer's answer", async () => {
    const flow = new DurableMamsWorkflow(scriptedBrain(), { workspace: join(dir, "ok") });
    const { ended, steps, session } = await runToEnd(flow);
    expect(ended.status).toBe("succeeded");
    expect(steps).toEqual([
      "plan",
      "wordsmith",
      "analyst",
      "statistician",
      "compress",
      "decide",
      "route",
      "writer",
    ]);
    expect(session.text()).toContain("The sentence has 9 words.");
    expect(session.text()).toContain('The longest word is "quick".');
    expect(session.text()).toContain("26 distinct letters; most frequent: o=4, e=3, h=2");
  }, 120_000);

  it("takes the reviewer's branch when the specialists' programs fail", async () => {
    // Every `node` the specialists start fails before their program runs.
    const env = { NODE_OPTIONS: `--require ${join(dir, "no-such-module.cjs")}` };
    const flow = new DurableMamsWorkflow(scriptedBrain(), { workspace: join(dir, "failing"), env });
    const { ended, steps, session } = await runToEnd(flow);
    expect(ended.status).toBe("succeeded");
    expect(steps.slice(-3)).toEqual(["decide", "route", "reviewer"]);
    expect(session.text()).toBe("One of the programs failed; here is what went wrong.");
  }, 120_000);
});
