import {
  Agent,
  defineTool,
  type EffectClass,
  type JsonValue,
  ScriptedProvider,
  Session,
  type Tool,
} from "@openrath/core";
import { defineWorkflow } from "@openrath/runtime-durable";
import { describe, expect, it } from "vitest";
import { eventually, journalHarness } from "./testing/journal-harness.js";

const harness = journalHarness();

const results = (session: Session) =>
  session.chunks
    .filter((c) => c.kind === "tool_result")
    .map((c) => JSON.parse((c as { content: string }).content) as Record<string, JsonValue>);

/** An agent that calls `tool` with each of `calls` in turn, then answers. */
function caller(tool: Tool<never>, calls: JsonValue[]) {
  return new Agent({
    name: "caller",
    tools: [tool],
    provider: new ScriptedProvider((request) => {
      const done = request.messages.filter((m) => m.role === "tool").length;
      return done < calls.length
        ? { toolCalls: [{ name: tool.name, arguments: calls[done]!, id: `c${done}` }] }
        : { text: "done" };
    }),
  });
}

/** A `send` tool whose calls hang until `release()` (the call is in flight when the worker goes away). */
function hangingSend(effect: EffectClass, keyed: boolean) {
  const executions: string[] = [];
  let release: () => void = () => {};
  let hang = true;
  const tool = defineTool<{ to: string }>({
    name: "send",
    description: "Send a message",
    parameters: { type: "object", properties: { to: { type: "string" } }, required: ["to"] },
    effect,
    ...(keyed ? { idempotencyKey: (args: { to: string }) => `send-${args.to}` } : {}),
    execute: async ({ to }, ctx) => {
      executions.push(ctx.idempotencyKey ?? to);
      // The first call hangs and ignores its signal, like a call the network swallowed.
      if (hang) {
        hang = false;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      }
      return { sent: to };
    },
  });
  return { tool, executions, release: () => release() };
}

