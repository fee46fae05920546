import {
  type Chunk,
  type ChunkInput,
  createRegistry,
  defaultRegistry,
  LineageNode,
  MergeConflictError,
  type Message,
  OpenRathError,
  Placement,
  type Registry,
  type SandboxBackendV1,
  type SandboxV1,
  Session,
  type SessionJSON,
  UnknownBackendError,
} from "@openrath/core";
import { describe, expect, it } from "vitest";

declare module "@openrath/core" {
  interface SandboxBackends {
    fake: { readonly root?: string };
    "fake-other": { readonly root?: string };
  }
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A backend descriptor that is never opened here: placement is lazy, so only its key and parseSpec matter. */
const fakeSandbox = (key = "fake", extra: Partial<SandboxBackendV1> = {}): SandboxBackendV1 => ({
  kind: "sandbox",
  key,
  specVersion: "v1",
  capabilities: {
    streaming: true,
    stdin: false,
    network: "none",
    isolation: "process",
    snapshots: false,
    languages: [],
  },
  open: async () => ({ close: async () => {} }) as unknown as SandboxV1,
  ...extra,
});
const registry = createRegistry({ sandboxes: [fakeSandbox("fake"), fakeSandbox("fake-other")] });

/** The OpenRathError `fn` throws (failing the test if it throws anything else or nothing). */
function thrown(fn: () => unknown): OpenRathError {
  try {
    fn();
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  return expect.fail("expected an OpenRathError");
}

const say = (content: string): ChunkInput => ({ kind: "assistant", content });
const ask = (content: string): ChunkInput => ({ kind: "user", content });
const texts = (s: Session) => s.chunks.map((c) => ("content" in c ? c.content : `event:${c.name}`));
const ids = (s: Session) => s.chunks.map((c) => c.id);
/**
 * `session.to` for a key no adapter declared. The compile-time check is proven in
 * registry.test-d.ts; this reaches the run-time check whatever keys the program declares.
 */
const toUndeclared = (s: Session, key: string, spec?: unknown, options?: { registry?: Registry }) =>
  (s.to as (key: string, spec?: unknown, options?: { registry?: Registry }) => Session).call(
    s,
    key,
    spec,
    options,
  );
/** Where a session is placed, as plain data (a Placement also holds a share of the sandbox). */
const where = (s: Session) => s.placement?.toJSON();
const numbered = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => say(`${prefix}${i}`));

describe("Session.fromUserMessage", () => {
  it("holds one user chunk stamped with the new session's id", () => {
    const s = Session.fromUserMessage("Plan a trip to Kyoto");
    expect(s.id).toMatch(UUID_V7);
    expect(s.length).toBe(1);
    expect(s.chunks[0]).toMatchObject({ kind: "user", content: "Plan a trip to Kyoto", sessionId: s.id });
    expect(s.chunks[0]!.id).toMatch(UUID_V7);
    expect(s.chunks[0]!.createdAt).toBe(s.lineage.createdAt);
    expect(s.placement).toBeUndefined();
  });

  it("is a leaf_user lineage root with operator Session.fromUserMessage and its source in extras", () => {
    const s = Session.fromUserMessage("q");
    expect(s.lineage).toBeInstanceOf(LineageNode);
    expect(s.lineage.id).toBe(s.id);
    expect(s.lineage.op).toBe("leaf_user");
    expect(s.lineage.operator).toBe("Session.fromUserMessage");
    expect(s.lineage.parents).toEqual([]);
    expect(s.lineage.extras).toEqual({ source: "Session.fromUserMessage" });
    expect(s.lineage.length).toBe(1);
  });

  it("records the author when given", () => {
    expect(Session.fromUserMessage("q", { author: "alice" }).chunks[0]!.author).toBe("alice");
    expect("author" in Session.fromUserMessage("q").chunks[0]!).toBe(false);
  });

  it("makes a new id every time", () => {
    expect(Session.fromUserMessage("q").id).not.toBe(Session.fromUserMessage("q").id);
  });
});

describe("Session.fromAgentPrompt", () => {
  it("holds one system chunk and is a leaf_system root", () => {
    const s = Session.fromAgentPrompt("You are terse.", { author: "planner" });
    expect(s.chunks).toEqual([
      expect.objectContaining({
        kind: "system",
        content: "You are terse.",
        author: "planner",
        sessionId: s.id,
      }),
    ]);
    expect(s.lineage.op).toBe("leaf_system");
    expect(s.lineage.operator).toBe("Session.fromAgentPrompt");
    expect(s.lineage.extras).toEqual({ source: "Session.fromAgentPrompt" });
    expect(s.lineage.parents).toEqual([]);
  });
});

describe("Session.empty", () => {
  it("has no chunks and a create lineage root with no extras", () => {
    const s = Session.empty();
    expect(s.length).toBe(0);
    expect(s.chunks).toEqual([]);
    expect(s.lineage.op).toBe("create");
    expect(s.lineage.operator).toBe("Session.empty");
    expect(s.lineage.extras).toEqual({});
    expect(s.lineage.parents).toEqual([]);
    expect(s.messages()).toEqual([]);
    expect(s.text()).toBeUndefined();
  });
});

describe("Session.fromMessages", () => {
  const messages: Message[] = [
    { role: "system", content: "You are helpful." },
    { role: "user", content: "Weather in Kyoto and Osaka?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Kyoto"}' } },
        { id: "call_2", type: "function", function: { name: "forecast", arguments: '{"city":"Osaka"}' } },
      ],
    },
    { role: "tool", content: '{"c":21}', tool_call_id: "call_1" },
    { role: "tool", content: '{"c":23}', tool_call_id: "call_2" },
    { role: "assistant", content: "Kyoto 21°C, Osaka 23°C." },
  ];

