import { Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { contextAfter, contextOf, decodeBody, encodeBody, needsContext, packOps } from "./checkpoint-body.js";

function conversation(turns: number): Session {
  let s = Session.fromUserMessage("hello");
  for (let i = 0; i < turns; i++)
    s = s.append({ kind: "user", content: `question ${i}` }, { kind: "assistant", content: `answer ${i}` });
  return s;
}

describe("checkpoint bodies", () => {
  it("an appending step packs its new chunks and stores their run of ids as a count", () => {
    const s = conversation(3);
    const ids = s.chunks.map((c) => c.id);
    const { ops, packed } = packOps([[0, 5], ids[5]!, ids[6]!], s.chunks.slice(5));
    expect(ops).toEqual([[0, 5], 2]);
    expect(packed.map((c) => c.id)).toEqual(ids.slice(5));
    // A chunk listed twice is packed once; its second place stays its id.
    const twice = packOps([ids[0]!, ids[1]!, ids[0]!], [s.chunks[0]!, s.chunks[1]!, s.chunks[0]!]);
    expect(twice.ops).toEqual([2, ids[0]]);
    expect(twice.packed).toHaveLength(2);
  });

  it("decodes to the same chunk objects, key order included, with and without a base's context", () => {
    const s = conversation(4);
    const chunks = s.chunks.slice(7);
    const base = contextOf(
      s.id,
      "reply",
      s.chunks.slice(0, 7).map((c) => c.id),
      (id) => s.chunks.find((c) => c.id === id),
    )!;
    const content = { sessionId: s.id, ops: [[0, 7], 2] as const, chunks, lineage: [], placement: null };
    const plain = encodeBody({ ...content, ops: [...content.ops] });
    const against = encodeBody({ ...content, ops: [...content.ops] }, base);
    expect(needsContext(plain)).toBe(false);
    expect(needsContext(against)).toBe(true);
    expect(against.length).toBeLessThan(plain.length);
    for (const decoded of [decodeBody(plain), decodeBody(against, base)]) {
      expect(JSON.stringify(decoded.chunks)).toBe(JSON.stringify(chunks));
      expect(decoded.sessionId).toBe(s.id);
      expect(decoded.ops).toEqual([[0, 7], 2]);
    }
    expect(() => decodeBody(against)).toThrow(/compressed against a base/);
    expect(() => decodeBody(Buffer.of(9, 1, 2))).toThrow(/unknown body format/);
  });

  it("the context a writer derives from what it wrote equals the one a reader derives from the resolved list", () => {
    const s = conversation(5);
    const ids = s.chunks.map((c) => c.id);
    const byId = (id: string) => s.chunks.find((c) => c.id === id);
    const base = contextOf(s.id, "next", ids.slice(0, 9), byId)!;
    // Appending two chunks: the tail is the packed chunks.
    const appended = contextAfter(base, {
      sessionId: s.id,
      nextStep: "after",
      ops: [[0, 9], 2],
      chunks: s.chunks.slice(9, 11),
    });
    expect(appended).toEqual(contextOf(s.id, "after", ids.slice(0, 11), byId));
    // One chunk appended: the tail reaches back into the base's.
    const one = contextAfter(base, {
      sessionId: s.id,
      nextStep: null,
      ops: [[0, 9], 1],
      chunks: [s.chunks[9]!],
    });
    expect(one).toEqual(contextOf(s.id, null, ids.slice(0, 10), byId));
    // Nothing appended, the list ends where the base's does.
    expect(contextAfter(base, { sessionId: s.id, nextStep: "x", ops: [[0, 9]], chunks: [] })).toEqual(
      contextOf(s.id, "x", ids.slice(0, 9), byId),
    );
    // A list ending in a chunk named by id is not followed.
    expect(contextAfter(base, { sessionId: s.id, nextStep: "x", ops: [[0, 8], ids[0]!], chunks: [] })).toBe(
      undefined,
    );
  });
});
