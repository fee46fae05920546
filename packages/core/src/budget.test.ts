import {
  Agent,
  Budget,
  BudgetExceededError,
  Compressor,
  costOf,
  defineTool,
  type EventChunk,
  OpenRathError,
  priceFor,
  ScriptedProvider,
  type ScriptedTurn,
  Selector,
  Session,
  usageReport,
} from "@openrath/core";
import { describe, expect, it } from "vitest";

const usage = (totalTokens: number) => ({
  promptTokens: totalTokens / 2,
  completionTokens: totalTokens / 2,
  totalTokens,
});

/** A turn that calls the no-op tool and reports `tokens` of usage. */
const toolTurn = (tokens: number): ScriptedTurn => ({
  toolCalls: [{ name: "noop", arguments: {} }],
  usage: usage(tokens),
});

const noop = defineTool({
  name: "noop",
  description: "",
  parameters: {},
  parallel: true,
  execute: () => "ok",
});

async function rejection(promise: Promise<unknown>): Promise<BudgetExceededError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof BudgetExceededError) return error;
    throw error;
  }
  throw new Error("expected a BudgetExceededError");
}

describe("Budget", () => {
  it("starts empty and adds each charge", () => {
    const budget = new Budget({ maxTokens: 100 });
    expect(budget.spent.totalTokens).toBe(0);
    expect(budget.exceeded()).toBeUndefined();
    budget.charge(usage(40), "m");
    budget.charge(undefined, "m");
    budget.charge(usage(40), undefined);
    expect(budget.spent).toEqual(usage(80));
    expect(budget.exceeded()).toBeUndefined();
  });

  it("is exceeded once the use reaches the limit", () => {
    const budget = new Budget({ maxTokens: 100 });
    budget.charge(usage(100), "m");
    expect(budget.exceeded()).toBe("100 tokens used of a 100-token budget");
  });

  it("prices calls by model and stops at maxCostUsd", () => {
    const budget = new Budget({ maxCostUsd: 0.01, prices: { m: { input: 10, output: 30 } } });
    budget.charge({ promptTokens: 200, completionTokens: 100, totalTokens: 300 }, "m");
    expect(budget.spentUsd).toBeCloseTo(0.005);
    expect(budget.exceeded()).toBeUndefined();
    budget.charge({ promptTokens: 200, completionTokens: 100, totalTokens: 300 }, "m");
    expect(budget.exceeded()).toBe("$0.0100 spent of a $0.01 budget");
  });

  it("is never exceeded without limits", () => {
    const budget = new Budget({});
    budget.charge(usage(1e9), "m");
    expect(budget.exceeded()).toBeUndefined();
  });

  it.each([{ maxTokens: -1 }, { maxCostUsd: Number.NaN }, { maxTokens: "10" as unknown as number }])(
    "refuses the limits %j",
    (limits) => {
      let error: unknown;
      try {
        new Budget(limits);
      } catch (e) {
        error = e;
      }
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
      expect((error as Error).message).toMatch(/must be a non-negative number/);
    },
  );

  it.each([{ maxCostUsd: 1 }, { maxCostUsd: 1, prices: {} }])(
    "refuses a cost limit without prices %j: it would never stop anything",
    (limits) => {
      let error: unknown;
      try {
        new Budget(limits);
      } catch (e) {
        error = e;
      }
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
      expect((error as Error).message).toMatch(/maxCostUsd needs prices/);
    },
  );

  it("stops on a model it has no price for, instead of counting it as free", () => {
    const budget = new Budget({ maxCostUsd: 100, prices: { m: { input: 1, output: 1 } } });
    budget.charge(usage(10), "mystery-model");
    expect(budget.refusal()).toEqual({
      code: "budget_unpriced",
      reason:
        'the cost budget has no price for "mystery-model", so it cannot count what the calls cost; add the model to prices',
    });
  });

  it("counts calls in flight: a reservation holds its tokens until it is settled or released", () => {
    const budget = new Budget({ maxTokens: 100 });
    const first = budget.reserve(60, "m");
    expect("settle" in first).toBe(true);
    expect(budget.reservedTokens).toBe(60);
    const second = budget.reserve(60, "m");
    expect("settle" in second).toBe(true);
    expect(budget.reserve(1, "m")).toEqual({
      code: "budget_exceeded",
      reason: "120 tokens used of a 100-token budget (120 of them reserved by calls in flight)",
    });
    if ("settle" in first) first.settle(usage(20), "m");
    if ("settle" in second) second.release();
    expect(budget.reservedTokens).toBe(0);
    expect(budget.spent.totalTokens).toBe(20);
    // Settling twice changes nothing.
    if ("settle" in first) first.settle(usage(20), "m");
    expect(budget.spent.totalTokens).toBe(20);
  });

  it("charges a call that reported no usage its reservation, so such calls cannot run past the limit", () => {
    const budget = new Budget({
      maxTokens: 100,
      maxCostUsd: 1,
      prices: { m: { input: 1_000, output: 1_000 } },
    });
    let calls = 0;
    for (let hold = budget.reserve(40, "m"); "settle" in hold && calls < 10; hold = budget.reserve(40, "m")) {
      hold.settle(undefined, "m");
      calls += 1;
    }
    // 0, 40 and 80 tokens spent are under the limit; at 120 the next call is refused.
    expect(calls).toBe(3);
    expect(budget.spent.totalTokens).toBe(120);
    expect(budget.spentUsd).toBeCloseTo(0.12);
    expect(budget.exceeded()).toBe("120 tokens used of a 100-token budget");
  });
});