  it("turns OpenAI messages into chunks of the matching kinds", () => {
    const s = Session.fromMessages(messages);
    expect(s.chunks.map((c) => c.kind)).toEqual([
      "system",
      "user",
      "assistant",
      "tool_result",
      "tool_result",
      "assistant",
    ]);
    expect(s.chunks[2]).toMatchObject({
      content: null,
      toolCalls: [
        { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Kyoto"}' } },
        { id: "call_2", type: "function", function: { name: "forecast", arguments: '{"city":"Osaka"}' } },
      ],
    });
    expect(s.chunks.every((c) => c.sessionId === s.id)).toBe(true);
  });

  it("resolves each tool message's name from the assistant call it answers", () => {
    const s = Session.fromMessages(messages);
    expect(s.chunks[3]).toMatchObject({
      kind: "tool_result",
      toolCallId: "call_1",
      name: "weather",
      content: '{"c":21}',
    });
    expect(s.chunks[4]).toMatchObject({ kind: "tool_result", toolCallId: "call_2", name: "forecast" });
  });

  it("round-trips through messages()", () => {
    expect(Session.fromMessages(messages).messages()).toEqual(messages);
  });

  it("is a create lineage root with operator Session.fromMessages", () => {
    const s = Session.fromMessages(messages);
    expect(s.lineage.op).toBe("create");
    expect(s.lineage.operator).toBe("Session.fromMessages");
    expect(s.lineage.parents).toEqual([]);
    expect(s.lineage.length).toBe(messages.length);
  });

  it("gives an empty name to a tool message whose call is not in the list", () => {
    const s = Session.fromMessages([{ role: "tool", content: "{}", tool_call_id: "orphan" }]);
    expect(s.chunks[0]).toMatchObject({ kind: "tool_result", name: "", toolCallId: "orphan" });
  });

  it("rejects an unknown role with invalid_chunk naming the index and the valid roles", () => {
    const error = thrown(() =>
      Session.fromMessages([{ role: "user", content: "x" }, { role: "developer", content: "y" } as never]),
    );
    expect(error.code).toBe("invalid_chunk");
    expect(error.message).toContain("Message 1");
    expect(error.message).toContain('"developer"');
    expect(error.message).toContain("system, user, assistant, tool");
  });

  it("rejects a non-array with invalid_argument", () => {
    expect(thrown(() => Session.fromMessages("hello" as never)).code).toBe("invalid_argument");
  });

  it("rejects a malformed message through chunk validation", () => {
    expect(thrown(() => Session.fromMessages([{ role: "user", content: 5 } as never])).code).toBe(
      "invalid_chunk",
    );
  });
});

describe("append", () => {
  const base = Session.fromUserMessage("q");

  it("returns a new version with the same id and the same lineage node", () => {
    const next = base.append(say("a"));
    expect(next).not.toBe(base);
    expect(next.id).toBe(base.id);
    expect(next.lineage).toBe(base.lineage);
  });

  it("leaves the original unchanged", () => {
    const before = base.chunks;
    const next = base.append(say("a"), ask("b"));
    expect(base.length).toBe(1);
    expect(base.chunks).toBe(before);
    expect(texts(base)).toEqual(["q"]);
    expect(texts(next)).toEqual(["q", "a", "b"]);
  });

  it("stamps ids, createdAt and this session's id, in increasing id order", () => {
    const t0 = Date.now();
    const next = base.append(say("a"), say("b"));
    const [a, b] = next.chunks.slice(1);
    expect(a!.id).toMatch(UUID_V7);
    expect(b!.id).toMatch(UUID_V7);
    expect(a!.id < b!.id).toBe(true);
    expect(a!.createdAt).toBeGreaterThanOrEqual(t0);
    expect(a!.createdAt).toBeLessThanOrEqual(Date.now());
    expect(a!.sessionId).toBe(base.id);
  });

  it("freezes every chunk and the chunks array", () => {
    const next = base.append(say("a"));
    expect(Object.isFrozen(next.chunks)).toBe(true);
    for (const chunk of next.chunks) expect(Object.isFrozen(chunk)).toBe(true);
    expect(() => {
      (next.chunks as Chunk[]).push(next.chunks[0]!);
    }).toThrow(TypeError);
    expect(() => {
      (next.chunks[1] as { content: string }).content = "changed";
    }).toThrow(TypeError);
  });

  it("returns the same session when given nothing", () => {
    expect(base.append()).toBe(base);
  });

  it("keeps the id and sessionId of chunks copied from another session", () => {
    const source = Session.fromUserMessage("elsewhere").append(say("a"));
    const copied = base.append(...source.chunks);
    expect(copied.chunks.slice(1)).toEqual(source.chunks);
    expect(copied.chunks[1]!.sessionId).toBe(source.id);
    expect(copied.chunks[2]!.id).toBe(source.chunks[1]!.id);
  });

  it("keeps the id and sessionId of a plain (unfrozen) copied chunk", () => {
    const plain = { ...base.chunks[0]! };
    const other = Session.empty().append(plain);
    expect(other.chunks[0]).toEqual(base.chunks[0]);
    expect(Object.isFrozen(other.chunks[0])).toBe(true);
  });

  it("keeps placement", () => {
    const placed = base.to("fake", { root: "/w" }, { registry });
    // Versions of one session share one placement (one hold on the sandbox).
    expect(placed.append(say("a")).placement).toBe(placed.placement);
    expect(where(placed.append(say("a")))).toEqual({ key: "fake", spec: { root: "/w" } });
  });

  it.each([
    ["a user chunk without content", { kind: "user" }, "user chunk needs string `content`"],
    [
      "a system chunk with numeric content",
      { kind: "system", content: 1 },
      "system chunk needs string `content`",
    ],
    ["an assistant with null content and no tool calls", { kind: "assistant", content: null }, "tool calls"],
    ["a tool_result without a name", { kind: "tool_result", toolCallId: "c", content: "{}" }, "`name`"],
    ["an event without a name", { kind: "event" }, "`name`"],
    [
      "an unknown kind",
      { kind: "thought", content: "x" },
      "valid kinds are system, user, assistant, tool_result, event",
    ],
  ])("throws invalid_chunk for %s and appends nothing", (_, bad, fragment) => {
    const s = base.append(say("ok"));
    const error = thrown(() => s.append(say("first is valid"), bad as never, say("last is valid")));
    expect(error.code).toBe("invalid_chunk");
    expect(error.message).toContain(fragment);
    expect(texts(s)).toEqual(["q", "ok"]);
    // Nothing leaked into the shared buffer either: later versions see only what they appended.
    expect(texts(s.append(say("next")))).toEqual(["q", "ok", "next"]);
    expect(texts(s.fork().append(say("fork")))).toEqual(["q", "ok", "fork"]);
  });
});

