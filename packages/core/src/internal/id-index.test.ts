import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hashOf, IdIndex } from "./id-index.js";

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

  it("keeps many keys and keys whose whole 32-bit hashes collide apart", () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? `K${i}` : `k${i}`));
    const index = IdIndex.EMPTY.withIds(items(keys), 0);
    for (const [i, k] of keys.entries()) expect(index.get(k)).toBe(i);
    expect(index.get("ab")).toBeUndefined();
    // A birthday search over pseudo-random keys (fixed seed) finds full collisions: about ten
    // among 300,000 keys for a 32-bit hash.
    const byHash = new Map<number, string>();
    const collisions: [string, string][] = [];
    let seed = 0x2545f491;
    const random = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0).toString(36);
    };
    for (let i = 0; i < 300_000 && collisions.length < 3; i++) {
      const key = random() + random();
      const h = hashOf(key);
      const other = byHash.get(h);
      if (other === undefined) byHash.set(h, key);
      else collisions.push([other, key]);
    }
    expect(collisions.length).toBeGreaterThan(0);
    for (const [a, b] of collisions) {
      const both = IdIndex.EMPTY.withIds(items([a, "x", b, a]), 0);
      expect([both.get(a), both.get(b), both.get("x"), both.size]).toEqual([0, 2, 1, 3]);
      const later = both.withIds(items([b, `${b}!`]), 10);
      expect([later.get(b), later.get(`${b}!`), both.get(`${b}!`)]).toEqual([2, 11, undefined]);
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
