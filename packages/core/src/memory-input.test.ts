import { OpenRathError, Session } from "@openrath/core";
import {
  memoryId,
  memoryKey,
  parseCommitArgs,
  parseForgetArgs,
  parseMemoryInputs,
  parseRecallArgs,
} from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

const scope = { tenant: "acme" };

function code(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return OpenRathError.isInstance(error) ? error.code : "not an OpenRathError";
  }
  return undefined;
}

describe("memory input checks (shared by every backend)", () => {
  it("remember: defaults id and scope, keeps metadata and source, collapses repeats at one scope", () => {
    const entries = parseMemoryInputs(
      [
        { text: "a", metadata: { tags: ["x"] }, source: "web:example.com" },
        { id: "k", text: "first" },
        { id: "k", text: "second" },
        { id: "k", text: "other scope", scope: { tenant: "globex" } },
      ],
      scope,
      7,
    );
    expect(entries.map((e) => [e.id, e.text, e.scope.tenant])).toEqual([
      [memoryId(scope, "a"), "a", "acme"],
      ["k", "second", "acme"],
      ["k", "other scope", "globex"],
    ]);
    expect(entries[0]).toMatchObject({ metadata: { tags: ["x"] }, source: "web:example.com", createdAt: 7 });
  });

  it("remember: refuses blank text, bad ids, non-JSON metadata and non-string sources with invalid_argument", () => {
    const bad: unknown[] = [
      { text: "" },
      { text: "   \n" },
      { text: 42 },
      {},
      null,
      "just a string",
      { text: "x", id: "" },
      { text: "x", id: 7 },
      { text: "x", id: "a\u0000b" },
      { text: "x", id: "\ud800" },
      { text: "x", id: "x".repeat(513) },
      { text: "x", metadata: [1] },
      { text: "x", metadata: { when: new Date() } },
      { text: "x", metadata: { n: Number.NaN } },
      { text: "x", source: 3 },
    ];
    for (const input of bad)
      expect(
        code(() => parseMemoryInputs(input, scope, 0)),
        JSON.stringify(input),
      ).toBe("invalid_argument");
    expect(code(() => parseMemoryInputs({ text: "x", scope: { tenant: "a/b" } }, scope, 0))).toBe(
      "invalid_scope",
    );
    expect(code(() => parseMemoryInputs({ text: "x", scope: "acme" }, scope, 0))).toBe("invalid_scope");
  });

  it("recall: topK from 0 to 10,000, a finite minScore, a scope", () => {
    expect(parseRecallArgs("q", undefined, scope)).toEqual({
      query: "q",
      topK: 5,
      minScore: Number.NEGATIVE_INFINITY,
      scope,
    });
    for (const options of [
      { topK: -1 },
      { topK: 1.5 },
      { topK: 10_001 },
      { minScore: Number.NaN },
      { minScore: "1" },
      3,
    ]) {
      expect(
        code(() => parseRecallArgs("q", options, scope)),
        JSON.stringify(options),
      ).toBe("invalid_argument");
    }
    expect(code(() => parseRecallArgs(3, {}, scope))).toBe("invalid_argument");
    expect(code(() => parseRecallArgs("q", { scope: { user: "" } }, scope))).toBe("invalid_scope");
  });

  it("forget: ids at one scope (default: the store's), or a subtree", () => {
    expect(parseForgetArgs({ ids: ["a", "a", "b"] }, scope)).toEqual({ kind: "ids", ids: ["a", "b"], scope });
    expect(parseForgetArgs({ ids: ["a"], scope: { tenant: "t", user: "u" } }, scope)).toMatchObject({
      scope: { tenant: "t", user: "u" },
    });
    expect(parseForgetArgs({ scope: { tenant: "t" } }, scope)).toEqual({
      kind: "scope",
      scope: { tenant: "t" },
    });
    for (const selector of [{}, null, { ids: "a" }, { ids: [1] }, { ids: [""] }]) {
      expect(
        code(() => parseForgetArgs(selector, scope)),
        JSON.stringify(selector),
      ).toBe("invalid_argument");
    }
  });

  it("commit: a Session, its requests and answers at the scope", () => {
    const session = Session.fromUserMessage("Book a table").append({ kind: "assistant", content: "Booked." });
    const { entries } = parseCommitArgs(session, { scope: { tenant: "t" } }, scope, 1);
    expect(entries.map((e) => [e.text, e.scope])).toEqual([
      ["Book a table", { tenant: "t" }],
      ["Booked.", { tenant: "t" }],
    ]);
    expect(code(() => parseCommitArgs({ chunks: "no" }, {}, scope, 1))).toBe("invalid_argument");
  });

  it("memoryKey tells the same id at two scopes apart", () => {
    expect(memoryKey({ tenant: "a", user: "b" }, "x")).not.toBe(memoryKey({ tenant: "a" }, "x"));
    expect(memoryKey({ tenant: "a", user: "b" }, "x")).toBe(memoryKey({ tenant: "a", user: "b" }, "x"));
  });
});
