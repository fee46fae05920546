import { type ChunkInput, type EventChunk, OpenRathError, Session, type SessionJSON } from "@openrath/core";
import { describe, expect, it } from "vitest";

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

/** An array nested `depth` levels deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { down: value };
  return value;
}

describe("event data with __proto__ and constructor keys", () => {
  const raw =
    '{"__proto__":{"admin":true},"constructor":{"prototype":{"polluted":1}},"list":[{"__proto__":[]}]}';

  it("keeps them as plain own keys of a plain object", () => {
    const session = Session.fromUserMessage("q").append({
      kind: "event",
      name: "hostile",
      data: JSON.parse(raw),
    });
    const data = (session.at(1) as EventChunk).data as Record<string, unknown>;
    expect(Object.keys(data)).toEqual(["__proto__", "constructor", "list"]);
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect((data as { admin?: unknown }).admin).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(data, "__proto__")?.value).toEqual(JSON.parse('{"admin":true}'));
    expect(Object.isFrozen(data)).toBe(true);
    expect(JSON.stringify(data)).toBe(raw);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it("round-trips through toJSON, JSON text and fromJSON", () => {
    const session = Session.fromUserMessage("q").append({
      kind: "event",
      name: "hostile",
      data: JSON.parse(raw),
    });
    const text = JSON.stringify(session);
    const back = Session.fromJSON(text);
    expect(JSON.stringify(back)).toBe(text);
    expect(JSON.stringify((back.at(1) as EventChunk).data)).toBe(raw);
  });

  it("keeps a __proto__ key in a chunk's usage as a key", () => {
    const usage = JSON.parse('{"promptTokens":1,"completionTokens":1,"totalTokens":2,"__proto__":{"x":1}}');
    const s = Session.empty().append({ kind: "assistant", content: "a", usage });
    const stored = (s.at(0) as { usage: object }).usage;
    expect(Object.keys(stored)).toEqual(["promptTokens", "completionTokens", "totalTokens", "__proto__"]);
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    expect(JSON.stringify(Session.fromJSON(JSON.stringify(s)).at(0))).toBe(JSON.stringify(s.at(0)));
  });

  it("round-trips in lineage extras too", () => {
    const extras = JSON.parse('{"__proto__":{"x":1},"constructor":2}');
    const fork = Session.fromUserMessage("q").fork({ extras });
    expect(Object.keys(fork.lineage.extras)).toEqual(["__proto__", "constructor"]);
    const back = Session.fromJSON(JSON.stringify(fork));
    expect(JSON.stringify(back.lineage.extras)).toBe(JSON.stringify(extras));
  });
});

describe("absurdly deep data", () => {
  it("in event data is invalid_chunk, not a RangeError, and nothing is appended", () => {
    const base = Session.fromUserMessage("q");
    const error = thrown(() => base.append({ kind: "event", name: "deep", data: nested(100_000) as never }));
    expect(error.code).toBe("invalid_chunk");
    expect(error.message).toContain("nests deeper than 512 levels");
    expect(base.length).toBe(1);
    // 512 levels are fine and serialize.
    const ok = base.append({ kind: "event", name: "deep", data: nested(511) as never });
    expect(Session.fromJSON(JSON.stringify(ok)).length).toBe(2);
  });

  it("in a cyclic value is the same coded error", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const error = thrown(() =>
      Session.empty().append({ kind: "event", name: "loop", data: cyclic as never }),
    );
    expect(error.code).toBe("invalid_chunk");
    expect(error.message).toContain("refers to itself");
  });

  it("in session JSON text is invalid_session_json", () => {
    const json = Session.fromUserMessage("q").toJSON();
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const chunk = `{"id":"c1","kind":"event","name":"deep","createdAt":1,"sessionId":"s","data":${deep}}`;
    const text = JSON.stringify(json).replace(/"chunks":\[/, `"chunks":[${chunk},`);
    const error = thrown(() => Session.fromJSON(text));
    expect(error.code).toBe("invalid_session_json");
    expect(error.message).toContain("chunk 0");
    const extras = JSON.stringify({
      ...json,
      lineage: [{ ...json.lineage[0], extras: { deep: 1 } }],
    }).replace('"deep":1', `"deep":${deep}`);
    expect(thrown(() => Session.fromJSON(extras)).message).toContain("extras nested deeper than 512 levels");
    const placement = JSON.stringify({ ...json, placement: { key: "local", spec: 1 } }).replace(
      '"spec":1',
      `"spec":${deep}`,
    );
    expect(thrown(() => Session.fromJSON(placement)).message).toContain('"placement.spec" nests deeper');
  });
});

describe("Session.fromJSON consistency checks", () => {
  const story = () => Session.fromUserMessage("q").append(say("a"), say("b")).fork().append(say("c"));
  const valid = () => JSON.parse(JSON.stringify(story())) as { chunks: Record<string, unknown>[] };

  it("rejects two different chunks under one id, naming both positions", () => {
    const json = valid();
    json.chunks[3] = { ...json.chunks[3], id: json.chunks[1]!.id as string };
    const error = thrown(() => Session.fromJSON(json as never));
    expect(error.code).toBe("invalid_session_json");
    expect(error.message).toContain(`id ${JSON.stringify(json.chunks[1]!.id)}`);
    expect(error.details).toMatchObject({ index: 3, firstIndex: 1 });
  });

  it("accepts the same chunk twice, as a concat merge writes it, and keeps one object", () => {
    const a = story();
    const doubled = a.merge(a.fork(), { strategy: "concat" });
    const back = Session.fromJSON(JSON.stringify(doubled));
    expect(back.length).toBe(8);
    expect(back.at(4)).toBe(back.at(0));
    expect(back.toJSON()).toEqual(doubled.toJSON());
    expect(back.usage).toEqual(doubled.usage);
  });

  it("rejects a session lineage node that claims more chunks than the JSON holds", () => {
    const json = JSON.parse(JSON.stringify(story().fork())) as { chunks: unknown[] } & SessionJSON;
    expect(Session.fromJSON(json).length).toBe(4);
    json.chunks.pop();
    const error = thrown(() => Session.fromJSON(json));
    expect(error.code).toBe("invalid_session_json");
    expect(error.message).toContain("says it had 4 chunks when it was made");
    expect(error.message).toContain("holds 3");
  });

  it("rejects lineage lengths and times that are not numbers of chunks and milliseconds", () => {
    for (const length of [-1, 1.5, Number.MAX_SAFE_INTEGER + 2]) {
      const json = JSON.parse(JSON.stringify(valid()));
      json.lineage[1].length = length;
      expect(thrown(() => Session.fromJSON(json)).message).toContain("a length is a whole number of chunks");
    }
    const json = valid() as unknown as { lineage: { createdAt: number }[] };
    const text = JSON.stringify(json).replace(
      `"createdAt":${json.lineage[0]!.createdAt}}`,
      '"createdAt":1e400}',
    );
    expect(text).toContain("1e400");
    expect(thrown(() => Session.fromJSON(text)).message).toContain("createdAt that is not a finite number");
  });

  it("rejects a lineage node listed twice", () => {
    const json = valid() as unknown as { lineage: unknown[] };
    json.lineage.push(json.lineage[1]);
    expect(thrown(() => Session.fromJSON(json as never)).message).toContain("appears twice");
  });
});

describe("append of copied chunks", () => {
  it("refuses a different chunk under an id the session already holds", () => {
    const s = Session.fromUserMessage("q").append(say("a"));
    const forged = { ...s.at(1)!, content: "forged" } as ChunkInput;
    const error = thrown(() => s.append(forged));
    expect(error.code).toBe("invalid_chunk");
    expect(error.details).toMatchObject({ index: 2, firstIndex: 1 });
    expect(
      thrown(() => s.append(say("x"), { ...say("y"), id: "dup" }, { ...say("z"), id: "dup" })).code,
    ).toBe("invalid_chunk");
  });

  it("takes the same chunk again without counting its usage twice", () => {
    const s = Session.fromUserMessage("q").append({
      kind: "assistant",
      content: "a",
      usage: { promptTokens: 5, completionTokens: 1, totalTokens: 6 },
    });
    const again = s.append(s.at(1)!);
    expect(again.length).toBe(3);
    expect(again.usage).toEqual(s.usage);
  });
});
