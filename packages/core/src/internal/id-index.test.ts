import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IdIndex } from "./id-index.js";

const items = (ids: readonly string[]) => ids.map((id) => ({ id }));

describe("IdIndex", () => {
  it("maps each id to the first position it was recorded at", () => {
    const index = IdIndex.EMPTY.withIds(items(["a", "b", "a", "c"]), 10).withIds(items(["b", "d"]), 20);
    expect([index.get("a"), index.get("b"), index.get("c"), index.get("d")]).toEqual([10, 11, 13, 21]);
    expect(index.get("e")).toBeUndefined();
    expect(index.size).toBe(4);
  });

  it("leaves earlier versions unchanged, also when two versions grow from one", () => {
    const base = IdIndex.EMPTY.withIds(items(Array.from({ length: 5000 }, (_, i) => `id-${i}`)), 0);
    const left = base.withIds(items(["left", "id-7"]), 5000);
    const right = base.withIds(items(["right"]), 5000);
    expect(base.get("left")).toBeUndefined();
    expect(base.get("right")).toBeUndefined();
    expect(left.get("left")).toBe(5000);
    expect(left.get("right")).toBeUndefined();
    expect(right.get("right")).toBe(5000);
    expect(left.get("id-7")).toBe(7);
    expect([base.size, left.size, right.size]).toEqual([5000, 5001, 5001]);
    for (let i = 0; i < 5000; i += 97) expect(right.get(`id-${i}`)).toBe(i);
  });

  it("holds ids that arrive in order, in reverse and shuffled, in any batch size", () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `id-${String(i).padStart(6, "0")}`);
    let seed = 0x2545f491;
    const shuffled = keys.slice().sort(() => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed & 1) * 2 - 1;
    });
    for (const order of [keys, keys.slice().reverse(), shuffled]) {
      for (const batch of [1, 32, 20_000]) {
        let index = IdIndex.EMPTY;
        for (let i = 0; i < order.length; i += batch)
          index = index.withIds(items(order.slice(i, i + batch)), i);
        expect(index.size).toBe(order.length);
        for (let i = 0; i < order.length; i += 7) expect(index.get(order[i]!)).toBe(i);
        expect(index.get("id-")).toBeUndefined();
        expect(index.get("id-999999")).toBeUndefined();
        expect(index.get("")).toBeUndefined();
      }
    }
    const odd = IdIndex.EMPTY.withIds(items(["ab", "ba", "", "__proto__", "constructor"]), 0);
    expect(["ab", "ba", "", "__proto__", "constructor"].map((k) => odd.get(k))).toEqual([0, 1, 2, 3, 4]);
  });

  it("agrees with a Map for random batches", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string({ maxLength: 3 }), { maxLength: 40 }), { maxLength: 12 }),
        (batches) => {
          let index = IdIndex.EMPTY;
          const model = new Map<string, number>();
          let position = 0;
          for (const batch of batches) {
            index = index.withIds(items(batch), position);
            batch.forEach((id, i) => {
              if (!model.has(id)) model.set(id, position + i);
            });
            position += batch.length;
          }
          expect(index.size).toBe(model.size);
          for (const [id, at] of model) expect(index.get(id)).toBe(at);
        },
      ),
    );
  });
});
