import {
  type ChunkInput,
  costOf,
  createChunk,
  Session,
  sumUsage,
  type Usage,
  usageReport,
} from "@openrath/core";
import { addUsage, ZERO_USAGE } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";
import { UNKNOWN } from "./usage.js";

const usage = (p: number, c: number, extra: Partial<Usage> = {}): Usage => ({
  promptTokens: p,
  completionTokens: c,
  totalTokens: p + c,
  ...extra,
});
const reply = (content: string, u: Usage, more: Partial<ChunkInput> = {}): ChunkInput =>
  ({ kind: "assistant", content, usage: u, ...more }) as ChunkInput;

describe("addUsage", () => {
  it("adds the three required counts", () => {
    expect(addUsage(usage(1, 2), usage(10, 20))).toStrictEqual({
      promptTokens: 11,
      completionTokens: 22,
      totalTokens: 33,
    });
  });

  it("leaves optional counts absent when neither side reports them", () => {
    const sum = addUsage(usage(1, 1), ZERO_USAGE);
    expect("cachedPromptTokens" in sum).toBe(false);
    expect("reasoningTokens" in sum).toBe(false);
  });

  it("keeps an optional count reported by only one side, on either side", () => {
    expect(addUsage(usage(5, 1, { cachedPromptTokens: 3 }), usage(1, 1))).toStrictEqual({
      ...usage(6, 2),
      cachedPromptTokens: 3,
    });
    expect(addUsage(usage(1, 1), usage(1, 4, { reasoningTokens: 2 }))).toStrictEqual({
      ...usage(2, 5),
      reasoningTokens: 2,
    });
    expect(
      addUsage(
        usage(4, 4, { cachedPromptTokens: 1, reasoningTokens: 2 }),
        usage(4, 4, { cachedPromptTokens: 3 }),
      ),
    ).toStrictEqual({ ...usage(8, 8), cachedPromptTokens: 4, reasoningTokens: 2 });
  });

  it("does not modify its arguments or ZERO_USAGE", () => {
    const a = usage(1, 1);
    addUsage(a, usage(2, 2, { cachedPromptTokens: 1 }));
    expect(a).toStrictEqual(usage(1, 1));
    expect(ZERO_USAGE).toStrictEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
    expect(Object.isFrozen(ZERO_USAGE)).toBe(true);
  });
});

describe("costOf", () => {
  it("prices prompt and completion tokens per million", () => {
    expect(costOf(usage(1_000_000, 500_000), { input: 2, output: 8 })).toBeCloseTo(2 + 4, 10);
  });

  it("prices cached prompt tokens at cachedInput and the rest at input", () => {
    const u = usage(1_000_000, 0, { cachedPromptTokens: 400_000 });
    expect(costOf(u, { input: 2, output: 8, cachedInput: 0.5 })).toBeCloseTo(0.6 * 2 + 0.4 * 0.5, 10);
  });

  it("prices cached tokens at input when no cachedInput is given", () => {
    const u = usage(1_000_000, 0, { cachedPromptTokens: 400_000 });
    expect(costOf(u, { input: 2, output: 8 })).toBeCloseTo(2, 10);
  });

  it("never counts more cached tokens than prompt tokens", () => {
    const u = usage(100, 0, { cachedPromptTokens: 1000 });
    expect(costOf(u, { input: 10, output: 0, cachedInput: 1 })).toBeCloseTo((100 * 1) / 1e6, 12);
  });
});

describe("sumUsage", () => {
  it("sums the usage carried by assistant and event chunks and ignores chunks without it", () => {
    const s = Session.fromUserMessage("q").append(
      reply("a", usage(10, 5)),
      { kind: "event", name: "compress", usage: usage(100, 20) },
      { kind: "assistant", content: "no usage" },
    );
    expect(sumUsage(s.chunks)).toStrictEqual(usage(110, 25));
    expect(s.usage).toStrictEqual(usage(110, 25));
  });

  it("counts a chunk id once even when the chunk appears twice", () => {
    const chunk = createChunk(reply("a", usage(7, 3)), "s");
    expect(sumUsage([chunk, chunk, chunk])).toStrictEqual(usage(7, 3));
  });

  it("gives zero usage for no chunks", () => {
    expect(sumUsage([])).toStrictEqual(ZERO_USAGE);
    expect(Session.empty().usage).toStrictEqual(ZERO_USAGE);
  });
});