describe("prices", () => {
  const prices = {
    "gpt-4o-mini": { input: 0.15, output: 0.6 },
    "gpt-4o": { input: 2.5, output: 10 },
    "claude-3-5-sonnet": { input: 3, output: 15 },
    "gpt-4o-2024-05-13": { input: 5, output: 15 },
  };

  it("finds a dated snapshot by its undated name, and prefers an exact entry", () => {
    expect(priceFor(prices, "gpt-4o-mini-2024-07-18")).toBe(prices["gpt-4o-mini"]);
    expect(priceFor(prices, "claude-3-5-sonnet-20241022")).toBe(prices["claude-3-5-sonnet"]);
    expect(priceFor(prices, "claude-3-5-sonnet@20240620")).toBe(prices["claude-3-5-sonnet"]);
    expect(priceFor(prices, "gpt-4o-2024-05-13")).toBe(prices["gpt-4o-2024-05-13"]);
    expect(priceFor(prices, "gpt-4o-2024-08-06")).toBe(prices["gpt-4o"]);
  });

  it("matches nothing else: no prefixes, no case folding, no inherited keys", () => {
    expect(priceFor({ "gpt-4o": prices["gpt-4o"] }, "gpt-4o-mini")).toBeUndefined();
    expect(priceFor(prices, "GPT-4O-MINI")).toBeUndefined();
    expect(priceFor(prices, "toString")).toBeUndefined();
    expect(priceFor(prices, "gpt-4o-mini-latest")).toBeUndefined();
  });

  it("charges a budget for the model name the provider answers with", () => {
    const budget = new Budget({ maxCostUsd: 1, prices });
    budget.charge({ promptTokens: 1e6, completionTokens: 0, totalTokens: 1e6 }, "gpt-4o-mini-2024-07-18");
    expect(budget.spentUsd).toBeCloseTo(0.15);
    expect(budget.refusal()).toBeUndefined();
  });

  it("prices cache reads and cache writes apart from the rest of the prompt", () => {
    const price = { input: 10, output: 30, cachedInput: 1, cacheWrite: 12.5 };
    const used = {
      promptTokens: 1000,
      completionTokens: 100,
      totalTokens: 1100,
      cachedPromptTokens: 200,
      cacheWriteTokens: 300,
    };
    expect(costOf(used, price)).toBeCloseTo((500 * 10 + 200 * 1 + 300 * 12.5 + 100 * 30) / 1e6, 12);
    // Without their own prices both fall back to the input price.
    expect(costOf(used, { input: 10, output: 30 })).toBeCloseTo((1000 * 10 + 100 * 30) / 1e6, 12);
  });

  it("reports the cost of a session answered by a dated snapshot", async () => {
    const provider = new ScriptedProvider([
      { text: "hi", usage: { promptTokens: 1e6, completionTokens: 0 }, model: "gpt-4o-mini-2024-07-18" },
    ]);
    const out = await new Agent({ name: "a", provider }).run(Session.fromUserMessage("go"));
    const report = usageReport(out.chunks, { prices });
    expect(report.cost).toBeCloseTo(0.15);
    expect(report.unpricedModels).toEqual([]);
  });
});

