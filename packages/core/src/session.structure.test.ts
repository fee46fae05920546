import { type ChunkInput, Session } from "@openrath/core";
import { describe, expect, it } from "vitest";

// What a session keeps alive and what an operation allocates, observed by walking the object
// graph: structural claims of the cost model, checked without timing anything.

/** Every object and array reachable from `root` through own properties and array elements. */
function reachable(root: unknown): Set<object> {
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== "object" || value === null || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else {
      for (const key of Object.getOwnPropertyNames(value)) {
        const descriptor = Object.getOwnPropertyDescriptor(value, key)!;
        if ("value" in descriptor) stack.push(descriptor.value);
      }
    }
  }
  return seen;
}

/** Array slots reachable from `after` that nothing in `before` reaches: what an operation added. */
function newSlots(before: readonly unknown[], after: unknown): number {
  const old = new Set<object>();
  for (const b of before) for (const o of reachable(b)) old.add(o);
  let slots = 0;
  for (const o of reachable(after)) if (Array.isArray(o) && !old.has(o)) slots += o.length;
  return slots;
}

const say = (i: number): ChunkInput => ({
  kind: "assistant",
  content: `turn ${i}`,
  usage: { promptTokens: i, completionTokens: 1, totalTokens: i + 1 },
});
const ask = (i: number): ChunkInput => ({ kind: "user", content: `question ${i}` });

/**
 * What one append may allocate at most in a session of a few thousand chunks: a new tail (32
 * slots), one root-to-leaf path of the vector's trie (3 arrays of 32) and one of the id index
 * (3 nodes of 32 keys and 32 values or children).
 */
const ONE_PATH = 32 + 3 * 32 + 3 * 64;

/** A branchy history: at every step a sibling extends the current version first, then it grows on. */
function branchy(rounds: number, perRound: number): { tip: Session; siblings: Session[] } {
  let tip = Session.fromUserMessage("q");
  const siblings: Session[] = [];
  for (let r = 0; r < rounds; r++) {
    siblings.push(tip.fork().append(say(10_000 + r)));
    siblings.push(tip.append(ask(10_000 + r)));
    for (let i = 0; i < perRound; i++) tip = tip.append(i % 2 ? say(i) : ask(i));
  }
  return { tip, siblings };
}

describe("what a session keeps alive", () => {
  it("a fork that appended first is not held by its parent once dropped", () => {
    const parent = Session.fromUserMessage("q").append(...Array.from({ length: 100 }, (_, i) => say(i)));
    let fork: Session | undefined = parent.fork();
    for (let i = 0; i < 500; i++) fork = fork.append(say(1000 + i));
    const forkChunks = new Set<object>(fork.chunksFrom(parent.length));
    fork = undefined;
    const held = reachable(parent);
    expect([...forkChunks].filter((c) => held.has(c))).toEqual([]);
    // The parent goes on as if nothing happened.
    expect(parent.length).toBe(101);
    expect(parent.append(say(0)).length).toBe(102);
  });

  it("reading messages(), iterating and serializing leave no copy of the transcript behind", () => {
    const session = branchy(4, 500).tip;
    expect(session.messages()).toHaveLength(session.length);
    expect([...session.chunksFrom(0)]).toHaveLength(session.length);
    expect(JSON.parse(JSON.stringify(session)).chunks).toHaveLength(session.length);
    expect(session.text()).toBe("turn 499");
    const longest = Math.max(...[...reachable(session)].map((o) => (Array.isArray(o) ? o.length : 0)));
    expect(longest).toBeLessThanOrEqual(32);
  });
});

describe("what an operation allocates, whatever the branching history", () => {
  it("append to a version a sibling already extended adds O(log n) array slots, never a copy", () => {
    const { tip, siblings } = branchy(40, 100);
    expect(tip.length).toBe(4001);
    let version = tip;
    let worst = 0;
    for (let i = 0; i < 100; i++) {
      // A sibling extends the version first, every time.
      siblings.push(version.append(ask(i)));
      const next = version.append(say(i));
      worst = Math.max(worst, newSlots([version], next));
      version = next;
    }
    expect(worst).toBeLessThanOrEqual(ONE_PATH);
  });

  it("merge after branchy history adds what the other side brings plus O(log n), not the history", () => {
    const { tip } = branchy(40, 100);
    const left = tip.fork().append(say(1), say(2));
    const right = tip.fork().append(say(3), say(4), say(5));
    const merged = left.merge(right);
    expect(merged.length).toBe(tip.length + 5);
    expect(newSlots([left, right], merged)).toBeLessThanOrEqual(ONE_PATH);
    const again = merged.merge(right.append(say(6)));
    expect(again.length).toBe(merged.length + 1);
    expect(newSlots([merged, right], again)).toBeLessThanOrEqual(ONE_PATH);
  });

  it("fork and detach allocate no array", () => {
    const { tip } = branchy(3, 100);
    expect(newSlots([tip], tip.fork())).toBe(0);
    expect(newSlots([tip], tip.detach())).toBe(0);
  });
});

describe("usage is kept up to date, not recomputed", () => {
  it("reading usage after an append looks at the new chunk only", () => {
    const base = Session.fromUserMessage("q").append(...Array.from({ length: 1000 }, (_, i) => ask(i)));
    expect(base.usage.totalTokens).toBe(0);
    // Every user chunk lacks `carriedUsage`, so each look at one reaches this getter.
    let looks = 0;
    Object.defineProperty(Object.prototype, "carriedUsage", {
      configurable: true,
      get() {
        looks++;
        return undefined;
      },
    });
    let usage: unknown;
    try {
      usage = base.append(ask(1000)).usage;
    } finally {
      delete (Object.prototype as Record<string, unknown>).carriedUsage;
    }
    expect(usage).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
    // Once when the input is read, once when its usage is added; never once per chunk held.
    expect(looks).toBeLessThanOrEqual(2);
  });

  it("equals the sum over distinct chunks along any history", () => {
    const { tip, siblings } = branchy(10, 50);
    for (const s of [tip, ...siblings]) {
      const sum = [...s.chunksFrom(0)].reduce(
        (n, c) => n + (c.kind === "assistant" ? (c.usage?.promptTokens ?? 0) : 0),
        0,
      );
      expect(s.usage.promptTokens).toBe(sum);
    }
  });
});

describe("chunksFrom and indexOf, for checkpoints that record a position or a chunk id", () => {
  const session = branchy(5, 300).tip;
  const all = session.chunks;

  it("chunksFrom walks a suffix; negative starts count from the end; past the end is empty", () => {
    for (const k of [0, 1, 31, 32, 1000, all.length - 1, all.length, all.length + 5]) {
      expect([...session.chunksFrom(k)]).toEqual(all.slice(k));
    }
    expect([...session.chunksFrom(-3)]).toEqual(all.slice(-3));
    expect([...session.chunksFrom(-1e9)]).toEqual(all);
    expect([...session.chunksFrom()]).toEqual(all);
    expect([...session.chunksFrom(2.7)]).toEqual(all.slice(2));
    expect([...session.chunksFrom(Number.POSITIVE_INFINITY)]).toEqual([]);
    expect([...session.chunksFrom(Number.NaN)]).toEqual(all);
  });

  it("indexOf finds each chunk by id, and -1 for an unknown id", () => {
    for (const k of [0, 31, 32, 777, all.length - 1]) expect(session.indexOf(all[k]!.id)).toBe(k);
    expect(session.indexOf("no such chunk")).toBe(-1);
    expect(session.indexOf(42 as never)).toBe(-1);
  });
});
