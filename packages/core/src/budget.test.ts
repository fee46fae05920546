import {
  Agent,
  Budget,
  BudgetExceededError,
  defineTool,
  OpenRathError,
  ScriptedProvider,
  type ScriptedTurn,
  Session,
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
    budget.charge({ promptTokens: 200, completionTokens: 100, totalTokens: 300 }, "unknown-model");
    expect(budget.spentUsd).toBeCloseTo(0.005);
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
});

describe("an agent's own budget", () => {
  it("lets a call that starts under budget finish and stops before the next one", async () => {
    const provider = new ScriptedProvider([toolTurn(60), toolTurn(60), toolTurn(60), { text: "never" }]);
    const agent = new Agent({ name: "spender", provider, tools: [noop], budget: { maxTokens: 100 } });
    const input = Session.fromUserMessage("go");
    const error = await rejection(agent.run(input));
    expect(provider.callCount).toBe(2);
    expect(error.code).toBe("budget_exceeded");
    expect(error.details).toEqual({ reason: "120 tokens used of a 100-token budget" });
    expect(error.message).toBe(
      'Agent "spender" stopped before turn 3: 120 tokens used of a 100-token budget.',
    );
    const last = error.session.at(-1)!;
    expect(last).toMatchObject({
      kind: "event",
      name: "budget.exceeded",
      author: "spender",
      data: { agent: "spender", reason: "120 tokens used of a 100-token budget", turn: 3 },
    });
    expect(error.session.usage.totalTokens).toBe(120);
    expect(error.session.lineage.op).toBe("loop");
    expect(error.session.lineage.parents[0]!.id).toBe(input.id);
  });

  it("counts the input's usage, so a fork of a spent session is stopped before any call", async () => {
    const first = new ScriptedProvider([toolTurn(80), { text: "done", usage: usage(40) }]);
    const agent = new Agent({ name: "a", provider: first, tools: [noop], budget: { maxTokens: 100 } });
    const spent = await agent.run(Session.fromUserMessage("go"));
    expect(spent.usage.totalTokens).toBe(120);

    const second = new ScriptedProvider([{ text: "should not run" }]);
    const again = new Agent({ name: "a", provider: second, budget: { maxTokens: 100 } });
    const error = await rejection(again.run(spent.fork()));
    expect(second.callCount).toBe(0);
    expect(error.session.at(-1)).toMatchObject({ name: "budget.exceeded", data: { turn: 1 } });
  });

  it("stops on maxCostUsd using the price of each chunk's model", async () => {
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

  it("costs nothing without prices, so maxCostUsd alone never stops a run", async () => {
    const provider = new ScriptedProvider([toolTurn(1000), { text: "done" }]);
    const agent = new Agent({ name: "a", provider, tools: [noop], budget: { maxCostUsd: 0.0001 } });
    expect((await agent.run(Session.fromUserMessage("go"))).text()).toBe("done");
  });

  it.each([{ maxTokens: 0 }, { maxCostUsd: 0 }])(
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
});