describe("an agent's own budget", () => {
  it("lets a call that starts under budget finish and stops before the next one", async () => {
    const provider = new ScriptedProvider([toolTurn(60), toolTurn(60), toolTurn(60), { text: "never" }]);
    const agent = new Agent({ name: "spender", provider, tools: [noop], budget: { maxTokens: 100 } });
    const input = Session.fromUserMessage("go");
    const error = await rejection(agent.run(input));
    expect(provider.callCount).toBe(2);
    expect(error.code).toBe("budget_exceeded");
    expect(error.details).toEqual({
      reason: "120 tokens used of a 100-token budget",
      budget: "own",
      call: 3,
    });
    expect(error.message).toBe(
      'Agent "spender" stopped before model call 3: 120 tokens used of a 100-token budget.',
    );
    const last = error.session.at(-1)!;
    expect(last).toMatchObject({
      kind: "event",
      name: "budget.exceeded",
      author: "spender",
      data: {
        by: "spender",
        kind: "Agent",
        reason: "120 tokens used of a 100-token budget",
        call: 3,
        budget: "own",
        code: "budget_exceeded",
      },
    });
    expect(error.session.usage.totalTokens).toBe(120);
    expect(error.session.lineage.op).toBe("loop");
    expect(error.session.lineage.parents[0]!.id).toBe(input.id);
  });

  it("counts what this run spent, not the usage its input inherited", async () => {
    const first = new ScriptedProvider([toolTurn(80), { text: "done", usage: usage(40) }]);
    const spent = await new Agent({ name: "a", provider: first, tools: [noop] }).run(
      Session.fromUserMessage("go"),
    );
    expect(spent.usage.totalTokens).toBe(120);

    const second = new ScriptedProvider([toolTurn(60), toolTurn(60), { text: "never" }]);
    const again = new Agent({ name: "a", provider: second, tools: [noop], budget: { maxTokens: 100 } });
    // The fork inherits 120 tokens of usage, over the limit; the run has spent nothing yet.
    const error = await rejection(again.run(spent.fork()));
    expect(second.callCount).toBe(2);
    expect(error.details.reason).toBe("120 tokens used of a 100-token budget");
    expect(error.session.usage.totalTokens).toBe(240);
  });

  it("refuses a cost limit without prices when the agent is made", () => {
    const provider = new ScriptedProvider([{ text: "never" }]);
    expect(() => new Agent({ name: "a", provider, budget: { maxCostUsd: 0.0001 } })).toThrow(
      /Agent "a": budget maxCostUsd needs prices/,
    );
  });

  it("stops on maxCostUsd using the price of each call's model", async () => {
    const prices = { cheap: { input: 1, output: 1 }, dear: { input: 100, output: 100 } };
    const provider = new ScriptedProvider([
      { ...toolTurn(1000), model: "cheap" },
      { ...toolTurn(1000), model: "dear" },
      { text: "never" },
    ]);
    const agent = new Agent({ name: "a", provider, tools: [noop], budget: { maxCostUsd: 0.05, prices } });
    const error = await rejection(agent.run(Session.fromUserMessage("go")));
    // $0.001 after the cheap call (under), $0.101 after the dear one (over).
    expect(provider.callCount).toBe(2);
    expect(error.details.reason).toBe("$0.1010 spent of a $0.05 budget");
  });

  it("stops after an answer from a model without a price (budget_unpriced), never running unlimited", async () => {
    const provider = new ScriptedProvider([{ ...toolTurn(10), model: "mystery-model" }, { text: "never" }]);
    const agent = new Agent({
      name: "a",
      provider,
      tools: [noop],
      budget: { maxCostUsd: 100, prices: { m: { input: 1, output: 1 } } },
    });
    const error = await rejection(agent.run(Session.fromUserMessage("go")));
    expect(provider.callCount).toBe(1);
    expect(error.code).toBe("budget_unpriced");
    expect(error.message).toMatch(/has no price for "mystery-model"/);
    expect(error.session.at(-1)).toMatchObject({
      name: "budget.exceeded",
      data: { code: "budget_unpriced" },
    });
  });

  it.each([{ maxTokens: 0 }, { maxCostUsd: 0, prices: { scripted: { input: 1, output: 1 } } }])(
    "treats the zero limit %j as 'no calls at all'",
    async (budget) => {
      const provider = new ScriptedProvider([{ text: "never" }]);
      const agent = new Agent({ name: "a", provider, budget });
      await rejection(agent.run(Session.fromUserMessage("go")));
      expect(provider.callCount).toBe(0);
    },
  );
});

