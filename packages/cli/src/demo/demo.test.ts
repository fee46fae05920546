import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenRathError, ReplayProvider, type ScriptedProvider, Session } from "@openrath/core";
import { readSessionLogs } from "@openrath/core/node";
import { MamsWorkflow, scriptedBrain } from "@openrath/demo";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoResult, runDemo } from "./demo.js";

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
  // What the team computes and the shape of its lineage are the workflow's tests, in @openrath/demo.
  it("prints the lineage, then the answer the team computed in the sandbox", () => {
    expect(first.output).toContain("Lineage:\n");
    expect(first.output).toContain(`Answer: ${first.session.text()}`);
    expect(first.output).toContain('The sentence has 9 words. The longest word is "quick".');
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
