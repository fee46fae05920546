import {
  Agent,
  Budget,
  Compressor,
  createRegistry,
  defineTool,
  OpenRathError,
  type SandboxBackendV1,
  ScriptedProvider,
  type ScriptedTurn,
  Session,
  type UsageReport,
  type UserChunk,
  usageReport,
} from "@openrath/core";
import { requestFingerprint } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

declare module "@openrath/core" {
  interface SandboxBackends {
    "compressor-test": { readonly size?: number };
  }
}

const usage = (promptTokens: number, completionTokens: number) => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
});

const lookup = defineTool({
  name: "lookup",
  description: "",
  parameters: {},
  execute: () => ({ found: true }),
});

/** A session with usage from two agents and two models, one of them on a fork. */
async function history(): Promise<Session> {
  const planner = new Agent({
    name: "planner",
    provider: new ScriptedProvider(
      [
        { toolCalls: [{ name: "lookup" }], usage: usage(100, 10) },
        { text: "Plan: go.", usage: usage(120, 5) },
      ],
      "model-a",
    ),
    tools: [lookup],
  });
  const doer = new Agent({
    name: "doer",
    provider: new ScriptedProvider([{ text: "Done.", usage: usage(200, 20) }], "model-b"),
  });
  const planned = await planner.run(Session.fromUserMessage("Do the thing"), { path: "flow" });
  return doer.run(planned.fork(), { path: "flow" });
}

const summarizer = (turn: ScriptedTurn = { text: "  The user asked; it was planned and done.  " }) =>
  new ScriptedProvider([{ usage: usage(300, 15), ...turn }], "model-s");

/** A report's rows as [key, totalTokens, calls], sorted by key, for comparison. */
const rows = (report: UsageReport, by: "byModel" | "byAuthor") =>
  report[by]
    .map((r) => [r.key, r.usage.totalTokens, r.calls])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