describe("reading", () => {
  const call = {
    id: "call_9",
    type: "function" as const,
    function: { name: "search", arguments: '{"q":"x"}' },
  };
  const s = Session.fromAgentPrompt("sys").append(
    ask("question"),
    { kind: "event", name: "memory.recall", data: { hits: ["m1"] } },
    { kind: "assistant", content: "Let me look.", toolCalls: [call] },
    { kind: "tool_result", toolCallId: "call_9", name: "search", content: '{"ok":true}', isError: false },
    {
      kind: "assistant",
      content: "The answer.",
      model: "m",
      usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    },
    { kind: "assistant", content: null, toolCalls: [{ ...call, id: "call_10" }] },
    { kind: "event", name: "budget.exceeded" },
  );

  it("projects messages() without event chunks, in OpenAI shapes", () => {
    expect(s.messages()).toStrictEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "question" },
      { role: "assistant", content: "Let me look.", tool_calls: [call] },
      { role: "tool", content: '{"ok":true}', tool_call_id: "call_9" },
      { role: "assistant", content: "The answer." },
      { role: "assistant", content: null, tool_calls: [{ ...call, id: "call_10" }] },
    ]);
  });

  it("gives fresh message objects, so changing them does not change the session", () => {
    const first = s.messages();
    (first[2] as { tool_calls: { id: string }[] }).tool_calls[0]!.id = "mutated";
    first.length = 0;
    expect(s.messages()[2]).toStrictEqual({ role: "assistant", content: "Let me look.", tool_calls: [call] });
  });

  it("gives text() of the last assistant chunk with non-blank text, skipping tool-call-only turns", () => {
    expect(s.text()).toBe("The answer.");
    expect(s.append(say("   \n")).text()).toBe("The answer.");
    expect(s.append(say("final")).text()).toBe("final");
  });

  it("gives undefined from text() when no assistant has text", () => {
    expect(Session.fromUserMessage("q").text()).toBeUndefined();
    expect(
      Session.empty()
        .append({ kind: "assistant", content: null, toolCalls: [call] })
        .text(),
    ).toBeUndefined();
  });

  it("gives the last assistant chunk, tool-call-only or not", () => {
    expect(s.lastAssistant()).toMatchObject({ content: null, toolCalls: [{ id: "call_10" }] });
    expect(Session.fromUserMessage("q").lastAssistant()).toBeUndefined();
  });

  it("indexes chunks with at(), negative from the end", () => {
    expect(s.at(0)).toBe(s.chunks[0]);
    expect(s.at(-1)).toMatchObject({ kind: "event", name: "budget.exceeded" });
    expect(s.at(s.length)).toBeUndefined();
    expect(s.length).toBe(s.chunks.length);
  });

  it("previews the first and last four chunks in toString()", () => {
    const long = Session.fromUserMessage("first").append(...numbered("line", 10));
    const preview = long.toString();
    expect(preview).toContain(`Session ${long.id} (leaf_user, 11 chunks)`);
    expect(preview).toContain("user: first");
    expect(preview).toContain("assistant: line9");
    expect(preview).toContain("... (3 chunks omitted) ...");
    expect(preview).not.toContain("line4");
    expect(s.toString()).toContain("assistant: 1 tool call(s)");
    expect(s.toString()).toContain("event: budget.exceeded");
  });
});