describe("the effect ledger on the durable runtime (PGlite)", () => {
  it("a keyed success is returned without calling the tool again; the key with other arguments is a conflict", async () => {
    const { runtime } = await harness.setup();
    const charges: number[] = [];
    const charge = defineTool<{ order: string; cents: number }>({
      name: "charge",
      description: "Charge an order",
      parameters: {
        type: "object",
        properties: { order: { type: "string" }, cents: { type: "number" } },
        required: ["order", "cents"],
      },
      effect: "idempotent",
      idempotencyKey: (args) => `charge-${args.order}`,
      execute: ({ cents }, ctx) => {
        charges.push(cents);
        return { charged: cents, key: ctx.idempotencyKey ?? null };
      },
    });
    const agent = caller(charge, [
      { order: "A", cents: 500 },
      { order: "A", cents: 500 },
      { order: "A", cents: 900 },
    ]);
    const flow = defineWorkflow("charges").step("charge", (s, ctx) => agent.run(s, ctx), { entry: true });
    await harness.worker(runtime, [flow]);
    const out = await runtime.result((await runtime.submit("charges", Session.fromUserMessage("pay"))).id);
    expect(charges).toEqual([500]);
    const r = results(out);
    expect(r[0]).toEqual({ charged: 500, key: "charge-A" });
    expect(r[1]).toEqual(r[0]);
    expect(r[2]).toMatchObject({ ok: false, error_kind: "effect_conflict" });
  });

  it("a long call on a healthy worker is never flagged, however long it takes", async () => {
    const { runtime, store } = await harness.setup();
    const slow = defineTool({
      name: "slow_send",
      description: "Takes a while",
      parameters: {},
      execute: async () => {
        await new Promise((r) => setTimeout(r, 3500));
        return { sent: true };
      },
    });
    const agent = caller(slow, [{}]);
    const flow = defineWorkflow("slow").step("send", (s, ctx) => agent.run(s, ctx), { entry: true });
    // Three and a half lease lengths: the heartbeat keeps the lease, so the call is never in doubt.
    await harness.worker(runtime, [flow], { leaseMs: 1000 });
    const run = await runtime.submit("slow", Session.fromUserMessage("go"));
    expect(results(await runtime.result(run.id))).toEqual([{ sent: true }]);
    const [effect] = (await runtime.effects.list({ runId: run.id, status: "succeeded" })).items;
    expect(effect).toMatchObject({ effect: "non_idempotent", dispatches: 1 });
    expect((await store.readEvents(run.id)).some((e) => e.type === "run.effect.review")).toBe(false);
  });

  it("a non_idempotent call whose worker went away mid-call parks for review, is never sent again on its own, and resumes with the operator's result", async () => {
    const { runtime, store } = await harness.setup();
    const send = hangingSend("non_idempotent", false);
    const flow = () =>
      defineWorkflow("review").step("send", (s, ctx) => caller(send.tool, [{ to: "ana" }]).run(s, ctx), {
        entry: true,
      });
    const first = await harness.worker(runtime, [flow()], { workerId: "first" });
    const run = await runtime.submit("review", Session.fromUserMessage("send it"));
    await eventually(async () => send.executions.length === 1, "the call to be dispatched");
    // The worker goes away with the call in flight: the run is given back, the call's outcome unknown.
    await first.stop({ drain: false });
    await harness.worker(runtime, [flow()], { workerId: "second", leaseMs: 600 });
    const parked = await runtime.wait(run.id, { onPark: "return" });
    expect(parked.status).toBe("needs_review");
    await new Promise((r) => setTimeout(r, 1000));
    expect((await store.getRun(run.id))?.status).toBe("needs_review");
    expect(send.executions).toEqual(["ana"]);

    const inbox = await runtime.effects.list({ runId: run.id });
    expect(inbox.items).toHaveLength(1);
    const [effect] = inbox.items;
    expect(effect).toMatchObject({
      tool: "send",
      status: "needs_review",
      effect: "non_idempotent",
      arguments: { to: "ana" },
      dispatches: 1,
    });
    await expect(
      runtime.effects.resolve(effect!.id, { kind: "failed", actor: "ana" } as never),
    ).rejects.toMatchObject({ code: "invalid_argument" });
    const { run: resumed } = await runtime.effects.resolve(effect!.id, {
      kind: "succeeded",
      result: { sent: "ana", via: "provider dashboard" },
      actor: "ops@example.com",
      reason: "the provider shows it delivered",
    });
    expect(resumed.status).toBe("queued");
    const out = await runtime.result(run.id);
    expect(results(out)).toEqual([{ sent: "ana", via: "provider dashboard" }]);
    expect(send.executions).toEqual(["ana"]);
    const evidence = out.chunks.find((c) => c.kind === "event" && c.name === "effect.resolved");
    expect(evidence).toMatchObject({
      data: { effectId: effect!.id, tool: "send", callId: "c0", kind: "succeeded", actor: "ops@example.com" },
    });
    const resolvedEvent = (await store.readEvents(run.id)).find((e) => e.type === "run.effect.resolved");
    expect(resolvedEvent?.data).toMatchObject({
      effectId: effect!.id,
      kind: "succeeded",
      actor: "ops@example.com",
      to: "queued",
    });
    await expect(
      runtime.effects.resolve(effect!.id, { kind: "retry", actor: "ops@example.com" }),
    ).rejects.toMatchObject({ code: "effect_not_under_review" });
    send.release();
  });

  it("an operator's failed resolution goes back to the model; retry approved sends the call again", async () => {
    const { runtime } = await harness.setup();
    for (const kind of ["failed", "retry"] as const) {
      const send = hangingSend("non_idempotent", false);
      const name = `resolve-${kind}`;
      const flow = () =>
        defineWorkflow(name).step("send", (s, ctx) => caller(send.tool, [{ to: "bo" }]).run(s, ctx), {
          entry: true,
        });
      const first = await harness.worker(runtime, [flow()], { workerId: `${name}-1` });
      const run = await runtime.submit(name, Session.fromUserMessage("send"));
      await eventually(async () => send.executions.length === 1, "the call to be dispatched");
      await first.stop({ drain: false });
      await harness.worker(runtime, [flow()], { workerId: `${name}-2` });
      await runtime.wait(run.id, { onPark: "return" });
      const [effect] = (await runtime.effects.list({ runId: run.id })).items;
      await runtime.effects.resolve(
        effect!.id,
        kind === "failed"
          ? { kind, actor: "ops", reason: "it bounced" }
          : { kind, actor: "ops", reason: "never left" },
      );
      const out = await runtime.result(run.id);
      if (kind === "failed") {
        expect(results(out)[0]).toMatchObject({ ok: false, error_kind: "effect_failed" });
        expect(String(results(out)[0]!.message)).toMatch(/ops.*it bounced/);
        expect(send.executions).toHaveLength(1);
      } else {
        expect(results(out)).toEqual([{ sent: "bo" }]);
        expect(send.executions).toHaveLength(2);
        expect((await runtime.effects.get(effect!.id))?.dispatches).toBe(2);
      }
      send.release();
    }
  });

  it("an idempotent keyed call whose worker went away mid-call is retried once and succeeds", async () => {
    const { runtime } = await harness.setup();
    const send = hangingSend("idempotent", true);
    const flow = () =>
      defineWorkflow("retry").step("send", (s, ctx) => caller(send.tool, [{ to: "cy" }]).run(s, ctx), {
        entry: true,
      });
    const first = await harness.worker(runtime, [flow()], { workerId: "first" });
    const run = await runtime.submit("retry", Session.fromUserMessage("send"));
    await eventually(async () => send.executions.length === 1, "the call to be dispatched");
    await first.stop({ drain: false });
    await harness.worker(runtime, [flow()], { workerId: "second" });
    const out = await runtime.result(run.id);
    expect(results(out)).toEqual([{ sent: "cy" }]);
    expect(send.executions).toEqual(["send-cy", "send-cy"]);
    const [effect] = (await runtime.effects.list({ runId: run.id, status: "succeeded" })).items;
    expect(effect).toMatchObject({ idempotencyKey: "send-cy", dispatches: 2 });
    send.release();
  });
});
