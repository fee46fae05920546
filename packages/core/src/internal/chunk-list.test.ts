import { describe, expect, it } from "vitest";
import { ChunkList } from "./chunk-list.js";

/** The private structure of a list, read only to prove how it shares storage. */
interface Internals<T> {
  readonly prev: ChunkList<T> | undefined;
  readonly buf: T[];
  readonly end: number;
  readonly depth: number;
}
const inside = <T>(list: ChunkList<T>) => list as unknown as Internals<T>;

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("ChunkList construction", () => {
  it("copies the array it is built from, so later changes to that array do not leak in", () => {
    const source = [1, 2, 3];
    const list = ChunkList.from(source);
    source.push(4);
    source[0] = 99;
    expect(list.length).toBe(3);
    expect(list.toArray()).toEqual([1, 2, 3]);
  });

  it("builds the shared empty list from an empty array and never mutates it on concat", () => {
    const empty = ChunkList.from<number>([]);
    expect(empty).toBe(ChunkList.EMPTY);
    const a = empty.concat([1]);
    const b = empty.concat([2]);
    expect(ChunkList.EMPTY.length).toBe(0);
    expect(ChunkList.EMPTY.toArray()).toEqual([]);
    expect(a.toArray()).toEqual([1]);
    expect(b.toArray()).toEqual([2]);
  });

  it("returns the same list when nothing is appended", () => {
    const list = ChunkList.from([1]);
    expect(list.concat([])).toBe(list);
    expect(list.push()).toBe(list);
  });
});

describe("ChunkList append", () => {
  it("pushes in place into the buffer when the list ends where its buffer ends", () => {
    const a = ChunkList.from([1, 2]);
    const b = a.push(3, 4);
    expect(inside(b).buf).toBe(inside(a).buf);
    expect(inside(b).prev).toBeUndefined();
    expect(a.length).toBe(2);
    expect(a.toArray()).toEqual([1, 2]);
    expect(b.toArray()).toEqual([1, 2, 3, 4]);
  });

  it("starts a new segment after the list when a sibling already grew the shared buffer", () => {
    const a = ChunkList.from([1, 2]);
    const b = a.push(3);
    const c = a.push(4);
    expect(inside(c).buf).not.toBe(inside(a).buf);
    expect(inside(c).prev).toBe(a);
    expect(a.toArray()).toEqual([1, 2]);
    expect(b.toArray()).toEqual([1, 2, 3]);
    expect(c.toArray()).toEqual([1, 2, 4]);
    // The new segment is itself appendable in place.
    const d = c.push(5);
    expect(inside(d).buf).toBe(inside(c).buf);
    expect(d.toArray()).toEqual([1, 2, 4, 5]);
    expect(c.toArray()).toEqual([1, 2, 4]);
  });

  it("copies the appended array, so changing it afterwards does not change the list", () => {
    const items = [3, 4];
    const list = ChunkList.from([1, 2]).push(0).concat(items);
    items[0] = 99;
    expect(list.toArray()).toEqual([1, 2, 0, 3, 4]);
    const sibling = ChunkList.from([1]);
    sibling.push(2);
    const segment = [5];
    const branched = sibling.concat(segment);
    segment.push(6);
    expect(branched.toArray()).toEqual([1, 5]);
  });
});

describe("ChunkList reads", () => {
  it("indexes with at(), negative indexes counting from the end, out of range giving undefined", () => {
    const a = ChunkList.from([10, 11]);
    a.push(0); // grow the buffer so the next list is a separate segment
    const list = a.push(12, 13).push(14);
    expect(list.toArray()).toEqual([10, 11, 12, 13, 14]);
    const b = a.push(20, 21);
    expect([b.at(0), b.at(1), b.at(2), b.at(3)]).toEqual([10, 11, 20, 21]);
    expect(b.at(-1)).toBe(21);
    expect(b.at(-4)).toBe(10);
    expect(b.at(-5)).toBeUndefined();
    expect(b.at(4)).toBeUndefined();
    expect(ChunkList.EMPTY.at(0)).toBeUndefined();
    expect(ChunkList.EMPTY.at(-1)).toBeUndefined();
    // Same answers once the flat array has been built.
    b.toArray();
    expect([b.at(0), b.at(3), b.at(-1), b.at(-4), b.at(4), b.at(-5)]).toEqual([
      10,
      21,
      21,
      10,
      undefined,
      undefined,
    ]);
  });

  it("gives a frozen array from toArray that is the same object on every call", () => {
    const a = ChunkList.from([1, 2]);
    a.push(9);
    const list = a.push(3);
    const first = list.toArray();
    expect(Object.isFrozen(first)).toBe(true);
    expect(list.toArray()).toBe(first);
    expect(first).toEqual([1, 2, 3]);
  });

  it("does not let a sibling's in-place push show through an array taken earlier", () => {
    const a = ChunkList.from([1, 2]);
    const before = a.toArray();
    a.push(3);
    expect(before).toEqual([1, 2]);
    expect(a.toArray()).toBe(before);
    expect(Object.isFrozen(before)).toBe(true);
  });

  it("iterates in order across segments", () => {
    const a = ChunkList.from([1]);
    a.push(0);
    const list = a.push(2).push(3);
    expect([...list]).toEqual([1, 2, 3]);
  });

  it("slices from a start index to the end across segments", () => {
    const a = ChunkList.from([1, 2]);
    a.push(0);
    const list = a.push(3, 4);
    expect(list.slice(1)).toEqual([2, 3, 4]);
    expect(list.slice(4)).toEqual([]);
    expect(list.slice(0)).toEqual([1, 2, 3, 4]);
  });
});

