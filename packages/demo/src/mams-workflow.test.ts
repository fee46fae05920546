import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  closeAllSandboxes,
  defaultRegistry,
  lineageGraph,
  type ScriptedProvider,
  Session,
} from "@openrath/core";
import { localSandbox } from "@openrath/sandbox-local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MamsWorkflow } from "./mams-workflow.js";
import { scriptedBrain } from "./scripted-brain.js";
import { TASK } from "./task.js";

let dir: string;
let brain: ScriptedProvider;
let answer: Session;

/** Runs the team on the demo task with a fresh scripted brain, the specialists sharing `workspace`. */
async function runTeam(workspace: string, env?: Record<string, string>) {
  const provider = scriptedBrain();
  const flow = new MamsWorkflow(provider, { workspace, ...(env ? { env } : {}) });
  try {
    return { provider, session: await flow.run(Session.fromUserMessage(TASK, { author: "user" })) };
  } finally {
    await closeAllSandboxes();
  }
}

beforeAll(async () => {
  const registry = defaultRegistry();
  if (!registry.has("sandbox", "local")) registry.registerSandbox(localSandbox());
  dir = await mkdtemp(join(tmpdir(), "openrath-demo-"));
  ({ provider: brain, session: answer } = await runTeam(join(dir, "workspace")));
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the MAMS workflow with the scripted brain", () => {
  it("answers with what the specialists' programs computed in the sandbox", () => {
    expect(answer.text()).toContain("The sentence has 9 words.");
    expect(answer.text()).toContain('The longest word is "quick".');
    expect(answer.text()).toContain("26 distinct letters; most frequent: o=4, e=3, h=2");
  });

  it("runs the three specialists' programs in one shared workspace", () => {
    for (const file of ["wordsmith/count-words.js", "analyst/longest-word.js", "statistician/letters.js"]) {
      expect(existsSync(join(dir, "workspace", file)), file).toBe(true);
    }
  });

  it("has the promised shape: three forks, two three-way merges, a compression, a routed writer", () => {
    const graph = lineageGraph(answer);
    const ops = graph.nodes.map((n) => `${n.op}:${n.operator}`);
    expect(ops.filter((o) => o.startsWith("fork:"))).toHaveLength(3);
    const merges = graph.nodes.filter((n) => n.op === "merge");
    expect(merges).toHaveLength(2);
    for (const m of merges) expect(m.extras.strategy).toBe("three-way");
    // The planner's two chunks are shared by all three branches and appear once after merging.
    expect(merges.at(-1)!.extras["merge.shared"]).toBe(2);
    expect(ops).toContain("compress:compressor");
    expect(ops).toContain("loop:writer");
    const decision = answer.chunks.find((c) => c.kind === "event" && c.name === "selector.decision");
    expect(decision).toMatchObject({ data: { selector: "router", chosen: "writer", index: 0 } });
  });

  it("plays every role in 13 model calls: planner, 3 × 3 specialist turns, compressor, router, writer", () => {
    expect(brain.callCount).toBe(13);
  });

  it("routes to the reviewer when the specialists' programs fail", async () => {
    // Every `node` the specialists start fails before their program runs.
    const failing = await runTeam(join(dir, "failing"), {
      NODE_OPTIONS: `--require ${join(dir, "no-such-module.cjs")}`,
    });
    const decision = failing.session.chunks.find((c) => c.kind === "event" && c.name === "selector.decision");
    expect(decision).toMatchObject({ data: { chosen: "reviewer", index: 1 } });
    expect(failing.session.text()).toBe("One of the programs failed; here is what went wrong.");
    expect(lineageGraph(failing.session).nodes.map((n) => `${n.op}:${n.operator}`)).toContain(
      "loop:reviewer",
    );
  });
});