async function failure(promise: Promise<unknown>): Promise<OpenRathError> {
  try {
    await promise;
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an OpenRathError");
}

describe("Compressor.run", () => {
  it("folds the session into one model-visible user chunk holding the trimmed summary", async () => {
    const input = await history();
    const out = await new Compressor({ provider: summarizer() }).run(input);
    expect(out.length).toBe(1);
    expect(out.messages()).toEqual([{ role: "user", content: "The user asked; it was planned and done." }]);
    const chunk = out.at(0) as UserChunk;
    expect(chunk).toMatchObject({
      kind: "user",
      author: "compressor",
      model: "model-s",
      usage: usage(300, 15),
    });
    expect(chunk.sessionId).toBe(out.id);
  });

  it("records lineage op compress with extras, the input as parent", async () => {
    const input = await history();
    const out = await new Compressor({ provider: summarizer(), name: "squash" }).run(input, { path: "flow" });
    expect(out.id).not.toBe(input.id);
    expect(out.lineage.op).toBe("compress");
    expect(out.lineage.operator).toBe("squash");
    expect(out.lineage.parents.map((p) => p.id)).toEqual([input.id]);
    expect(out.lineage.extras).toMatchObject({
      "compression.lossy": true,
      "compression.chunks_in": input.length,
      "compression.rows_out": 1,
    });
    expect(out.at(0)!.author).toBe("flow/squash");
  });

  it("sends instructions, the transcript and a closing request, with tools off", async () => {
    const provider = summarizer();
    const input = await history();
    await new Compressor({ provider, instructions: "You summarize." }).run(input);
    const request = provider.requests[0]!;
    expect(request.toolChoice).toBe("none");
    expect(request).not.toHaveProperty("tools");
    expect(request.messages[0]).toEqual({ role: "system", content: "You summarize." });
    expect(request.messages.slice(1, -1)).toEqual(input.messages());
    expect(request.messages.at(-1)!.role).toBe("user");
    expect(request.messages.at(-1)!.content).toMatch(/^Summarize the conversation above/);
  });

  it("uses a custom closing request and records the request fingerprint for replay", async () => {
    const provider = summarizer();
    const out = await new Compressor({ provider, request: "Two words only." }).run(
      Session.fromUserMessage("hi"),
    );
    expect(provider.requests[0]!.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "user", content: "Two words only." },
    ]);
    expect((out.at(0) as UserChunk).requestHash).toBe(requestFingerprint(provider.requests[0]!));
  });

  it("carries the replaced usage, so reports by model and author equal the input's plus the compression call", async () => {
    const input = await history();
    const out = await new Compressor({ provider: summarizer() }).run(input);
    const before = usageReport(input.chunks);
    const after = usageReport(out.chunks);
    expect(after.total.totalTokens).toBe(before.total.totalTokens + 315);
    expect(out.usage.totalTokens).toBe(input.usage.totalTokens + 315);
    expect(rows(after, "byModel")).toEqual(
      [...rows(before, "byModel"), ["model-s", 315, 1]].sort((a, b) =>
        String(a[0]).localeCompare(String(b[0])),
      ),
    );
    expect(rows(after, "byAuthor")).toEqual(
      [...rows(before, "byAuthor"), ["compressor", 315, 1]].sort((a, b) =>
        String(a[0]).localeCompare(String(b[0])),
      ),
    );
    expect(rows(before, "byAuthor")).toEqual([
      ["flow/doer", 220, 1],
      ["flow/planner", 235, 2],
    ]);
  });

  it("keeps the branches of the replaced usage", async () => {
    const input = await history();
    const out = await new Compressor({ provider: summarizer() }).run(input);
    const branches = (s: Session) => usageReport(s.chunks).byBranch.map((r) => [r.key, r.usage.totalTokens]);
    expect(branches(out)).toEqual(
      [[out.id, 315], ...branches(input)].sort((a, b) => Number(b[1]) - Number(a[1])),
    );
  });

  it("keeps the totals when compressing twice, the nested summary unfolded", async () => {
    const input = await history();
    const once = await new Compressor({ provider: summarizer() }).run(input);
    const continued = await new Agent({
      name: "doer",
      provider: new ScriptedProvider([{ text: "More.", usage: usage(50, 5) }], "model-b"),
    }).run(once, { path: "flow" });
    const twice = await new Compressor({ provider: summarizer() }).run(continued);
    const report = usageReport(twice.chunks);
    expect(report.total.totalTokens).toBe(input.usage.totalTokens + 315 + 55 + 315);
    expect(rows(report, "byAuthor")).toEqual([
      ["compressor", 630, 2],
      ["flow/doer", 275, 2],
      ["flow/planner", 235, 2],
    ]);
    expect(rows(report, "byModel")).toEqual([
      ["model-a", 235, 2],
      ["model-b", 275, 2],
      ["model-s", 630, 2],
    ]);
  });

  it("keeps the input's sandbox placement, with a hold of its own", async () => {
    const backend: SandboxBackendV1 = {
      kind: "sandbox",
      key: "compressor-test",
      specVersion: "v1",
      capabilities: {
        streaming: false,
        stdin: false,
        network: "none",
        isolation: "process",
        snapshots: false,
        languages: [],
      },
      open: async () => {
        throw new Error("never opened here");
      },
    };
    const input = Session.fromUserMessage("hi").to(
      "compressor-test",
      { size: 1 },
      { registry: createRegistry({ sandboxes: [backend] }) },
    );
    const out = await new Compressor({ provider: summarizer() }).run(input);
    expect(out.placement?.toJSON()).toEqual({ key: "compressor-test", spec: { size: 1 } });
    expect(out.placement).not.toBe(input.placement);
    await Promise.all([input.release(), out.release()]);
  });

  it("charges the run's budget", async () => {
    const budget = new Budget({});
    await new Compressor({ provider: summarizer() }).run(Session.fromUserMessage("hi"), { budget });
    expect(budget.spent.totalTokens).toBe(315);
  });

  it("does not call the model when the run's budget is spent", async () => {
    const budget = new Budget({ maxTokens: 10 });
    budget.charge(usage(10, 0), "m");
    const provider = summarizer();
    await expect(
      new Compressor({ provider }).run(Session.fromUserMessage("hi"), { budget }),
    ).rejects.toMatchObject({
      code: "budget_exceeded",
    });
    expect(provider.callCount).toBe(0);
  });
});

describe("Compressor failures", () => {
  it.each([
    [{ toolCalls: [{ name: "lookup" }] }, "the model called tools"],
    [{ text: "A partial sum", finishReason: "length" }, "the summary was cut off at the token limit"],
    [{ text: "x", finishReason: "content_filter" }, "the summary was blocked by a content filter"],
    [{ text: "" }, "the model returned no text"],
    [{ text: "   \n " }, "the model returned no text"],
  ] as [ScriptedTurn, string][])("refuses %j with compression_failed (%s)", async (turn, problem) => {
    const input = Session.fromUserMessage("hi");
    const error = await failure(new Compressor({ provider: summarizer(turn) }).run(input));
    expect(error.code).toBe("compression_failed");
    expect(error.message).toContain(
      `Compressor "compressor" could not summarize session ${input.id}: ${problem}`,
    );
    expect(error.details).toMatchObject({ sessionId: input.id });
  });

  it("lets provider errors through after its retries", async () => {
    const provider = new ScriptedProvider([
      { error: { code: "provider_unavailable" } },
      { error: { code: "provider_unavailable" } },
    ]);
    const error = await failure(
      new Compressor({ provider, retry: { maxAttempts: 2, baseDelayMs: 1 } }).run(
        Session.fromUserMessage("hi"),
      ),
    );
    expect(error.code).toBe("provider_unavailable");
    expect(provider.callCount).toBe(2);
  });

  it("needs a provider", () => {
    expect(() => new Compressor({} as never)).toThrow("A Compressor needs a provider.");
  });
});