describe("fork", () => {
  const base = Session.fromUserMessage("q").append(say("a"));

  it("makes a new id whose lineage node is a fork with this node as parent", () => {
    const fork = base.fork();
    expect(fork.id).not.toBe(base.id);
    expect(fork.id).toMatch(UUID_V7);
    expect(fork.lineage.op).toBe("fork");
    expect(fork.lineage.operator).toBe("Session.fork");
    expect(fork.lineage.parents).toEqual([base.lineage]);
    expect(fork.lineage.parents[0]).toBe(base.lineage);
    expect(fork.lineage.length).toBe(2);
  });

  it("records a custom operator and extras", () => {
    const fork = base.fork({ operator: "planner", extras: { attempt: 2 } });
    expect(fork.lineage.operator).toBe("planner");
    expect(fork.lineage.extras).toEqual({ attempt: 2 });
  });

  it("shares the parent's chunks instead of copying them", () => {
    const fork = base.fork();
    expect(fork.chunks).toBe(base.chunks);
    expect(fork.chunks[0]!.sessionId).toBe(base.id);
  });

  it("keeps placement, as its own hold on the same backend and spec", () => {
    const placed = base.to("fake", { root: "/w" }, { registry });
    const fork = placed.fork();
    expect(where(fork)).toEqual({ key: "fake", spec: { root: "/w" } });
    expect(fork.placement).toBeInstanceOf(Placement);
    expect(fork.placement).not.toBe(placed.placement);
    expect(base.fork().placement).toBeUndefined();
  });

  it("does not change the parent when the fork appends, nor the fork when the parent appends", () => {
    const fork = base.fork();
    const forkGrown = fork.append(say("fork says"));
    const baseGrown = base.append(say("parent says"));
    expect(texts(base)).toEqual(["q", "a"]);
    expect(texts(fork)).toEqual(["q", "a"]);
    expect(texts(forkGrown)).toEqual(["q", "a", "fork says"]);
    expect(texts(baseGrown)).toEqual(["q", "a", "parent says"]);
    expect(forkGrown.chunks[2]!.sessionId).toBe(fork.id);
    expect(baseGrown.chunks[2]!.sessionId).toBe(base.id);
  });

  it("lets two forks append independently, in either order, both correct", () => {
    const one = base.fork();
    const two = base.fork();
    const oneA = one.append(say("1a"));
    const twoA = two.append(say("2a"), say("2b"));
    const oneB = oneA.append(say("1b"));
    const twoB = twoA.append(say("2c"));
    expect(texts(oneA)).toEqual(["q", "a", "1a"]);
    expect(texts(oneB)).toEqual(["q", "a", "1a", "1b"]);
    expect(texts(twoA)).toEqual(["q", "a", "2a", "2b"]);
    expect(texts(twoB)).toEqual(["q", "a", "2a", "2b", "2c"]);
    expect(texts(base)).toEqual(["q", "a"]);
    // Appending again to an older version branches too.
    expect(texts(oneA.append(say("1b'")))).toEqual(["q", "a", "1a", "1b'"]);
    expect(texts(oneB)).toEqual(["q", "a", "1a", "1b"]);
  });
});

describe("detach", () => {
  const placed = Session.fromUserMessage("q").append(say("a")).to("fake", { root: "/d" }, { registry });

  it("makes a new lineage root with the same chunks and placement", () => {
    const detached = placed.detach();
    expect(detached.id).not.toBe(placed.id);
    expect(detached.lineage.op).toBe("detach");
    expect(detached.lineage.operator).toBe("Session.detach");
    expect(detached.lineage.parents).toEqual([]);
    expect(detached.lineage.length).toBe(2);
    expect(detached.chunks).toBe(placed.chunks);
    expect(where(detached)).toEqual({ key: "fake", spec: { root: "/d" } });
  });

  it("records a custom operator and extras", () => {
    const detached = placed.detach({ operator: "archive", extras: { reason: "export" } });
    expect(detached.lineage.operator).toBe("archive");
    expect(detached.lineage.extras).toEqual({ reason: "export" });
  });
});

describe("derive", () => {
  const base = Session.fromUserMessage("q")
    .append(say("long answer"))
    .to("fake", { root: "/r" }, { registry });

  it("makes a new identity with the given op, operator and extras and this session as parent", () => {
    const run = base.derive({ op: "loop", operator: "Agent(planner)", extras: { "loop.truncated": true } });
    expect(run.id).not.toBe(base.id);
    expect(run.lineage.op).toBe("loop");
    expect(run.lineage.operator).toBe("Agent(planner)");
    expect(run.lineage.extras).toEqual({ "loop.truncated": true });
    expect(run.lineage.parents).toEqual([base.lineage]);
    expect(where(run)).toEqual({ key: "fake", spec: { root: "/r" } });
  });

  it("keeps the transcript by default", () => {
    const run = base.derive({ op: "loop", operator: "Agent" });
    expect(run.chunks).toBe(base.chunks);
    expect(run.lineage.length).toBe(2);
  });

  it("replaces the transcript with the given chunks, stamped with the new session's id", () => {
    const compressed = base.derive({ op: "compress", operator: "Compressor", chunks: [ask("summary")] });
    expect(texts(compressed)).toEqual(["summary"]);
    expect(compressed.chunks[0]!.sessionId).toBe(compressed.id);
    expect(compressed.lineage.length).toBe(1);
    expect(texts(base)).toEqual(["q", "long answer"]);
    expect(base.derive({ op: "compress", operator: "C", chunks: [] }).length).toBe(0);
  });

  it("validates replacement chunks", () => {
    expect(
      thrown(() => base.derive({ op: "compress", operator: "C", chunks: [{ kind: "user" } as never] })).code,
    ).toBe("invalid_chunk");
  });
});

