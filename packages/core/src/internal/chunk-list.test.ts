import { describe, expect, it } from "vitest";
import { type Chunk, createChunk } from "../chunk.js";
import { OpenRathError } from "../errors.js";
import { ChunkList } from "./chunk-list.js";

const usage = (n: number) => ({ promptTokens: n, completionTokens: 1, totalTokens: n + 1 });
const turn = (i: number, branch = "s"): Chunk =>
  createChunk({ kind: "assistant", content: `t${i}`, usage: usage(i) }, branch);
const turns = (from: number, to: number, branch = "s") =>
  Array.from({ length: to - from }, (_, k) => turn(from + k, branch));
const ids = (list: ChunkList) => [...list.chunksFrom(0)].map((c) => c.id);
const total = (chunks: readonly Chunk[]) =>
  chunks.reduce((sum, c) => sum + (c.kind === "assistant" ? c.usage!.promptTokens : 0), 0);

describe("ChunkList", () => {
  it("reads chunks by position and id across the trie and the tail", () => {
    const chunks = turns(0, 1100);
    const list = ChunkList.from(chunks);
    expect(list.length).toBe(1100);
    for (const i of [0, 31, 32, 1055, 1056, 1099]) {
      expect(list.at(i)).toBe(chunks[i]);
      expect(list.indexOf(chunks[i]!.id)).toBe(i);
    }
    expect(list.at(-1)).toBe(chunks[1099]);
    expect(list.at(1100)).toBeUndefined();
    expect(list.indexOf("nope")).toBe(-1);
    const where = list.positions();
    expect([where(chunks[5]!.id), where(chunks[1090]!.id), where("nope")]).toEqual([5, 1090, -1]);
    expect([...list.chunksFrom(1098)]).toEqual(chunks.slice(1098));
    expect([...list.chunksFrom(5000)]).toEqual([]);
    expect(list.slice(1090)).toEqual(chunks.slice(1090));
  });

  it("keeps usage as a running total: appending adds the new chunks' usage", () => {
    let list = ChunkList.EMPTY;
    const chunks = turns(0, 300);
    for (const c of chunks) list = list.append([c], true);
    expect(list.usage.promptTokens).toBe(total(chunks));
    expect(Object.isFrozen(list.usage)).toBe(true);
    expect(ChunkList.from(chunks).usage).toEqual(list.usage);
  });

  it("counts a chunk appended again (a copy) once, in the trie, in the tail and within one batch", () => {
    const chunks = turns(1, 100);
    const list = ChunkList.from(chunks);
    const again = list.append([chunks[3]!, chunks[98]!, turn(500), chunks[3]!], false);
    expect(again.length).toBe(103);
    expect(again.usage.promptTokens).toBe(total(chunks) + 500);
  });

  it("accepts the same chunk twice but refuses two different chunks under one id", () => {
    const [a, b] = turns(0, 2);
    const repeated = ChunkList.from([a!, b!, { ...a! }]);
    expect(repeated.at(2)).toBe(a);
    expect(repeated.usage.promptTokens).toBe(1);
    try {
      ChunkList.from([a!, b!, { ...b!, content: "forged" } as Chunk]);
      expect.fail("expected invalid_chunk");
    } catch (error) {
      expect(OpenRathError.isInstance(error, "invalid_chunk")).toBe(true);
      expect((error as OpenRathError).details).toMatchObject({ id: b!.id, index: 2, firstIndex: 1 });
    }
  });

  it("builds one frozen array per list, on first request", () => {
    const list = ChunkList.from(turns(0, 40));
    const first = list.toArray();
    expect(Object.isFrozen(first)).toBe(true);
    expect(list.toArray()).toBe(first);
    expect(list.append([turn(99)], true).toArray()).toHaveLength(41);
  });

  describe("mergeThreeWay", () => {
    const base = ChunkList.from(turns(0, 2000));

    it("appends the other side's own chunks after this side's, skipping the shared prefix", () => {
      const left = base.append(turns(2000, 2003, "l"), true);
      const right = base.append(turns(3000, 3005, "r"), true);
      const { list, shared, added } = left.mergeThreeWay(right);
      expect(ids(list)).toEqual([...ids(left), ...ids(right).slice(2000)]);
      expect([shared, added]).toEqual([2000, 5]);
      expect(list.usage.promptTokens).toBe(total([...left.toArray(), ...right.toArray().slice(2000)]));
    });

    it("adds only new chunks when merging a side that already merged this one, or again", () => {
      const left = base.append(turns(2000, 2100, "l"), true);
      const right = base.append(turns(3000, 3004, "r"), true);
      const merged = left.mergeThreeWay(right).list;
      const rightLater = right.append([turn(4000, "r")], true);
      const again = merged.mergeThreeWay(rightLater);
      expect(ids(again.list)).toEqual([...ids(merged), rightLater.at(-1)!.id]);
      expect([again.shared, again.added]).toEqual([2004, 1]);
      expect(merged.mergeThreeWay(right).added).toBe(0);
      expect(merged.mergeThreeWay(right).list).toBe(merged);
      // The other way round: the right side takes the left side's chunks it lacks.
      const back = rightLater.mergeThreeWay(merged);
      expect(ids(back.list)).toEqual([...ids(rightLater), ...ids(left).slice(2000)]);
    });

    it("repeats no chunk in a diamond", () => {
      const a = ChunkList.from(turns(0, 50, "a"));
      const b = ChunkList.from(turns(100, 170, "b"));
      const ab = a.mergeThreeWay(b).list;
      const ba = b.mergeThreeWay(a).list;
      const diamond = ab.mergeThreeWay(ba);
      expect(ids(diamond.list)).toEqual(ids(ab));
      expect([diamond.shared, diamond.added]).toEqual([120, 0]);
      expect(diamond.list.usage).toEqual(ab.usage);
    });

    it("takes a repeated chunk of the other side once (a side built by concat)", () => {
      const x = turns(0, 3, "x");
      const doubled = ChunkList.from([...x, ...x, turn(9)]);
      const { list } = ChunkList.EMPTY.append([x[0]!], true).mergeThreeWay(doubled);
      expect(ids(list)).toEqual([x[0]!.id, x[1]!.id, x[2]!.id, doubled.at(-1)!.id]);
    });
  });
});
