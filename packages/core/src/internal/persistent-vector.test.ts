import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PersistentVector } from "./persistent-vector.js";

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const pushEach = (v: PersistentVector<number>, items: readonly number[]) => {
  let out = v;
  for (const item of items) out = out.push(item);
  return out;
};
const all = (v: PersistentVector<number>) => [...v.values()];

/** Every array reachable from `v`'s own fields: how it is stored, to prove what it shares. */
function arrays(v: PersistentVector<unknown>): Set<unknown[]> {
  const found = new Set<unknown[]>();
  const stack: unknown[] = Object.values(v);
  while (stack.length > 0) {
    const x = stack.pop();
    if (!Array.isArray(x) || found.has(x)) continue;
    found.add(x);
    for (const y of x) if (Array.isArray(y)) stack.push(y);
  }
  return found;
}

// Sizes around each boundary: a full tail (32), a full one-level trie (32 + 32·32), two levels.
const SIZES = [0, 1, 31, 32, 33, 64, 65, 1055, 1056, 1057, 1088, 1089, 32_800, 32_801, 33_824, 33_825];

describe("PersistentVector", () => {
  it("holds what was pushed, one at a time or in bulk, across every trie boundary", () => {
    for (const n of SIZES) {
      const items = range(0, n);
      for (const v of [pushEach(PersistentVector.EMPTY, items), PersistentVector.from(items)]) {
        expect(v.length).toBe(n);
        expect(all(v)).toEqual(items);
        expect(v.slice()).toEqual(items);
        for (const i of [0, 1, 31, 32, 33, 1055, 1056, n - 33, n - 32, n - 1]) {
          if (i >= 0 && i < n) expect(v.at(i)).toBe(i);
        }
        expect(v.at(n)).toBeUndefined();
        expect(v.at(-1)).toBeUndefined();
        expect(v.tailOffset % 32).toBe(0);
        expect(v.length - v.tailOffset).toBe(n === 0 ? 0 : ((n - 1) % 32) + 1);
      }
    }
  });

  it("never changes a version when another is made from it, in any order", () => {
    const base = PersistentVector.from(range(0, 1000));
    const a = base.push(-1);
    const b = base.pushAll([-2, -3]);
    const c = a.push(-4);
    const d = base.push(-5);
    expect(all(base)).toEqual(range(0, 1000));
    expect(all(a)).toEqual([...range(0, 1000), -1]);
    expect(all(b)).toEqual([...range(0, 1000), -2, -3]);
    expect(all(c)).toEqual([...range(0, 1000), -1, -4]);
    expect(all(d)).toEqual([...range(0, 1000), -5]);
  });

  it("copies the arrays it is given", () => {
    const source = [1, 2, 3];
    const v = PersistentVector.from(source);
    const more = [4, 5];
    const w = v.pushAll(more);
    source[0] = 99;
    more[0] = 99;
    expect(all(w)).toEqual([1, 2, 3, 4, 5]);
    expect(v.pushAll([])).toBe(v);
  });

  it("shares every full leaf with the version it was made from and adds O(log n) arrays", () => {
    const base = PersistentVector.from(range(0, 40_010));
    const before = arrays(base);
    // A sibling extends base first, so the next push is "appending to an extended version".
    base.pushAll(range(0, 500));
    const next = base.push(-1);
    const added = [...arrays(next)].filter((a) => !before.has(a));
    // The new tail only (no leaf filled here); at a leaf boundary, one path of the trie.
    expect(added.length).toBeLessThanOrEqual(1);
    const boundary = PersistentVector.from(range(0, 32 * 1000));
    const crossing = boundary.push(-1);
    const fresh = [...arrays(crossing)].filter((a) => !arrays(boundary).has(a));
    expect(fresh.length).toBeLessThanOrEqual(5);
    expect(Math.max(...fresh.map((a) => a.length))).toBeLessThanOrEqual(32);
  });

  it("keeps nothing a later version pushed reachable from an earlier one", () => {
    const base = PersistentVector.from(range(0, 100));
    const marker = { pushedByTheFork: true };
    let fork = base as PersistentVector<unknown>;
    for (let i = 0; i < 500; i++) fork = fork.push(i === 0 ? marker : i);
    for (const a of arrays(base)) expect(a).not.toContain(marker);
    expect(fork.at(100)).toBe(marker);
  });

  it("iterates from any start, and forEach covers exactly the range asked for", () => {
    const v = PersistentVector.from(range(0, 2000));
    for (const start of [0, 1, 31, 32, 33, 1024, 1056, 1999, 2000, 2500]) {
      expect([...v.values(start)]).toEqual(range(Math.min(start, 2000), 2000));
      const seen: number[] = [];
      v.forEach(start, start + 40, (x, i) => {
        expect(x).toBe(i);
        seen.push(x);
      });
      expect(seen).toEqual(range(Math.min(start, 2000), Math.min(start + 40, 2000)));
    }
    expect([...PersistentVector.EMPTY.values()]).toEqual([]);
  });

  describe("sharedPrefix", () => {
    const counting = () => {
      const calls = { n: 0 };
      const same = (x: number, y: number) => {
        calls.n++;
        return x === y;
      };
      return { calls, same };
    };
    const boxes = (n: number) => range(0, n).map((i) => ({ i }));

    it("skips the trie the two share without comparing items", () => {
      const base = PersistentVector.from(boxes(40_000));
      const left = base.pushAll(boxes(3));
      const right = base.pushAll(boxes(5));
      const { calls, same } = counting();
      expect(PersistentVector.sharedPrefix(left, right, same as never)).toBe(40_000);
      expect(PersistentVector.sharedPrefix(right, left, same as never)).toBe(40_000);
      // The first differing pair only, once per direction.
      expect(calls.n).toBe(2);
    });

    it("gives the shorter length when one is a version of the other, whatever the heights", () => {
      const base = PersistentVector.from(boxes(1000));
      const taller = base.pushAll(boxes(40_000));
      const { calls, same } = counting();
      expect(PersistentVector.sharedPrefix(base, taller, same as never)).toBe(1000);
      expect(PersistentVector.sharedPrefix(taller, base, same as never)).toBe(1000);
      expect(PersistentVector.sharedPrefix(taller, taller)).toBe(41_000);
      expect(calls.n).toBe(0);
    });

    it("compares item by item with the given test where nothing is shared", () => {
      const a = PersistentVector.from(range(0, 100));
      const b = PersistentVector.from([...range(0, 70), -1]);
      expect(PersistentVector.sharedPrefix(a, b)).toBe(70);
      const ids = (n: number) => range(0, n).map((i) => ({ id: `c${i}` }));
      const x = PersistentVector.from(ids(50));
      const y = PersistentVector.from(ids(60));
      expect(PersistentVector.sharedPrefix(x, y)).toBe(0);
      expect(PersistentVector.sharedPrefix(x, y, (p, q) => p.id === q.id)).toBe(50);
      expect(PersistentVector.sharedPrefix(PersistentVector.EMPTY, y)).toBe(0);
    });

    it("equals the longest common prefix for random histories", () => {
      fc.assert(
        fc.property(
          fc.array(fc.record({ from: fc.nat(), count: fc.nat(70), mark: fc.integer() }), { maxLength: 25 }),
          fc.nat(),
          fc.nat(),
          (steps, i, j) => {
            const pool: { v: PersistentVector<number>; items: number[] }[] = [
              { v: PersistentVector.EMPTY, items: [] },
            ];
            for (const step of steps) {
              const from = pool[step.from % pool.length]!;
              const add = range(0, step.count).map((k) => step.mark * 100 + k);
              const v = step.count % 2 === 0 ? from.v.pushAll(add) : pushEach(from.v, add);
              pool.push({ v, items: [...from.items, ...add] });
            }
            const a = pool[i % pool.length]!;
            const b = pool[j % pool.length]!;
            let lcp = 0;
            while (lcp < a.items.length && lcp < b.items.length && a.items[lcp] === b.items[lcp]) lcp++;
            expect(all(a.v)).toEqual(a.items);
            expect(PersistentVector.sharedPrefix(a.v, b.v)).toBe(lcp);
          },
        ),
      );
    });
  });
});
