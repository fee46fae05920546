import {
  Agent,
  Budget,
  type EventChunk,
  OpenRathError,
  PassThrough,
  type Runnable,
  ScriptedProvider,
  Selector,
  Session,
  usageReport,
} from "@openrath/core";
import { requestFingerprint } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

const handler = (name: string, description: string, reply = `${name} answered`) =>
  new Agent({ name, description, provider: new ScriptedProvider([{ text: reply }]) });

const candidates = () => [
  handler("coder", "Writes and fixes code"),
  handler("writer", "Writes prose and poems"),
  handler("researcher", ""),
];

const router = (reply: string, usage = { promptTokens: 40, completionTokens: 2 }) =>
  new ScriptedProvider([{ text: reply, usage }], "router-model");

const decision = (session: Session) => {
  const last = session.at(-1) as EventChunk;
  expect(last.kind).toBe("event");
  expect(last.name).toBe("selector.decision");
  return last;
};

describe("Selector with a router model", () => {
  it("routes to the candidate whose index the model names", async () => {
    const provider = router("1");
    const list = candidates();
    const input = Session.fromUserMessage("Write me a poem");
    const route = await new Selector({ provider }).route(input, list);
    expect(route.index).toBe(1);
    expect(route.target).toBe(list[1]);
    expect(route.session.id).toBe(input.id);
    expect(route.session.length).toBe(input.length + 1);
  });

  it("shows the model the rubric, the transcript and the numbered descriptions, with tools off", async () => {
    const provider = router("0");
    const input = Session.fromUserMessage("Fix my bug");
    await new Selector({ provider }).route(input, candidates());
    const request = provider.requests[0]!;
    expect(request.toolChoice).toBe("none");
    expect(request.messages[0]!.role).toBe("system");
    expect(request.messages[0]!.content).toContain("-1 if none fits");
    expect(request.messages[1]).toEqual({ role: "user", content: "Fix my bug" });
    expect(request.messages[2]).toEqual({
      role: "user",
      content:
        "Handlers:\n0: coder — Writes and fixes code\n1: writer — Writes prose and poems\n2: researcher — (no description)\nReply with one number.",
    });
  });

  it("uses custom instructions as the rubric", async () => {
    const provider = router("0");
    await new Selector({ provider, instructions: "Pick wisely." }).route(
      Session.fromUserMessage("x"),
      candidates(),
    );
    expect(provider.requests[0]!.messages[0]).toEqual({ role: "system", content: "Pick wisely." });
  });

  it.each([
    ["1.", 1, "model"],
    ["Handler 2 fits best.", 2, "model"],
    ["0", 0, "model"],
    ["I'd say 1, not 0", 1, "model"],
  ])("reads the reply %j as index %i", async (reply, index, reason) => {
    const route = await new Selector({ provider: router(reply) }).route(
      Session.fromUserMessage("x"),
      candidates(),
    );
    expect(route.index).toBe(index);
    expect((decision(route.session).data as { reason: string }).reason).toBe(reason);
  });

  it.each([
    ["-1", "model replied -1"],
    ["3", "model replied 3"],
    ["42", "model replied 42"],
    ["none of them", "model reply had no number"],
    ["", "model reply had no number"],
  ])("routes the reply %j to a PassThrough (%s)", async (reply, reason) => {
    const route = await new Selector({ provider: router(reply) }).route(
      Session.fromUserMessage("x"),
      candidates(),
    );
    expect(route.index).toBe(-1);
    expect(route.target).toBeInstanceOf(PassThrough);
    expect(decision(route.session).data).toMatchObject({ index: -1, chosen: null, reason });
  });

  it("routes to a PassThrough without calling the model when there are no candidates", async () => {
    const provider = router("0");
    const route = await new Selector({ provider }).route(Session.fromUserMessage("x"), []);
    expect(provider.callCount).toBe(0);
    expect(route.target).toBeInstanceOf(PassThrough);
    expect(decision(route.session).data).toEqual({
      selector: "selector",
      candidates: [],
      index: -1,
      chosen: null,
      reason: "no candidates",
    });
  });

  it("records the decision with the router's fingerprint, reply, model and usage", async () => {
    const provider = router("Handler 1.");
    const route = await new Selector({ provider, name: "triage" }).route(
      Session.fromUserMessage("poem"),
      candidates(),
      {
        path: "mams",
      },
    );
    const chunk = decision(route.session);
    expect(chunk.author).toBe("mams/triage");
    expect(chunk.data).toMatchObject({
      selector: "triage",
      candidates: ["coder", "writer", "researcher"],
      index: 1,
      chosen: "writer",
      reason: "model",
      requestHash: requestFingerprint(provider.requests[0]!),
      reply: "Handler 1.",
      model: "router-model",
      usage: { promptTokens: 40, completionTokens: 2, totalTokens: 42 },
    });
    // The branch it decided on and a digest of its request, for replays.
    expect(typeof (chunk.data as { branch?: unknown }).branch).toBe("string");
    expect((chunk.data as { request?: { head: unknown[] } }).request?.head).toHaveLength(1);
    expect(chunk.usage).toEqual({ promptTokens: 40, completionTokens: 2, totalTokens: 42 });
    expect(chunk.model).toBe("router-model");
  });

  it("counts the router call in the session's usage, by model and author", async () => {
    const route = await new Selector({ provider: router("0") }).route(
      Session.fromUserMessage("x"),
      candidates(),
    );
    expect(route.session.usage.totalTokens).toBe(42);
    const report = usageReport(route.session.chunks);
    expect(report.byModel.map((r) => [r.key, r.calls])).toEqual([["router-model", 1]]);
    expect(report.byAuthor.map((r) => r.key)).toEqual(["selector"]);
  });

  it("charges the run's budget for the router call", async () => {
    const budget = new Budget({ maxTokens: 1000 });
    await new Selector({ provider: router("0") }).route(Session.fromUserMessage("x"), candidates(), {
      budget,
    });
    expect(budget.spent.totalTokens).toBe(42);
  });

  it("does not call the router when the run's budget is spent", async () => {
    const budget = new Budget({ maxTokens: 10 });
    budget.charge({ promptTokens: 10, completionTokens: 0, totalTokens: 10 }, "m");
    const provider = router("0");
    const routed = new Selector({ provider }).route(Session.fromUserMessage("x"), candidates(), { budget });
    await expect(routed).rejects.toMatchObject({ code: "budget_exceeded" });
    expect(provider.callCount).toBe(0);
  });

  it("retries transient router failures with its retry policy", async () => {
    const provider = new ScriptedProvider([{ error: { code: "provider_unavailable" } }, { text: "2" }]);
    const route = await new Selector({ provider, retry: { baseDelayMs: 1 } }).route(
      Session.fromUserMessage("x"),
      candidates(),
    );
    expect(route.index).toBe(2);
    expect(provider.callCount).toBe(2);
  });
});