describe("merge", () => {
  const prefix = Session.fromUserMessage("q").append(...numbered("p", 4000)); // 4001 chunks

  it("three-way on two forks keeps the prefix once, then the left suffix, then the right", () => {
    const left = prefix.fork().append(...numbered("L", 5));
    const right = prefix.fork().append(...numbered("R", 5));
    const merged = left.merge(right);
    expect(merged.length).toBe(4011);
    expect(ids(merged)).toEqual([...ids(prefix), ...ids(left).slice(4001), ...ids(right).slice(4001)]);
    expect(texts(merged).slice(4000)).toEqual([
      "p3999",
      "L0",
      "L1",
      "L2",
      "L3",
      "L4",
      "R0",
      "R1",
      "R2",
      "R3",
      "R4",
    ]);
    expect(merged.lineage.extras).toEqual({
      strategy: "three-way",
      "merge.shared": 4001,
      "merge.left": 5,
      "merge.right": 5,
    });
  });

  it("three-way keeps this session's order: other.merge(this) puts the other suffix first", () => {
    const left = prefix.fork().append(say("L"));
    const right = prefix.fork().append(say("R"));
    expect(texts(right.merge(left)).slice(-2)).toEqual(["R", "L"]);
  });

  it("three-way with an ancestor version of this session adds only the newer chunks", () => {
    const older = Session.fromUserMessage("q").append(say("a"));
    const newer = older.append(say("b"), say("c"));
    expect(ids(older.merge(newer))).toEqual(ids(newer));
    expect(ids(newer.merge(older))).toEqual(ids(newer));
    expect(older.merge(newer).lineage.extras).toMatchObject({
      "merge.shared": 2,
      "merge.left": 0,
      "merge.right": 2,
    });
    expect(newer.merge(older).lineage.extras).toMatchObject({
      "merge.shared": 2,
      "merge.left": 2,
      "merge.right": 0,
    });
    // Through a fork as well: the fork's extension already contains the parent.
    const extended = older.fork().append(say("x"));
    expect(ids(older.merge(extended))).toEqual(ids(extended));
  });

  it("three-way finds the prefix by chunk id on sessions restored from JSON (no shared structure)", () => {
    const left = Session.fromJSON(JSON.stringify(prefix.fork().append(...numbered("L", 5))));
    const right = Session.fromJSON(JSON.parse(JSON.stringify(prefix.fork().append(...numbered("R", 5)))));
    const merged = left.merge(right);
    expect(merged.length).toBe(4011);
    expect(ids(merged).slice(0, 4001)).toEqual(ids(prefix));
    expect(texts(merged).slice(4001)).toEqual(["L0", "L1", "L2", "L3", "L4", "R0", "R1", "R2", "R3", "R4"]);
    expect(merged.lineage.extras["merge.shared"]).toBe(4001);
  });

  it("three-way of unrelated sessions is a plain concatenation", () => {
    const a = Session.fromUserMessage("a");
    const b = Session.fromUserMessage("b");
    expect(texts(a.merge(b))).toEqual(["a", "b"]);
    expect(a.merge(b).lineage.extras["merge.shared"]).toBe(0);
  });

  it("concat keeps all of both sides, so the shared prefix appears twice", () => {
    const left = prefix.fork().append(...numbered("L", 5));
    const right = prefix.fork().append(...numbered("R", 5));
    const merged = left.merge(right, { strategy: "concat" });
    expect(merged.length).toBe(2 * 4001 + 10);
    expect(ids(merged)).toEqual([...ids(left), ...ids(right)]);
    expect(merged.lineage.extras).toEqual({
      strategy: "concat",
      "merge.shared": 0,
      "merge.left": 4006,
      "merge.right": 4006,
    });
  });

  it("makes a new identity with lineage op merge and parents [this, other]", () => {
    const a = prefix.fork();
    const b = prefix.fork().append(say("b"));
    const merged = a.merge(b);
    expect(merged.id).not.toBe(a.id);
    expect(merged.id).not.toBe(b.id);
    expect(merged.lineage.op).toBe("merge");
    expect(merged.lineage.operator).toBe("Session.merge");
    expect(merged.lineage.parents).toHaveLength(2);
    expect(merged.lineage.parents[0]).toBe(a.lineage);
    expect(merged.lineage.parents[1]).toBe(b.lineage);
    expect(merged.lineage.length).toBe(4002);
  });

  it("records a custom operator and extras next to its own", () => {
    const a = Session.fromUserMessage("a");
    const merged = a.merge(a.fork(), { operator: "Workflow(vote)", extras: { votes: 3 } });
    expect(merged.lineage.operator).toBe("Workflow(vote)");
    expect(merged.lineage.extras).toMatchObject({ votes: 3, strategy: "three-way" });
  });

  it("leaves both inputs unchanged", () => {
    const left = Session.fromUserMessage("q").append(say("l"));
    const right = left.fork().append(say("r"));
    const merged = left.merge(right).append(say("after"));
    expect(texts(left)).toEqual(["q", "l"]);
    expect(texts(right)).toEqual(["q", "l", "r"]);
    expect(texts(merged)).toEqual(["q", "l", "r", "after"]);
  });

  it("rejects an unknown strategy with invalid_argument", () => {
    const a = Session.fromUserMessage("a");
    const error = thrown(() => a.merge(a.fork(), { strategy: "rebase" as never }));
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain('"rebase"');
    expect(error.message).toContain('"three-way" or "concat"');
  });

  it("rejects a non-Session argument with invalid_argument", () => {
    const a = Session.fromUserMessage("a");
    const error = thrown(() => a.merge(a.toJSON() as never));
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain("expects a Session");
    expect(thrown(() => a.merge(undefined as never)).code).toBe("invalid_argument");
  });

  describe("placement", () => {
    const base = Session.fromUserMessage("q");
    const onFake = base.fork().to("fake", { root: "/a" }, { registry });
    const onOther = base.fork().to("fake-other", { root: "/b" }, { registry });

    it("throws MergeConflictError (merge_conflict) naming both backend keys and both ids", () => {
      const error = thrown(() => onFake.merge(onOther));
      expect(error).toBeInstanceOf(MergeConflictError);
      expect(error.code).toBe("merge_conflict");
      expect(error.message).toContain('"fake"');
      expect(error.message).toContain('"fake-other"');
      expect(error.message).toContain(onFake.id);
      expect(error.message).toContain(onOther.id);
      expect(error.details).toEqual({
        left: { id: onFake.id, backend: "fake" },
        right: { id: onOther.id, backend: "fake-other" },
      });
      expect(thrown(() => onOther.merge(onFake, { strategy: "concat" })).code).toBe("merge_conflict");
    });

    it("takes the placed side's placement when the other is unplaced, on either side", () => {
      const unplaced = base.fork();
      expect(where(unplaced.merge(onFake))).toEqual({ key: "fake", spec: { root: "/a" } });
      expect(where(onFake.merge(unplaced))).toEqual({ key: "fake", spec: { root: "/a" } });
      expect(unplaced.merge(base.fork()).placement).toBeUndefined();
    });

    it("keeps this session's placement when both hold the same sandbox or equal specs", () => {
      const sibling = onFake.fork();
      expect(onFake.merge(sibling).placement?.sharesSandboxWith(onFake.placement!)).toBe(true);
      const equal = base.fork().to("fake", { root: "/a" }, { registry });
      const merged = equal.merge(onFake);
      expect(where(merged)).toEqual({ key: "fake", spec: { root: "/a" } });
      expect(merged.placement?.sharesSandboxWith(equal.placement!)).toBe(true);
      expect(merged.placement?.sharesSandboxWith(onFake.placement!)).toBe(false);
    });

    it("throws merge_conflict for the same key with different specs, naming the keys that differ", () => {
      const alsoFake = base.fork().to("fake", { root: "/c" }, { registry });
      for (const [left, right] of [
        [onFake, alsoFake],
        [alsoFake, onFake],
      ] as const) {
        const error = thrown(() => left.merge(right));
        expect(error).toBeInstanceOf(MergeConflictError);
        expect(error.code).toBe("merge_conflict");
        expect(error.message).toContain("different specs (they differ in root)");
        expect(error.message).toContain(left.id);
        expect(error.message).toContain(right.id);
        expect(error.details).toMatchObject({ differingKeys: ["root"] });
      }
      expect(thrown(() => onFake.merge(alsoFake, { strategy: "concat" })).code).toBe("merge_conflict");
    });
  });
});