describe("session usage", () => {
  const base = Session.fromUserMessage("q").append(reply("a", usage(100, 10)));

  it("is inherited by a fork and grows only with the fork's own chunks", () => {
    const fork = base.fork();
    expect(fork.usage).toStrictEqual(usage(100, 10));
    const grown = fork.append(reply("b", usage(1, 1)));
    expect(grown.usage).toStrictEqual(usage(101, 11));
    expect(base.usage).toStrictEqual(usage(100, 10));
  });

  it("of a three-way merge of two forks is the prefix once plus both suffixes", () => {
    const left = base.fork().append(reply("l1", usage(1, 2)), reply("l2", usage(3, 4)));
    const right = base.fork().append(reply("r", usage(5, 6)));
    const merged = left.merge(right);
    expect(merged.usage).toStrictEqual(usage(100 + 1 + 3 + 5, 10 + 2 + 4 + 6));
  });

  it("of a concat merge does not double-count the duplicated prefix", () => {
    const left = base.fork().append(reply("l", usage(1, 1)));
    const right = base.fork().append(reply("r", usage(2, 2)));
    const merged = left.merge(right, { strategy: "concat" });
    expect(merged.length).toBe(left.length + right.length);
    expect(merged.usage).toStrictEqual(usage(103, 13));
  });

  it("is kept by detach, to-less versions and fromJSON", () => {
    expect(base.detach().usage).toStrictEqual(base.usage);
    expect(Session.fromJSON(JSON.stringify(base)).usage).toStrictEqual(base.usage);
  });

  it("of a derive that replaces the chunks is the usage of the replacement", () => {
    const compressed = base.derive({
      op: "compress",
      operator: "Compressor",
      chunks: [
        { kind: "event", name: "compress", usage: usage(50, 5) },
        { kind: "user", content: "summary" },
      ],
    });
    expect(compressed.usage).toStrictEqual(usage(50, 5));
  });
});

describe("usageReport", () => {
  const question = Session.fromUserMessage("q");
  const alpha = question
    .fork()
    .append(
      reply("a1", usage(1000, 100, { cachedPromptTokens: 600 }), { model: "gpt-big", author: "alpha" }),
      reply("a2", usage(10, 1), { model: "gpt-small", author: "alpha" }),
    );
  const beta = question
    .fork()
    .append(
      reply("b1", usage(500, 50), { model: "gpt-big", author: "beta" }),
      { kind: "event", name: "compress", usage: usage(7, 7) },
      { kind: "assistant", content: "free" },
    );
  const merged = alpha.merge(beta);

  it("totals the usage of every chunk that carries it", () => {
    const report = usageReport(merged.chunks);
    expect(report.total).toStrictEqual(merged.usage);
    expect(report.total).toStrictEqual(
      addUsage(usage(1517, 158), { ...ZERO_USAGE, cachedPromptTokens: 600 }),
    );
    expect(report.cost).toBeUndefined();
    expect("cost" in report).toBe(false);
    expect(report.unpricedModels).toEqual([]);
  });

  it("rolls up by model, biggest first, with unknown for chunks without a model", () => {
    const report = usageReport(merged.chunks);
    expect(report.byModel.map((r) => [r.key, r.usage.totalTokens, r.calls])).toEqual([
      ["gpt-big", 1100 + 550, 2],
      [UNKNOWN, 14, 1],
      ["gpt-small", 11, 1],
    ]);
    expect(report.byModel.every((r) => !("cost" in r))).toBe(true);
  });

  it("rolls up by author and by branch (the session that appended the chunk)", () => {
    const report = usageReport(merged.chunks);
    expect(report.byAuthor.map((r) => [r.key, r.usage.totalTokens, r.calls])).toEqual([
      ["alpha", 1111, 2],
      ["beta", 550, 1],
      [UNKNOWN, 14, 1],
    ]);
    expect(report.byBranch.map((r) => [r.key, r.usage.totalTokens, r.calls])).toEqual([
      [alpha.id, 1111, 2],
      [beta.id, 564, 2],
    ]);
  });

  it("breaks ties between equal totals by key", () => {
    const s = Session.empty().append(
      reply("x", usage(1, 1), { model: "b" }),
      reply("y", usage(1, 1), { model: "a" }),
    );
    expect(usageReport(s.chunks).byModel.map((r) => r.key)).toEqual(["a", "b"]);
  });

  it("prices each chunk with the table, using cachedInput, and lists the models it lacks", () => {
    const prices = { "gpt-big": { input: 10, output: 30, cachedInput: 1 } };
    const report = usageReport(merged.chunks, { prices });
    const a1 = (400 * 10 + 600 * 1 + 100 * 30) / 1e6;
    const b1 = (500 * 10 + 50 * 30) / 1e6;
    expect(report.cost).toBeCloseTo(a1 + b1, 12);
    expect(report.unpricedModels).toEqual(["gpt-small", UNKNOWN]);
    const big = report.byModel.find((r) => r.key === "gpt-big")!;
    expect(big.cost).toBeCloseTo(a1 + b1, 12);
    expect(report.byModel.find((r) => r.key === "gpt-small")!.cost).toBe(0);
    expect(report.byAuthor.find((r) => r.key === "alpha")!.cost).toBeCloseTo(a1, 12);
    expect(report.byBranch.find((r) => r.key === beta.id)!.cost).toBeCloseTo(b1, 12);
  });

  it("counts each chunk id once in a concat merge", () => {
    const doubled = alpha.merge(alpha.fork(), { strategy: "concat" });
    expect(doubled.length).toBe(2 * alpha.length);
    const report = usageReport(doubled.chunks);
    expect(report.total).toStrictEqual(alpha.usage);
    expect(report.byModel.find((r) => r.key === "gpt-big")!.calls).toBe(1);
  });

  it("gives an empty report for a session without usage", () => {
    const report = usageReport(question.chunks, { prices: {} });
    expect(report).toStrictEqual({
      total: ZERO_USAGE,
      cost: 0,
      unpricedModels: [],
      byModel: [],
      byAuthor: [],
      byBranch: [],
    });
  });
});