describe("Selector with a rule", () => {
  it.each([
    [1, 1, "rule"],
    ["researcher", 2, "rule"],
    [-1, -1, "rule returned -1"],
    [7, -1, "rule returned 7"],
    ["nobody", -1, 'rule returned "nobody"'],
    [undefined, -1, "rule returned null"],
  ] as const)("routes the rule's answer %j to index %i", async (answer, index, reason) => {
    const list = candidates();
    const route = await new Selector({ rule: () => answer }).route(Session.fromUserMessage("x"), list);
    expect(route.index).toBe(index);
    expect(route.target).toBe(index >= 0 ? list[index] : route.target);
    if (index < 0) expect(route.target).toBeInstanceOf(PassThrough);
    expect(decision(route.session).data).toEqual({
      selector: "selector",
      candidates: ["coder", "writer", "researcher"],
      index,
      chosen: index >= 0 ? list[index]!.name : null,
      reason,
    });
  });

  it("gives the rule the session and the candidates, and awaits an async rule", async () => {
    const seen: [Session, readonly Runnable[]][] = [];
    const list = candidates();
    const input = Session.fromUserMessage("code please");
    const route = await new Selector({
      rule: async (session, cands) => {
        seen.push([session, cands]);
        return session.text() === undefined && cands.length === 3 ? "coder" : -1;
      },
    }).route(input, list);
    expect(seen).toEqual([[input, list]]);
    expect(route.target).toBe(list[0]);
  });

  it("does not call the rule when there are no candidates", async () => {
    let called = false;
    await new Selector({
      rule: () => {
        called = true;
        return 0;
      },
    }).route(Session.fromUserMessage("x"), []);
    expect(called).toBe(false);
  });
});

describe("Selector.run", () => {
  it("routes and runs the chosen candidate on the routed session", async () => {
    const list = candidates();
    const out = await new Selector({ provider: router("0") }).run(Session.fromUserMessage("fix it"), list, {
      path: "flow",
    });
    expect(out.text()).toBe("coder answered");
    expect(out.chunks.map((c) => c.kind)).toEqual(["user", "event", "assistant"]);
    expect(out.at(-1)!.author).toBe("flow/coder");
    expect(out.lineage.operator).toBe("coder");
  });

  it("returns the routed session itself when nothing fits", async () => {
    const input = Session.fromUserMessage("x");
    const out = await new Selector({ provider: router("-1") }).run(input, candidates());
    expect(out.id).toBe(input.id);
    expect(out.length).toBe(2);
    expect(decision(out).data).toMatchObject({ index: -1 });
  });

  it("loops until nothing fits, the caller's pattern", async () => {
    const list = candidates();
    const provider = new ScriptedProvider([{ text: "0" }, { text: "1" }, { text: "-1" }]);
    const selector = new Selector({ provider });
    let session = Session.fromUserMessage("build and document");
    for (;;) {
      const { target, session: routed } = await selector.route(session, list);
      if (target instanceof PassThrough) break;
      session = await target.run(routed);
    }
    expect(session.chunks.filter((c) => c.kind === "assistant").map((c) => c.author)).toEqual([
      "coder",
      "writer",
    ]);
  });
});

describe("Selector construction", () => {
  it("needs a provider or a rule", () => {
    let error: unknown;
    try {
      new Selector({});
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect(new Selector({ rule: () => 0 }).name).toBe("selector");
    expect(new Selector({ rule: () => 0, name: "router" }).name).toBe("router");
  });
});
