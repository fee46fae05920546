import { Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { applyChunkOps, CHAIN_GROWTH_LIMIT, encodeCheckpoint, MAX_CHAIN_DEPTH } from "./delta-codec.js";

describe("the checkpoint codec", () => {
  it("encodes appends as a range plus new ids, merges of forks as ranges, and decodes back", () => {
    let s = Session.fromUserMessage("q");
    for (let i = 0; i < 5; i++) s = s.append({ kind: "assistant", content: `a${i}` });
    const first = encodeCheckpoint(s, null, { sequence: 0, stepId: null, nextStep: "x" });
    expect(first.write.chunkOps).toEqual(s.chunks.map((c) => c.id));
    const base = first.next(1);
    const left = s.fork().append({ kind: "assistant", content: "left" });
    const right = s.fork().append({ kind: "assistant", content: "right" });
    const merged = left.merge(right);
    const second = encodeCheckpoint(merged, base, { sequence: 1, stepId: "m", nextStep: null });
    expect(second.write.chunkOps).toEqual([[0, 6], merged.chunks[6]!.id, merged.chunks[7]!.id]);
    expect(second.write.newChunks.length).toBe(2);
    expect(second.write.lineage.map((n) => n.op).sort()).toEqual(["fork", "fork", "merge"]);
    expect(applyChunkOps(base.chunkIds, second.write.chunkOps, "t")).toEqual(merged.chunks.map((c) => c.id));
  });

  it("over a store that does not count what chains hold, cuts long chains with a full list", () => {
    const s = Session.fromUserMessage("q");
    const deep = { id: 9, depth: MAX_CHAIN_DEPTH, chunkIds: s.chunks.map((c) => c.id), lineage: new Map() };
    const { write, next } = encodeCheckpoint(s, deep, { sequence: 5, stepId: "a", nextStep: null });
    expect(write.baseId).toBeNull();
    expect(write.chunkOps).toEqual([s.chunks[0]!.id]);
    expect(next(10).depth).toBe(0);
  });

  it("over a store that counts what chains hold: an appending session never cuts, one that dropped most of its chain does", () => {
    let s = Session.fromUserMessage("q");
    let base = encodeCheckpoint(s, null, { sequence: 0, stepId: null, nextStep: "a" }).next(1);
    expect(base.chainChunks).toBe(1);
    for (let i = 0; i < 300; i++) {
      s = s.append({ kind: "assistant", content: `turn ${i}` });
      const { write, next } = encodeCheckpoint(s, base, { sequence: i + 1, stepId: "a", nextStep: "a" });
      expect(write.baseId).toBe(base.id);
      expect(write.newChunks.length).toBe(1);
      base = next(base.id + 1);
    }
    expect(base.depth).toBe(300);
    expect(base.chainChunks).toBe(301);
    // A compression: a short session whose chain holds 301 chunks it no longer lists starts a new chain.
    const summary = s.derive({
      op: "compress",
      operator: "test",
      chunks: [{ kind: "user", content: "summary" }],
    });
    const cut = encodeCheckpoint(summary, base, { sequence: 301, stepId: "a", nextStep: null });
    expect(cut.write.baseId).toBeNull();
    expect(cut.write.newChunks.map((c) => c.id)).toEqual(summary.chunks.map((c) => c.id));
    expect(cut.next(999)).toMatchObject({ depth: 0, chainChunks: summary.length });
    // Within the limit the delta is kept.
    const small = { ...base, chainChunks: CHAIN_GROWTH_LIMIT * s.length };
    expect(encodeCheckpoint(s, small, { sequence: 1, stepId: "a", nextStep: null }).write.baseId).toBe(
      base.id,
    );
  });

  it("rejects ranges outside the base and malformed ops as corrupt_checkpoint", () => {
    expect(() => applyChunkOps(["a"], [[0, 2]], "cp")).toThrowError(
      expect.objectContaining({ code: "corrupt_checkpoint" }),
    );
    expect(() => applyChunkOps(["a"], [{ x: 1 }], "cp")).toThrowError(/chunk op/);
    expect(() => applyChunkOps(["a"], "nope", "cp")).toThrowError(/not an array/);
  });
});
