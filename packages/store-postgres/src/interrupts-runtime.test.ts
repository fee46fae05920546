import {
  Agent,
  defineTool,
  type JsonValue,
  ScriptedProvider,
  Session,
  type StandardSchemaLike,
  type ToolContext,
} from "@openrath/core";
import { createDurableRuntime, defineWorkflow, journalOf } from "@openrath/runtime-durable";
import { type InterruptDecision, inProcessSignals } from "@openrath/runtime-durable/store";
import { describe, expect, it } from "vitest";
import { journalHarness } from "./testing/journal-harness.js";

const harness = journalHarness();

/** A hand-written Standard Schema (as zod 4 makes one): a city name, trimmed on the way in. */
const citySchema: StandardSchemaLike<{ city: string }> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate(value) {
      const city = (value as { city?: unknown })?.city;
      return typeof city === "string" && city.trim() !== ""
        ? { value: { city: city.trim() } }
        : { issues: [{ message: "city must be a non-empty string", path: ["city"] }] };
    },
    jsonSchema: {
      input: () => ({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { city: { type: "string", minLength: 1 } },
        required: ["city"],
      }),
    },
  },
};

const results = (session: Session) =>
  session.chunks
    .filter((c) => c.kind === "tool_result")
    .map((c) => JSON.parse((c as { content: string }).content) as Record<string, JsonValue>);

