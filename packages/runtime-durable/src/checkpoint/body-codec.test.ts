import { Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { contextAfter, contextOf, decodeBody, encodeBody, needsContext, packOps } from "./body-codec.js";
import { compactId, expandId } from "./compact-ids.js";

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

  it("compacts UUIDv7 chunk ids whose time is their createdAt, and leaves every other id as it was", () => {
    const s = conversation(2);
    for (const chunk of s.chunks) {
      const stored = compactId(chunk.id, chunk.createdAt);
      expect(stored).toMatch(/^~[A-Za-z0-9_-]{14}$/);
      expect(expandId(stored, chunk.createdAt)).toBe(chunk.id);
    }
    const id = s.chunks[0]!.id;
    const at = s.chunks[0]!.createdAt;
    // Not compacted: another time, upper case, not a v7, not a UUID; a leading ~ is escaped.
    for (const other of [
      [id, at + 1],
      [id, String(at)],
      [id.toUpperCase(), at],
      [`${id.slice(0, 14)}4${id.slice(15)}`, at],
      ["call_1", at],
      ["~x", at],
      ["~~", at],
    ] as const) {
      const stored = compactId(other[0], other[1]);
      expect(stored.startsWith("~") ? stored.slice(1) : stored).toBe(other[0]);
      expect(expandId(stored, other[1])).toBe(other[0]);
    }
    expect(() => expandId("~AAAA", at)).toThrow(/malformed/);
    expect(() => expandId(compactId(id, at), undefined)).toThrow(/no createdAt/);
  });

  it("a body round-trips chunks with ids of every kind, key order included", () => {
    const s = conversation(1);
    const odd = [
      { ...s.chunks[0]!, id: "~tilde" },
      { ...s.chunks[1]!, id: "plain-id" },
      { ...s.chunks[2]!, createdAt: s.chunks[2]!.createdAt + 5 },
    ];
    const chunks = [...s.chunks, ...odd];
    const body = encodeBody({ sessionId: s.id, ops: [chunks.length], chunks, lineage: [], placement: null });
    expect(JSON.stringify(decodeBody(body).chunks)).toBe(JSON.stringify(chunks));
  });

  it("reads bodies written before ids were compacted (formats 1 and 2)", () => {
    const sid = "01a2321a-0000-7000-8000-000000000001";
    const chunks = [
      {
        id: "01a2321a-1111-7000-9abc-def012345678",
        kind: "user",
        createdAt: 0x01a2321a1111,
        sessionId: sid,
        content: "what did we decide?",
      },
      {
        id: "01a2321a-1112-7001-8abc-def012345679",
        kind: "assistant",
        createdAt: 0x01a2321a1112,
        sessionId: sid,
        content: "to migrate",
        author: "bot",
      },
    ];
    const more = {
      id: "01a2321a-1113-7000-a000-00000000000a",
      kind: "user",
      createdAt: 0x01a2321a1113,
      sessionId: sid,
      content: "and next?",
    };
    // Written by the encoder of migration 3's release.
    const format1 = Buffer.from(
      "AaWSwQrCMBBEfyX03MBOUpPNyS/pIW2i9iAFCfTUfy+haqJQENzDHBZmeLPsviR4pRW8JCKSNgtnoTJ4GlXf1ulvJwDsTueHUYZ4ISjdnYzlpj3uCOsMtGHHrPVnox+hSuvl5pMIUxBLFCGOU4jn0r4GVTkNkr9AXQE9OHlN2/1Jm2Zxn64Pn2J+9tfvDHNq1n7dAA==",
      "base64",
    );
    const format2 = Buffer.from("AiMvmnQMY3FGjjFEfyKa/kRiI8eUQu8m5qUo5KVWlNiDvAcA", "base64");
    expect([format1[0], format2[0]]).toEqual([1, 2]);
    expect(JSON.stringify(decodeBody(format1).chunks)).toBe(JSON.stringify(chunks));
    const base = contextOf(
      sid,
      "reply",
      chunks.map((c) => c.id),
      (id) => chunks.find((c) => c.id === id) as never,
    )!;
    const decoded = decodeBody(format2, base);
    expect(JSON.stringify(decoded.chunks)).toBe(JSON.stringify([more]));
    expect(decoded.ops).toEqual([[0, 2], 1]);
    // The same content written now is smaller.
    expect(
      encodeBody(
        { sessionId: sid, ops: [[0, 2], 1], chunks: [more as never], lineage: [], placement: null },
        base,
      ).length,
    ).toBeLessThan(format2.length);
  });
});