describe("ChunkList.commonPrefix", () => {
  const counting = () => {
    const calls = { n: 0 };
    const same = (x: number, y: number) => {
      calls.n++;
      return x === y;
    };
    return { calls, same };
  };

  it("counts a prefix held in a shared buffer without comparing its items", () => {
    const base = ChunkList.from(range(0, 1000));
    const left = base.push(-1, -2);
    const right = base.push(-3);
    const { calls, same } = counting();
    expect(left.commonPrefix(right, same)).toBe(1000);
    expect(right.commonPrefix(left, same)).toBe(1000);
    // Only the first differing pair is compared, once per direction.
    expect(calls.n).toBe(2);
  });

  it("gives the full length when one list is a version of the other", () => {
    const base = ChunkList.from(range(0, 50));
    const longer = base.push(50, 51);
    const { calls, same } = counting();
    expect(base.commonPrefix(longer, same)).toBe(50);
    expect(longer.commonPrefix(base, same)).toBe(50);
    expect(calls.n).toBe(0);
  });

  it("compares item by item when the lists share no structure", () => {
    const a = ChunkList.from([1, 2, 3, 4]);
    const b = ChunkList.from([1, 2, 3, 9, 4]);
    const { calls, same } = counting();
    expect(a.commonPrefix(b, same)).toBe(3);
    expect(calls.n).toBe(4);
    expect(ChunkList.from([5]).commonPrefix(ChunkList.from([6]), same)).toBe(0);
    expect(ChunkList.from([5]).commonPrefix(ChunkList.EMPTY as ChunkList<number>, same)).toBe(0);
  });

  it("continues by comparison after the shared structure ends", () => {
    const base = ChunkList.from([1, 2]);
    const left = base.push(3, 4);
    const right = base.push(3).push(4, 5); // a separate segment with equal items
    expect(inside(right).buf).not.toBe(inside(left).buf);
    const { same } = counting();
    expect(left.commonPrefix(right, same)).toBe(4);
  });

  it("uses the comparison it is given, such as equality by id", () => {
    const a = ChunkList.from([{ id: "a" }, { id: "b" }]);
    const b = ChunkList.from([{ id: "a" }, { id: "b" }, { id: "c" }]);
    expect(a.commonPrefix(b, (x, y) => x === y)).toBe(0);
    expect(a.commonPrefix(b, (x, y) => x.id === y.id)).toBe(2);
  });
});

describe("ChunkList depth", () => {
  it("flattens chains of more than 32 forks-with-appends and keeps every list's content", () => {
    let list = ChunkList.from([0]);
    const siblings: { list: ChunkList<number>; expected: number[] }[] = [];
    for (let i = 1; i <= 100; i++) {
      // A sibling grows the buffer first, so `list` must start a new segment.
      siblings.push({ list: list.push(-i), expected: [...range(0, i), -i] });
      list = list.push(i);
      expect(inside(list).depth).toBeLessThanOrEqual(32);
    }
    expect(list.toArray()).toEqual(range(0, 101));
    expect(list.length).toBe(101);
    for (let i = 0; i <= 100; i++) expect(list.at(i)).toBe(i);
    for (const { list: sibling, expected } of siblings) expect(sibling.toArray()).toEqual(expected);
  });

  it("keeps commonPrefix right between a flattened list and its unflattened siblings", () => {
    let list = ChunkList.from([0]);
    let sibling = list;
    for (let i = 1; i <= 40; i++) {
      sibling = list.push(-i);
      list = list.push(i);
    }
    expect(list.commonPrefix(sibling, (x, y) => x === y)).toBe(40);
  });
});