describe("a Budget shared by a run", () => {
  it("stops the later calls of agents running in parallel forks", async () => {
    const budget = new Budget({ maxTokens: 150 });
    const make = (name: string) =>
      new Agent({
        name,
        provider: new ScriptedProvider([toolTurn(100), { text: "done", usage: usage(10) }]),
        tools: [noop],
      });
    const a = make("a");
    const b = make("b");
    const root = Session.fromUserMessage("go");
    // Each alone would finish (100 < 150 before its second call); together they spend 200 first.
    const results = await Promise.allSettled([
      a.run(root.fork(), { budget }),
      b.run(root.fork(), { budget }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    for (const r of results) {
      const error = (r as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(BudgetExceededError);
      expect(error.details.reason).toBe("200 tokens used of a 150-token budget");
    }
    expect((a.provider as ScriptedProvider).callCount + (b.provider as ScriptedProvider).callCount).toBe(2);
    expect(budget.spent.totalTokens).toBe(200);
  });

  it("makes parallel forks reserve before they call: overshoot is at most one call's declared maximum", async () => {
    const budget = new Budget({ maxTokens: 150 });
    const providers: ScriptedProvider[] = [];
    const make = (name: string) => {
      // Each call declares at most 100 completion tokens and uses all of them (its prompt is counted too).
      const provider = new ScriptedProvider((request) => ({
        toolCalls: [{ name: "noop", arguments: {} }],
        usage: {
          promptTokens: Math.ceil(JSON.stringify(request.messages).length / 4),
          completionTokens: 100,
        },
      }));
      providers.push(provider);
      return new Agent({ name, provider, tools: [noop], request: { maxTokens: 100 } });
    };
    const root = Session.fromUserMessage("go");
    const agents = ["a", "b", "c", "d"].map(make);
    const results = await Promise.allSettled(agents.map((agent) => agent.run(root.fork(), { budget })));
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    // Before the fix all four called at once and spent 4 × 108 = 432 of a 150-token budget.
    const calls = providers.reduce((n, p) => n + p.callCount, 0);
    expect(calls).toBe(2);
    expect(budget.spent.totalTokens).toBeLessThanOrEqual(150 + 108);
    expect(budget.reservedTokens).toBe(0);
    const reasons = results.map((r) => ((r as PromiseRejectedResult).reason as BudgetExceededError).details);
    expect(reasons.filter((d) => d.call === 1)).toHaveLength(2);
  });

  it("lets one agent alone finish under the same limit", async () => {
    const budget = new Budget({ maxTokens: 150 });
    const provider = new ScriptedProvider([toolTurn(100), { text: "done", usage: usage(10) }]);
    const agent = new Agent({ name: "a", provider, tools: [noop] });
    const out = await agent.run(Session.fromUserMessage("go"), { budget });
    expect(out.text()).toBe("done");
    expect(budget.spent.totalTokens).toBe(110);
  });

  it("charges across runs: a later run on an unrelated session is stopped", async () => {
    const budget = new Budget({ maxTokens: 50 });
    const provider = new ScriptedProvider([{ text: "first", usage: usage(60) }, { text: "second" }]);
    const agent = new Agent({ name: "a", provider });
    await agent.run(Session.fromUserMessage("one"), { budget });
    const error = await rejection(agent.run(Session.fromUserMessage("two"), { budget }));
    expect(provider.callCount).toBe(1);
    expect(error.session.at(-1)).toMatchObject({ kind: "event", name: "budget.exceeded" });
  });

  it("stops on maxCostUsd across agents", async () => {
    const budget = new Budget({ maxCostUsd: 0.001, prices: { m: { input: 1, output: 1 } } });
    const provider = new ScriptedProvider([{ text: "a", usage: usage(1000), model: "m" }, { text: "b" }]);
    const agent = new Agent({ name: "a", provider });
    await agent.run(Session.fromUserMessage("one"), { budget });
    expect(budget.spentUsd).toBeCloseTo(0.001);
    await rejection(agent.run(Session.fromUserMessage("two"), { budget }));
    expect(provider.callCount).toBe(1);
  });

  it("stops an agent, a selector and a compressor the same way, with the same event", async () => {
    const spent = () => {
      const budget = new Budget({ maxTokens: 10 });
      budget.charge(usage(10), "m");
      return budget;
    };
    const input = Session.fromUserMessage("hi");
    const never = () => new ScriptedProvider([{ text: "0" }]);
    const errors = [
      await rejection(new Agent({ name: "writer", provider: never() }).run(input, { budget: spent() })),
      await rejection(
        new Selector({ name: "router", provider: never() }).route(
          input,
          [new Agent({ name: "x", provider: never() })],
          { budget: spent() },
        ),
      ),
      await rejection(new Compressor({ name: "squash", provider: never() }).run(input, { budget: spent() })),
    ];
    expect(errors.map((e) => e.message)).toEqual([
      'Agent "writer" stopped before model call 1: 10 tokens used of a 10-token budget.',
      'Selector "router" stopped before model call 1: 10 tokens used of a 10-token budget.',
      'Compressor "squash" stopped before model call 1: 10 tokens used of a 10-token budget.',
    ]);
    const events = errors.map((e) => e.session.at(-1) as EventChunk);
    expect(events.map((e) => [e.name, Object.keys(e.data as object).sort()])).toEqual(
      Array(3).fill(["budget.exceeded", ["budget", "by", "call", "code", "kind", "reason"]]),
    );
    expect(errors.map((e) => e.details)).toEqual(
      Array(3).fill({ reason: "10 tokens used of a 10-token budget", budget: "run", call: 1 }),
    );
  });
});