describe("to", () => {
  const base = Session.fromUserMessage("q").append(say("a"));

  it("places the session on a registered key without changing id, lineage or chunks", () => {
    const placed = base.to("fake", { root: "/work" }, { registry });
    expect(placed).not.toBe(base);
    expect(placed.id).toBe(base.id);
    expect(placed.lineage).toBe(base.lineage);
    expect(placed.chunks).toBe(base.chunks);
    expect(placed.placement).toBeInstanceOf(Placement);
    expect(where(placed)).toEqual({ key: "fake", spec: { root: "/work" } });
    expect(base.placement).toBeUndefined();
  });

  it("re-places an already placed session", () => {
    const moved = base.to("fake", undefined, { registry }).to("fake-other", { root: "/b" }, { registry });
    expect(where(moved)).toEqual({ key: "fake-other", spec: { root: "/b" } });
  });

  it("throws UnknownBackendError (unknown_backend) listing the registered keys", () => {
    const error = thrown(() => toUndeclared(base, "nowhere", undefined, { registry }));
    expect(error).toBeInstanceOf(UnknownBackendError);
    expect(error.code).toBe("unknown_backend");
    expect(error.message).toContain("Registered sandbox backends: fake, fake-other.");
  });

  it("suggests the near key for a typo and names the package and register line of a first-party key", () => {
    const typo = thrown(() => toUndeclared(base, "dokcer", undefined, { registry }));
    expect(typo.message).toContain('Did you mean "docker"?');
    const missing = thrown(() => toUndeclared(base, "docker", undefined, { registry }));
    expect(missing.message).toContain("@openrath/sandbox-docker");
    expect(missing.message).toContain('import "@openrath/sandbox-docker/register";');
  });

  it("passes the spec through the backend's parseSpec and stores what it returns", () => {
    const seen: unknown[] = [];
    const parsing = createRegistry({
      sandboxes: [
        fakeSandbox("fake", {
          parseSpec(spec: unknown) {
            seen.push(spec);
            return { root: "/normalized", from: spec };
          },
        }),
      ],
    });
    const placed = base.to("fake", { root: "./w" }, { registry: parsing });
    expect(seen).toEqual([{ root: "./w" }]);
    expect(where(placed)).toEqual({ key: "fake", spec: { root: "/normalized", from: { root: "./w" } } });
  });

  it("lets the backend's parseSpec error propagate unchanged", () => {
    const invalid = new OpenRathError("invalid_spec", 'Sandbox spec field "root" must be absolute.');
    const strict = createRegistry({
      sandboxes: [
        fakeSandbox("fake", {
          parseSpec() {
            throw invalid;
          },
        }),
      ],
    });
    expect(() => base.to("fake", { root: "rel" }, { registry: strict })).toThrow(invalid);
  });

  it("resolves against the default registry when no registry is given", () => {
    const KEY = Symbol.for("openrath.registry.v1");
    const holder = globalThis as { [KEY]?: Registry };
    const saved = holder[KEY];
    try {
      holder[KEY] = createRegistry({ sandboxes: [fakeSandbox("fake")] });
      expect(defaultRegistry()).toBe(holder[KEY]);
      expect(where(base.to("fake"))).toEqual({ key: "fake", spec: undefined });
      expect(thrown(() => base.to("fake-other")).code).toBe("unknown_backend");
    } finally {
      if (saved === undefined) delete holder[KEY];
      else holder[KEY] = saved;
    }
  });
});

