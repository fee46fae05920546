import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lineageGraph, OpenRathError, ReplayProvider, type ScriptedProvider, Session } from "@openrath/core";
import { readSessionLogs } from "@openrath/core/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoResult, runDemo } from "./demo.js";
import { MamsWorkflow } from "./mams-workflow.js";
import { scriptedBrain } from "./scripted-brain.js";

let dir: string;
let first: DemoResult;
let brain: ScriptedProvider;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-demo-"));
  brain = scriptedBrain();
  first = await runDemo({ provider: brain, record: join(dir, "recording") });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the MAMS demo", () => {
  it("answers with what the specialists' programs computed in the sandbox", () => {
    expect(first.session.text()).toContain("The sentence has 9 words.");
    expect(first.session.text()).toContain('The longest word is "quick".');
    expect(first.session.text()).toContain("26 distinct letters; most frequent: o=4, e=3, h=2");
  });

  it("has the promised shape: three forks, two three-way merges, a compression, a routed writer", () => {
    const graph = lineageGraph(first.session);
    const ops = graph.nodes.map((n) => `${n.op}:${n.operator}`);
    expect(ops.filter((o) => o.startsWith("fork:"))).toHaveLength(3);
    const merges = graph.nodes.filter((n) => n.op === "merge");
    expect(merges).toHaveLength(2);
    for (const m of merges) expect(m.extras.strategy).toBe("three-way");
    // The planner's two chunks are shared by all three branches and appear once after merging.
    expect(merges.at(-1)!.extras["merge.shared"]).toBe(2);
    expect(ops).toContain("compress:compressor");
    expect(ops).toContain("loop:writer");
    const decision = first.session.chunks.find((c) => c.kind === "event" && c.name === "selector.decision");
    expect(decision).toMatchObject({ data: { selector: "router", chosen: "writer", index: 0 } });
  });

  it("prints a usage table whose per-agent rows add up to the session's usage, compression included", () => {
    const total = first.session.usage.totalTokens;
    expect(total).toBeGreaterThan(0);
    const row = first.output.split("\n").find((l) => l.startsWith("total"))!;
    expect(row.replace(/,/g, "")).toContain(String(total));
    for (const agent of [
      "planner",
      "wordsmith",
      "analyst",
      "statistician",
      "compressor",
      "router",
      "writer",
    ]) {
      expect(first.output).toMatch(new RegExp(`mams/${agent}\\s+\\d`));
    }
    expect(brain.callCount).toBe(13);
  });

  it("records every session of the run as a log in a directory, with a manifest", async () => {
    const logs = await readSessionLogs(join(dir, "recording"));
    expect(logs.map((l) => l.session.id).sort()).toEqual(first.sessions.map((s) => s.id).sort());
    expect(logs.every((l) => l.closed)).toBe(true);
    expect(logs.map((l) => l.session.id)).toContain(first.session.id);
    expect(first.logs).toHaveLength(first.sessions.length);
    expect(existsSync(join(dir, "recording", "recording.json"))).toBe(true);
  });

  it("replays from its recording with identical output and no model calls", async () => {
    const replayed = await runDemo({ replay: join(dir, "recording") });
    expect(replayed.output).toBe(first.output);
    expect(replayed.provider).toBeInstanceOf(ReplayProvider);
    expect((replayed.provider as ReplayProvider).servedCount).toBe(13);
    expect((replayed.provider as ReplayProvider).remaining).toBe(0);
    expect(brain.callCount).toBe(13);
  }, 60_000);

  it("fails closed when the run no longer matches the recording", async () => {
    const replay = ReplayProvider.from(
      ...(await readSessionLogs(join(dir, "recording"))).map((l) => l.session),
    );
    const error = await new MamsWorkflow(replay)
      .run(Session.fromUserMessage('Analyse the sentence "a different one"'))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(OpenRathError.isInstance(error)).toBe(true);
    expect(OpenRathError.isInstance((error as Error).cause, "replay_miss")).toBe(true);
    expect(((error as Error).cause as Error).message).toMatch(/Replay diverged at model call 1/);
  });
});