describe("interrupts on the durable runtime (PGlite)", () => {
  it("ctx.interrupt waits durably and resumes where it asked, without re-running the calls before it; two interrupts are told apart", async () => {
    const { runtime, store } = await harness.setup();
    let modelCalls = 0;
    let sideEffects = 0;
    const agent = new Agent({
      name: "planner",
      provider: new ScriptedProvider(() => {
        modelCalls++;
        return { text: "plan: visit a city" };
      }),
    });
    const decisions: InterruptDecision[] = [];
    const flow = defineWorkflow("ask-twice").step(
      "plan",
      async (session, ctx) => {
        const planned = await agent.run(session, ctx);
        await journalOf(ctx)!.run("book a slot", () => ({ slot: ++sideEffects }));
        const where = await ctx.interrupt({
          kind: "input",
          request: { question: "Which city?" },
          schema: citySchema,
        });
        decisions.push(where);
        const ok = await ctx.interrupt({
          kind: "review",
          request: { plan: planned.text() ?? "", city: (where.payload as { city: string }).city },
        });
        decisions.push(ok);
        return planned.append({
          kind: "assistant",
          content: `going to ${(where.payload as { city: string }).city}: ${ok.kind}`,
        });
      },
      { entry: true },
    );
    await harness.worker(runtime, [flow]);
    const run = await runtime.submit("ask-twice", Session.fromUserMessage("plan a trip"));

    const waiting = await runtime.wait(run.id, { onPark: "return" });
    expect(waiting).toMatchObject({ status: "waiting", leaseHolder: null });
    const first = await runtime.interrupts.list();
    expect(first.items).toHaveLength(1);
    expect(first.items[0]).toMatchObject({
      runId: run.id,
      stepId: "plan",
      kind: "input",
      request: { question: "Which city?" },
    });
    expect(first.items[0]!.schema).toEqual({
      type: "object",
      properties: { city: { type: "string", minLength: 1 } },
      required: ["city"],
    });
    await expect(
      runtime.interrupts.decide(first.items[0]!.id, { kind: "respond", actor: "ana", payload: { city: "" } }),
    ).rejects.toMatchObject({ code: "invalid_decision" });
    await runtime.interrupts.decide(first.items[0]!.id, {
      kind: "respond",
      actor: "ana",
      payload: { city: "  Oslo " },
    });

    await eventuallyWaitingOn(runtime, run.id, "review");
    expect([modelCalls, sideEffects]).toEqual([1, 1]);
    const second = await runtime.interrupts.list();
    expect(second.items.map((i) => i.request)).toEqual([{ plan: "plan: visit a city", city: "Oslo" }]);
    await runtime.interrupts.decide(second.items[0]!.id, { kind: "approve", actor: "bob", reason: "fine" });
    await expect(
      runtime.interrupts.decide(second.items[0]!.id, { kind: "reject", actor: "eve" }),
    ).rejects.toMatchObject({ code: "interrupt_decided" });

    const out = await runtime.result(run.id);
    expect(out.text()).toBe("going to Oslo: approve");
    expect([modelCalls, sideEffects]).toEqual([1, 1]);
    // Each resumed attempt got the earlier decisions back from the journal, in order.
    expect(decisions.map((d) => [d.kind, d.actor, d.payload ?? null])).toEqual([
      ["respond", "ana", { city: "Oslo" }],
      ["respond", "ana", { city: "Oslo" }],
      ["approve", "bob", null],
    ]);
    const types = (await store.readEvents(run.id)).map((e) => e.type);
    expect(types.filter((t) => t.startsWith("run.interrupt."))).toEqual([
      "run.interrupt.created",
      "run.interrupt.decided",
      "run.interrupt.created",
      "run.interrupt.decided",
    ]);
  });

  it("a bad interrupt request is invalid_argument and parks nothing", async () => {
    const { runtime } = await harness.setup();
    const seen: string[] = [];
    const flow = defineWorkflow("bad-ask").step(
      "ask",
      async (session, ctx) => {
        for (const bad of [
          { kind: "question", request: {} },
          { kind: "input", request: { at: new Date() } },
          { kind: "input", request: {}, timeoutMs: -1 },
          { kind: "input", request: {}, onTimeout: { kind: "approve" } },
          { kind: "input", request: {}, schema: "a string" },
        ]) {
          await ctx.interrupt(bad as never).catch((e) => seen.push(e.code));
        }
        return session;
      },
      { entry: true },
    );
    await harness.worker(runtime, [flow]);
    const run = await runtime.submit("bad-ask", Session.fromUserMessage("x"));
    expect((await runtime.wait(run.id)).status).toBe("succeeded");
    expect(seen).toEqual(Array(5).fill("invalid_argument"));
    expect((await runtime.interrupts.list({ status: "all" })).items).toEqual([]);
  });

  it("a timeout takes the declared default decision; without one the run ends timed_out", async () => {
    const { runtime } = await harness.setup();
    const flow = defineWorkflow("impatient").step(
      "ask",
      async (session, ctx) => {
        const d = await ctx.interrupt({
          kind: "approval",
          request: { ship: true },
          timeoutMs: 150,
          ...(ctx.metadata.withDefault ? { onTimeout: { kind: "reject", reason: "nobody answered" } } : {}),
        });
        return session.append({ kind: "assistant", content: `${d.kind} by ${d.actor}: ${d.reason}` });
      },
      { entry: true },
    );
    await harness.worker(runtime, [flow], { leaseMs: 600 });
    const a = await runtime.submit("impatient", Session.fromUserMessage("a"), {
      metadata: { withDefault: true },
    });
    const b = await runtime.submit("impatient", Session.fromUserMessage("b"));
    // Both park first; the interrupts' timeouts settle them without anyone deciding.
    expect((await runtime.result(a.id, { onPark: "wait" })).text()).toBe(
      "reject by openrath-system: nobody answered",
    );
    expect(await runtime.wait(b.id, { onPark: "wait" })).toMatchObject({
      status: "timed_out",
      error: { code: "interrupt_timeout", stepId: "ask" },
    });
  });

  it("a tool that needs approval asks before the call; reject, respond, edit and approve each do what they say", async () => {
    const { runtime } = await harness.setup();
    const sent: string[] = [];
    const send = defineTool<{ to: string; text: string }>({
      name: "send",
      description: "Send a message",
      parameters: {
        type: "object",
        properties: { to: { type: "string" }, text: { type: "string" } },
        required: ["to", "text"],
        additionalProperties: false,
      },
      needsApproval: true,
      execute: ({ to, text }) => {
        sent.push(`${to}: ${text}`);
        return { delivered: to };
      },
    });
    const agent = new Agent({
      name: "mailer",
      tools: [send],
      provider: new ScriptedProvider((request) => {
        const done = request.messages.filter((m) => m.role === "tool").length;
        return done < 4
          ? {
              toolCalls: [
                { name: "send", arguments: { to: `user${done}`, text: "hello" }, id: `send_${done}` },
              ],
            }
          : { text: "all handled" };
      }),
    });
    const flow = defineWorkflow("mail").step("mail", (s, ctx) => agent.run(s, ctx), { entry: true });
    await harness.worker(runtime, [flow]);
    const run = await runtime.submit("mail", Session.fromUserMessage("mail everyone"));
    const decisions = [
      { kind: "reject", actor: "ana", reason: "not this one" },
      { kind: "respond", actor: "ana", payload: { result: { delivered: "by hand" } } },
      { kind: "edit", actor: "ana", payload: { arguments: { to: "user2", text: "hello, edited" } } },
      { kind: "approve", actor: "ana" },
    ] as const;
    for (const [i, decision] of decisions.entries()) {
      await eventuallyWaitingOn(runtime, run.id, "approval");
      const [pending] = (await runtime.interrupts.list({ runId: run.id })).items;
      expect(pending!.request).toMatchObject({
        tool: "send",
        arguments: { to: `user${i}`, text: "hello" },
        callId: `send_${i}`,
        agent: "mailer",
      });
      if (decision.kind === "edit") {
        await expect(
          runtime.interrupts.decide(pending!.id, {
            kind: "edit",
            actor: "ana",
            payload: { arguments: { to: 7 } },
          }),
        ).rejects.toMatchObject({ code: "invalid_decision" });
      }
      await runtime.interrupts.decide(pending!.id, decision);
    }
    const out = await runtime.result(run.id);
    expect(sent).toEqual(["user2: hello, edited", "user3: hello"]);
    const r = results(out);
    expect(r[0]).toMatchObject({ ok: false, error_kind: "tool_rejected" });
    expect(String(r[0]!.message)).toMatch(/ana rejected .*not this one/);
    expect(r.slice(1)).toEqual([{ delivered: "by hand" }, { delivered: "user2" }, { delivered: "user3" }]);
    expect(out.text()).toBe("all handled");
  });

  it("a tool can ask from inside its call: it is called again once decided, and its ask then answers at once", async () => {
    const { runtime } = await harness.setup();
    let starts = 0;
    const confirm = defineTool<{ amount: number }>({
      name: "refund",
      description: "Refund an amount after a human confirms it",
      parameters: { type: "object", properties: { amount: { type: "number" } }, required: ["amount"] },
      effect: "non_idempotent",
      execute: async ({ amount }, ctx: ToolContext) => {
        starts++;
        const d = await ctx.interrupt!({ kind: "approval", request: { refund: amount } });
        return { refunded: d.kind === "approve" ? amount : 0, by: d.actor ?? null };
      },
    });
    const agent = new Agent({
      name: "support",
      tools: [confirm],
      provider: new ScriptedProvider((request) =>
        request.messages.some((m) => m.role === "tool")
          ? { text: "refund handled" }
          : { toolCalls: [{ name: "refund", arguments: { amount: 30 }, id: "r1" }] },
      ),
    });
    const flow = defineWorkflow("refund").step("support", (s, ctx) => agent.run(s, ctx), { entry: true });
    await harness.worker(runtime, [flow]);
    const run = await runtime.submit("refund", Session.fromUserMessage("refund me"));
    await eventuallyWaitingOn(runtime, run.id, "approval");
    const [ask] = (await runtime.interrupts.list()).items;
    expect(ask!.request).toEqual({ refund: 30 });
    // The tool stopped itself to ask: its effect is not in doubt.
    expect((await runtime.effects.list({ runId: run.id, status: "prepared" })).items).toHaveLength(1);
    await runtime.interrupts.decide(ask!.id, { kind: "approve", actor: "lee" });
    const out = await runtime.result(run.id);
    expect(results(out)).toEqual([{ refunded: 30, by: "lee" }]);
    expect(starts).toBe(2);
    const [effect] = (await runtime.effects.list({ runId: run.id, status: "succeeded" })).items;
    expect(effect).toMatchObject({ tool: "refund", dispatches: 2, status: "succeeded" });
  });

  it("with signals the store does not publish (Redis), a decision still wakes the worker at once", async () => {
    const { store } = await harness.setup();
    const runtime = createDurableRuntime({ store, signals: inProcessSignals() });
    const flow = defineWorkflow("woken").step(
      "ask",
      async (session, ctx) => {
        const d = await ctx.interrupt({ kind: "approval", request: { go: true } });
        return session.append({ kind: "assistant", content: d.kind });
      },
      { entry: true },
    );
    // A long lease: the worker's safety sweep (a third of it) would take 20 s to notice the run.
    await harness.worker(runtime, [flow], { leaseMs: 60_000 });
    const run = await runtime.submit("woken", Session.fromUserMessage("x"));
    await runtime.wait(run.id, { onPark: "return", signal: AbortSignal.timeout(10_000) });
    const [pending] = (await runtime.interrupts.list()).items;
    const decided = Date.now();
    await runtime.interrupts.decide(pending!.id, { kind: "approve", actor: "ana" });
    expect((await runtime.result(run.id, { signal: AbortSignal.timeout(10_000) })).text()).toBe("approve");
    expect(Date.now() - decided).toBeLessThan(5_000);
  });

  it("a run waiting on a stopped worker is finished by another runtime once decided", async () => {
    const { runtime, store } = await harness.setup();
    const flow = () =>
      defineWorkflow("handover").step(
        "ask",
        async (session, ctx) => {
          const d = await ctx.interrupt({ kind: "approval", request: { go: true } });
          return session.append({ kind: "assistant", content: d.kind });
        },
        { entry: true },
      );
    const worker = await harness.worker(runtime, [flow()]);
    const run = await runtime.submit("handover", Session.fromUserMessage("x"));
    await runtime.wait(run.id, { onPark: "return" });
    await worker.stop({ drain: false });
    const other = createDurableRuntime({ store });
    await harness.worker(other, [flow()], { workerId: "other" });
    const page = await other.interrupts.list();
    await other.interrupts.decide(page.items[0]!.id, { kind: "approve", actor: "ana" });
    expect((await other.result(run.id)).text()).toBe("approve");
  });
});

async function eventuallyWaitingOn(
  runtime: ReturnType<typeof createDurableRuntime>,
  runId: string,
  kind: string,
): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const run = await runtime.wait(runId, { onPark: "return" });
    const pending = (await runtime.interrupts.list({ runId })).items;
    if (run.status === "waiting" && pending.some((i) => i.kind === kind)) return;
    if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}, not waiting on ${kind}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