describe("toJSON", () => {
  it("gives the format, version, id, chunks and lineage with the session's own node first", () => {
    const root = Session.fromUserMessage("q");
    const s = root.fork({ extras: { k: "v" } }).append(say("a"));
    const json = s.toJSON();
    expect(json.format).toBe("openrath.session");
    expect(json.version).toBe(1);
    expect(json.id).toBe(s.id);
    expect(json.chunks).toEqual(s.chunks);
    expect("placement" in json).toBe(false);
    expect(json.lineage).toEqual([
      {
        id: s.id,
        op: "fork",
        operator: "Session.fork",
        parents: [root.id],
        extras: { k: "v" },
        length: 1,
        createdAt: s.lineage.createdAt,
      },
      {
        id: root.id,
        op: "leaf_user",
        operator: "Session.fromUserMessage",
        parents: [],
        extras: { source: "Session.fromUserMessage" },
        length: 1,
        createdAt: root.lineage.createdAt,
      },
    ]);
  });

  it("lists a lineage node reached twice only once", () => {
    const root = Session.fromUserMessage("q");
    const merged = root.fork().merge(root.fork());
    const lineageIds = merged.toJSON().lineage.map((n) => n.id);
    expect(lineageIds).toHaveLength(4);
    expect(new Set(lineageIds).size).toBe(4);
    expect(lineageIds.filter((id) => id === root.id)).toHaveLength(1);
  });

  it("includes the placement when placed", () => {
    const placed = Session.fromUserMessage("q").to("fake", { root: "/w" }, { registry });
    expect(placed.toJSON().placement).toEqual({ key: "fake", spec: { root: "/w" } });
  });

  it("is what JSON.stringify writes", () => {
    const s = Session.fromUserMessage("q");
    expect(JSON.parse(JSON.stringify(s))).toEqual(JSON.parse(JSON.stringify(s.toJSON())));
  });
});

