import { Agent, defineTool, ScriptedProvider, Session } from "@openrath/core";
import { defineWorkflow, type StepContext } from "@openrath/runtime-durable";
import { describe, expect, it } from "vitest";
import type { QueryEvent } from "./postgres-store.js";
import { eventually, journalHarness } from "./testing/journal-harness.js";

const harness = journalHarness();

/** Two turns that call `lookup`, then the answer; scripted by the request, as the journal needs. */
function agent(execute: (args: { k: number }) => unknown): Agent {
  const lookup = defineTool<{ k: number }>({
    name: "lookup",
    description: "Look a value up",
    parameters: { type: "object", properties: { k: { type: "number" } }, required: ["k"] },
    effect: "read_only",
    execute,
  });
  return new Agent({
    name: "reader",
    tools: [lookup],
    provider: new ScriptedProvider((request) => {
      const turn = request.messages.filter((m) => m.role === "tool").length + 1;
      return turn > 2
        ? { text: "done" }
        : { toolCalls: [{ name: "lookup", arguments: { k: turn }, id: `call_${turn}` }] };
    }),
  });
}

const journalInserts = (sent: readonly QueryEvent[]) =>
  sent.filter((e) => /insert into \S*journal/.test(e.sql));

describe("a model call's journal entry (PGlite)", () => {
  it("is in the journal while the turn's tools still run, not only once they are done", async () => {
    const { store, runtime } = await harness.setup();
    let step: StepContext | undefined;
    const held: number[] = [];
    // The tool waits until the journal holds the reply that asked for it: before issue 21 the
    // entry waited for the tool's own write, so this tool would wait forever (and fail).
    const slow = agent(async ({ k }) => {
      const models = await eventually(async () => {
        const state = await store.journal!.openStep(step!.fence);
        const n = state.entries.filter((e) => e.kind === "model").length;
        return n >= k ? n : undefined;
      }, `the journal entry of model call ${k}`);
      held.push(models);
      return { k };
    });
    const flow = defineWorkflow("slow-tools").step(
      "read",
      (session, ctx) => {
        step = ctx;
        return slow.run(session, ctx);
      },
      { entry: true },
    );
    await harness.worker(runtime, [flow]);
    const out = await runtime.result((await runtime.submit("slow-tools", Session.fromUserMessage("go"))).id);
    expect(out.text()).toBe("done");
    expect(held).toEqual([1, 2]);
  });

  it("rides on the outcome of a tool that answers within the same event-loop turn: one journal statement per turn", async () => {
    const sent: QueryEvent[] = [];
    const { runtime } = await harness.setup({ onQuery: (e) => sent.push(e) });
    const quick = agent(({ k }) => ({ k }));
    let during: QueryEvent[] = [];
    const flow = defineWorkflow("quick-tools").step(
      "read",
      async (session, ctx) => {
        const from = sent.length;
        const out = await quick.run(session, ctx);
        during = sent.slice(from);
        return out;
      },
      { entry: true },
    );
    await harness.worker(runtime, [flow]);
    await runtime.result((await runtime.submit("quick-tools", Session.fromUserMessage("go"))).id);
    // Two tool outcomes, each carrying the reply that asked for it; the answer's own entry is
    // written after the agent returns (the step waits for it before it commits).
    expect(journalInserts(during)).toHaveLength(2);
  });

  it("commits strictly on PGlite whatever journalDurability says: PGlite has no WAL writer to flush a relaxed commit", async () => {
    const sent: QueryEvent[] = [];
    const { runtime } = await harness.setup({ journalDurability: "relaxed", onQuery: (e) => sent.push(e) });
    const flow = defineWorkflow("strict-on-pglite").step(
      "read",
      (session, ctx) => agent(({ k }) => ({ k })).run(session, ctx),
      { entry: true },
    );
    await harness.worker(runtime, [flow]);
    await runtime.result((await runtime.submit("strict-on-pglite", Session.fromUserMessage("go"))).id);
    const writes = journalInserts(sent);
    expect(writes.length).toBeGreaterThan(0);
    for (const write of writes) expect(write.sql).not.toContain("synchronous_commit");
  });
});
