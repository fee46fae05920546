import {
  Agent,
  Compressor,
  type RunOptions,
  ScriptedProvider,
  Selector,
  Session,
  Workflow,
} from "@openrath/core";
import { createDurableRuntime, defineWorkflow, journalOf } from "@openrath/runtime-durable";
import { DurableError } from "@openrath/runtime-durable/store";
import { describe, expect, it } from "vitest";
import { referenceAgent, TURNS, transcript } from "./testing/journal-agent.js";
import { journalHarness } from "./testing/journal-harness.js";

const harness = journalHarness();
const retryOnce = { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 5 };

describe("the step journal on the durable runtime (PGlite)", () => {
  it("a step resumed after a failure mid-loop replays the journal and continues live from the first unrecorded call", async () => {
    const { runtime } = await harness.setup();
    const model: number[] = [];
    const tools: string[] = [];
    const attempts: number[] = [];
    let crash = true;
    const agent = referenceAgent({
      onModel: (turn) => {
        model.push(turn);
        // The first attempt dies in the middle of turn 6 (after five turns' calls were recorded).
        if (crash && turn === 6) {
          crash = false;
          throw new Error("the worker died here");
        }
      },
      onTool: (name, turn) => {
        tools.push(`${name}:${turn}`);
      },
    });
    const flow = defineWorkflow("resume-mid-loop").step(
      "agent",
      (session, ctx) => {
        attempts.push(ctx.attempt);
        return agent.run(session, ctx);
      },
      { entry: true, retry: retryOnce },
    );
    await harness.worker(runtime, [flow]);
    const run = await runtime.submit("resume-mid-loop", Session.fromUserMessage("research this"));
    const out = await runtime.result(run.id);
    expect(attempts).toEqual([1, 2]);
    // Turns 1-5 were paid once; the second attempt started live at turn 6.
    expect(model).toEqual([1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10]);
    expect([...tools].sort()).toEqual(
      Array.from({ length: TURNS - 1 }, (_, i) => [`lookup:${i + 1}`, `record:${i + 1}`])
        .flat()
        .sort(),
    );
    // The same program run durably without a crash gives the same Session.
    const again = await runtime.submit("resume-mid-loop", Session.fromUserMessage("research this"));
    expect(transcript(await runtime.result(again.id))).toEqual(transcript(out));
    expect(model.slice(11)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("selector, compressor and nested workflow calls in a step are journaled and replayed", async () => {
    const { runtime } = await harness.setup();
    let calls = 0;
    const counted = (provider: ScriptedProvider) => ({
      specVersion: "v1" as const,
      name: provider.name,
      model: provider.model,
      complete: (
        request: Parameters<ScriptedProvider["complete"]>[0],
        options?: Parameters<ScriptedProvider["complete"]>[1],
      ) => {
        calls++;
        return provider.complete(request, options);
      },
    });
    const writer = new Agent({
      name: "writer",
      provider: counted(new ScriptedProvider(() => ({ text: "a draft" }))),
    });
    const critic = new Agent({
      name: "critic",
      provider: counted(new ScriptedProvider(() => ({ text: "a critique" }))),
    });
    class Review extends Workflow {
      override readonly description = "writes then criticises";
      async forward(session: Session, options: RunOptions) {
        return critic.run(await writer.run(session, options), options);
      }
    }
    const selector = new Selector({
      name: "router",
      provider: counted(new ScriptedProvider(() => ({ text: "0" }))),
    });
    const compressor = new Compressor({
      name: "squash",
      provider: counted(new ScriptedProvider(() => ({ text: "summary" }))),
    });
    let failures = 1;
    const flow = defineWorkflow("composed").step(
      "route",
      async (session, ctx) => {
        const route = await selector.route(session, [new Review()], ctx);
        const reviewed = await route.target.run(route.session, ctx);
        const out = await compressor.run(reviewed, ctx);
        if (failures-- > 0) throw new Error("crash after every call was made");
        return out;
      },
      { entry: true, retry: retryOnce },
    );
    await harness.worker(runtime, [flow]);
    const out = await runtime.result((await runtime.submit("composed", Session.fromUserMessage("topic"))).id);
    expect(calls).toBe(4);
    expect(out.chunks.some((c) => c.kind === "user" && c.content.includes("summary"))).toBe(true);
  });

  it("parallel forks in a step are told apart by branch whatever order their calls run in", async () => {
    const { runtime } = await harness.setup();
    const live: string[] = [];
    const slow = (name: string, delays: number[]) =>
      new Agent({
        name,
        provider: new ScriptedProvider((_request, call) => {
          live.push(name);
          return { text: `${name} says ${call}`, delayMs: delays[call % delays.length]! };
        }),
      });
    const agents = [slow("left", [40, 1]), slow("right", [1, 40])];
    let failures = 1;
    const flow = defineWorkflow("forks").step(
      "fan-out",
      async (session, ctx) => {
        const outs = await Promise.all(agents.map((agent) => agent.run(session.fork(), ctx)));
        if (failures-- > 0) throw new Error("crash after the fan-out");
        return outs.reduce((a, b) => a.merge(b));
      },
      { entry: true, retry: retryOnce },
    );
    await harness.worker(runtime, [flow]);
    const out = await runtime.result((await runtime.submit("forks", Session.fromUserMessage("go"))).id);
    expect(live.sort()).toEqual(["left", "right"]);
    expect(
      out.chunks
        .filter((c) => c.kind === "assistant")
        .map((c) => (c as { content: string }).content)
        .sort(),
    ).toEqual(["left says 0", "right says 0"]);
  });

  it("a request that differs from the journal at the same position fails the run closed with a coded divergence", async () => {
    const { runtime } = await harness.setup();
    let instructions = "Summarize.";
    const make = () =>
      new Agent({ name: "summarizer", instructions, provider: new ScriptedProvider(() => ({ text: "ok" })) });
    const flow = defineWorkflow("diverging").step(
      "summarize",
      async (session, ctx) => {
        const out = await make().run(session, ctx);
        // A deploy changes the prompt between the attempts.
        instructions = "Summarize in French.";
        if (ctx.attempt === 1) throw new Error("crash before the commit");
        return out;
      },
      { entry: true, retry: retryOnce },
    );
    await harness.worker(runtime, [flow]);
    const run = await runtime.submit("diverging", Session.fromUserMessage("text"));
    const ended = await runtime.wait(run.id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toMatchObject({ code: "journal_divergence", stepId: "summarize", retryable: false });
    expect(ended.error!.message).toMatch(/model call 1 on branch "[^"]*loop:summarizer[^"]*"/);
    expect(ended.attempt).toBe(2);
  });

  it("two runs on one journal position (a scope not shared) fail closed with journal_conflict", async () => {
    const { runtime } = await harness.setup();
    const agent = new Agent({ name: "twice", provider: new ScriptedProvider(() => ({ text: "same" })) });
    const flow = defineWorkflow("unscoped").step(
      "twice",
      async (session, ctx) => {
        // Without ctx's scope each run numbers its branch alone: both claim the same position.
        await agent.run(session, { calls: ctx.calls!, signal: ctx.signal });
        return agent.run(session, { calls: ctx.calls!, signal: ctx.signal });
      },
      { entry: true },
    );
    await harness.worker(runtime, [flow]);
    const ended = await runtime.wait((await runtime.submit("unscoped", Session.fromUserMessage("x"))).id);
    expect(ended).toMatchObject({ status: "failed", error: { code: "journal_conflict" } });
  });

  it("journal.run journals a step's own side effect: a resumed attempt gets the value without running it", async () => {
    const { runtime } = await harness.setup();
    let ran = 0;
    const flow = defineWorkflow("own-call").step(
      "order",
      async (session, ctx) => {
        const journal = journalOf(ctx)!;
        const order = await journal.run("create order", () => ({ id: `order-${++ran}` }));
        if (ctx.attempt === 1) throw new Error("crash after the order");
        return session.append({
          kind: "assistant",
          content: `${order.id}; replayed ${journal.replayed.call}`,
        });
      },
      { entry: true, retry: retryOnce },
    );
    await harness.worker(runtime, [flow]);
    const out = await runtime.result((await runtime.submit("own-call", Session.fromUserMessage("buy"))).id);
    expect(ran).toBe(1);
    expect(out.text()).toBe("order-1; replayed 1");
  });

  it("strict journal durability journals and replays the same way", async () => {
    const { runtime } = await harness.setup({ journalDurability: "strict" });
    const model: number[] = [];
    let crash = true;
    const agent = referenceAgent({
      onModel: (turn) => {
        model.push(turn);
        if (crash && turn === 3) {
          crash = false;
          throw new Error("crash at turn 3");
        }
      },
    });
    const flow = defineWorkflow("strict").step("agent", (s, ctx) => agent.run(s, ctx), {
      entry: true,
      retry: retryOnce,
    });
    await harness.worker(runtime, [flow]);
    await runtime.result((await runtime.submit("strict", Session.fromUserMessage("go"))).id);
    expect(model).toEqual([1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("a store without the journal capability gives not_supported for the operator calls", async () => {
    const { store } = await harness.setup();
    const plain = new Proxy(store, {
      get: (target, key) =>
        key === "capabilities"
          ? { ...target.capabilities, journal: false }
          : key === "journal"
            ? undefined
            : Reflect.get(target, key, target),
    });
    const runtime = createDurableRuntime({ store: plain });
    await expect(runtime.interrupts.list()).rejects.toSatisfy((e) =>
      DurableError.isInstance(e, "not_supported"),
    );
    await expect(runtime.effects.resolve("x", { kind: "retry", actor: "a" })).rejects.toMatchObject({
      code: "not_supported",
    });
  });
});