describe("Session.fromJSON", () => {
  const root = Session.fromUserMessage("Résumé: 東京 🚀", { author: "user" });
  const story = root
    .fork()
    .append(say("a"))
    .merge(
      root.fork().append({ kind: "event", name: "memory.recall", data: { hits: [{ id: "m", score: 0.5 }] } }),
    )
    .to("fake", { root: "/w" }, { registry });

  it("restores a session from its JSON object: same id, chunks, lineage and placement", () => {
    const restored = Session.fromJSON(story.toJSON());
    expect(restored.id).toBe(story.id);
    expect(restored.chunks).toEqual(story.chunks);
    expect(restored.placement).toBeInstanceOf(Placement);
    expect(where(restored)).toEqual({ key: "fake", spec: { root: "/w" } });
    expect(restored.lineage.op).toBe("merge");
    expect(restored.lineage.parents.map((p) => p.id)).toEqual(story.lineage.parents.map((p) => p.id));
    expect(restored.toJSON()).toEqual(story.toJSON());
  });

  it("restores from JSON text", () => {
    const restored = Session.fromJSON(JSON.stringify(story));
    expect(restored.toJSON()).toEqual(story.toJSON());
    expect(restored.text()).toBe("a");
  });

  it("shares one restored node between parents that point at the same ancestor", () => {
    const restored = Session.fromJSON(JSON.stringify(story));
    const [left, right] = restored.lineage.parents;
    expect(left!.parents[0]).toBe(right!.parents[0]);
    expect(left!.parents[0]!.id).toBe(root.id);
  });

  it("freezes restored chunks and keeps their ids and branches", () => {
    const restored = Session.fromJSON(JSON.stringify(story));
    expect(restored.chunks.every((c) => Object.isFrozen(c))).toBe(true);
    expect(restored.chunks.map((c) => c.sessionId)).toEqual(story.chunks.map((c) => c.sessionId));
  });

  it("restores an unplaced session as unplaced and an empty session as empty", () => {
    const restored = Session.fromJSON(JSON.stringify(Session.empty()));
    expect(restored.placement).toBeUndefined();
    expect(restored.length).toBe(0);
  });

  it("restores a session that keeps working: append, fork and merge", () => {
    const restored = Session.fromJSON(JSON.stringify(story));
    const next = restored.append(say("more"));
    expect(next.id).toBe(story.id);
    expect(next.merge(restored.fork().append(say("other"))).length).toBe(story.length + 2);
  });

  describe("rejects invalid input with invalid_session_json", () => {
    const valid = (): Record<string, unknown> => JSON.parse(JSON.stringify(story));
    const reject = (input: unknown, fragment: string) => {
      const error = thrown(() => Session.fromJSON(input as SessionJSON));
      expect(error.code).toBe("invalid_session_json");
      expect(error.message).toContain(fragment);
      return error;
    };

    it("text that is not JSON, keeping the parse error as cause", () => {
      const error = reject("{not json", "does not parse");
      expect(error.cause).toBeInstanceOf(SyntaxError);
    });

    it("a value that is not an object", () => {
      reject("42", "expected an object");
      reject(null, "expected an object");
    });

    it("a bad format", () => {
      reject({ ...valid(), format: "openrath.log" }, '"format" must be "openrath.session"');
      const { format: _, ...noFormat } = valid();
      reject(noFormat, '"format"');
    });

    it("an unsupported version", () => {
      reject({ ...valid(), version: 2 }, 'unsupported "version" 2');
      reject({ ...valid(), version: "1" }, 'unsupported "version" "1"');
    });

    it("a missing id", () => {
      reject({ ...valid(), id: "" }, '"id" must be a non-empty string');
      reject({ ...valid(), id: 7 }, '"id"');
    });

    it("chunks or lineage that are not arrays", () => {
      reject({ ...valid(), chunks: {} }, '"chunks" must be an array');
      reject({ ...valid(), lineage: null }, '"lineage" must be an array');
    });

    it("no lineage node for the session id", () => {
      const json = valid();
      json.lineage = (json.lineage as { id: string }[]).filter((n) => n.id !== story.id);
      reject(json, `no lineage node for the session id ${story.id}`);
    });

    it("a lineage node that references a parent not in the list", () => {
      const json = valid();
      json.lineage = (json.lineage as { id: string }[]).filter((n) => n.id !== root.id);
      reject(json, `references parent ${root.id}, which is not in the lineage list`);
    });

    it("a lineage cycle", () => {
      const json = valid();
      const nodes = json.lineage as { id: string; parents: string[] }[];
      // Make the root a child of the merge: merge -> fork -> root -> merge.
      nodes.find((n) => n.id === root.id)!.parents = [story.id];
      reject(json, "has a cycle through");
    });

    it("a lineage node that is its own parent", () => {
      const json = valid();
      const nodes = json.lineage as { id: string; parents: string[] }[];
      nodes.find((n) => n.id === root.id)!.parents = [root.id];
      reject(json, `has a cycle through ${root.id}`);
    });

    it("a malformed lineage node", () => {
      const json = valid();
      (json.lineage as Record<string, unknown>[])[1]!.parents = "root";
      reject(json, "node is missing id, op, operator, parents, length or createdAt");
      const extras = valid();
      (extras.lineage as Record<string, unknown>[])[0]!.extras = [["k", "v"]];
      reject(extras, "node is missing");
    });

    it("a chunk without an id, sessionId or createdAt", () => {
      for (const field of ["id", "sessionId", "createdAt"]) {
        const json = valid();
        delete (json.chunks as Record<string, unknown>[])[1]![field];
        reject(json, 'chunk 1 lacks "id", "sessionId" or "createdAt"');
      }
      const json = valid();
      (json.chunks as unknown[])[0] = null;
      reject(json, "chunk 0 lacks");
    });

    it("a chunk that fails chunk validation, keeping the chunk error as cause", () => {
      const json = valid();
      (json.chunks as Record<string, unknown>[])[1]!.kind = "thought";
      const error = reject(json, "chunk 1: Unknown chunk kind");
      expect(OpenRathError.isInstance(error.cause, "invalid_chunk")).toBe(true);
      expect(error.details.index).toBe(1);
    });

    it("a placement without a string key", () => {
      reject({ ...valid(), placement: { spec: {} } }, '"placement.key" must be a string');
      reject({ ...valid(), placement: null }, '"placement.key"');
    });
  });
});
