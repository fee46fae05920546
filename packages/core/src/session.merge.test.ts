import { type Chunk, type ChunkInput, Session, type Usage } from "@openrath/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

// The three-way merge against what both sides share (by chunk identity): the examples,
// then properties over random DAGs of fork, append, merge, detach and JSON round trips.

const say = (content: string, tokens = 0): ChunkInput => ({
  kind: "assistant",
  content,
  usage: { promptTokens: tokens, completionTokens: 1, totalTokens: tokens + 1 },
});
const ids = (s: Session) => s.chunks.map((c) => c.id);
const texts = (s: Session) => s.chunks.map((c) => ("content" in c ? c.content : c.name));

/** The reference: this side's ids, then the other side's ids this side lacks, in its order, once. */
function expectedIds(a: Session, b: Session): string[] {
  const out = ids(a);
  const seen = new Set(out);
  for (const id of ids(b)) {
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}

function distinctUsage(chunks: Iterable<Chunk>): Usage {
  const seen = new Set<string>();
  const total = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for (const c of chunks) {
    if (seen.has(c.id)) continue;
    seen.add(c.id);
    const u = c.kind === "assistant" || c.kind === "event" ? c.usage : undefined;
    if (!u) continue;
    total.promptTokens += u.promptTokens;
    total.completionTokens += u.completionTokens;
    total.totalTokens += u.totalTokens;
  }
  return total;
}

/** Whether `sub` appears in `seq` in the same relative order. */
function inOrder(seq: readonly string[], sub: readonly string[]): boolean {
  const at = new Map(seq.map((id, i) => [id, i] as const));
  let last = -1;
  for (const id of sub) {
    const i = at.get(id);
    if (i === undefined || i <= last) return false;
    last = i;
  }
  return true;
}

describe("three-way merge: the issue's cases", () => {
  const base = Session.fromUserMessage("plan").append(say("context", 10));

  it("re-merging a branch that kept going adds only its new chunks", () => {
    const a = base.fork().append(say("a1", 1), say("a2", 2));
    const b = base.fork().append(say("b1", 3));
    const m = a.merge(b);
    const again = m.merge(b.append(say("x", 4)));
    expect(texts(again)).toEqual(["plan", "context", "a1", "a2", "b1", "x"]);
    expect(again.usage.promptTokens).toBe(10 + 1 + 2 + 3 + 4);
    expect(again.lineage.extras).toMatchObject({ "merge.shared": 3, "merge.left": 2, "merge.right": 1 });
    // And after this side also kept going.
    const later = m.append(say("m1", 5)).merge(b.append(say("x2", 6)));
    expect(texts(later)).toEqual(["plan", "context", "a1", "a2", "b1", "m1", "x2"]);
  });

  it("a diamond repeats no chunk", () => {
    const a = base.fork().append(say("a", 1));
    const b = base.fork().append(say("b", 2));
    const diamond = a.merge(b).merge(b.merge(a));
    expect(texts(diamond)).toEqual(["plan", "context", "a", "b"]);
    expect(new Set(ids(diamond)).size).toBe(diamond.length);
    expect(diamond.usage.promptTokens).toBe(13);
    // Unrelated roots too.
    const x = Session.fromUserMessage("x");
    const y = Session.fromUserMessage("y");
    expect(texts(x.merge(y).merge(y.merge(x)))).toEqual(["x", "y"]);
  });

  it("merging with a session that already holds this one gives that session's chunks", () => {
    const a = base.fork().append(say("a"));
    const b = base.fork().append(say("b")).merge(a);
    expect(ids(a.merge(b)).sort()).toEqual(ids(b).sort());
    expect(ids(b.merge(a))).toEqual(ids(b));
  });

  it("concat keeps the original behaviour: everything from both, shared chunks twice", () => {
    const a = base.fork().append(say("a", 1));
    const b = base.fork().append(say("b", 2));
    const both = a.merge(b, { strategy: "concat" });
    expect(texts(both)).toEqual(["plan", "context", "a", "plan", "context", "b"]);
    expect(both.usage.promptTokens).toBe(13);
    expect(both.lineage.extras).toMatchObject({ "merge.shared": 0, "merge.left": 3, "merge.right": 3 });
  });
});

/** One step of a random DAG; indexes pick from the sessions made so far. */
type Step =
  | { op: "append"; at: number; n: number; tokens: number }
  | { op: "fork"; at: number }
  | { op: "detach"; at: number }
  | { op: "merge"; at: number; other: number }
  | { op: "restore"; at: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("append" as const),
      at: fc.nat(),
      n: fc.integer({ min: 1, max: 40 }),
      tokens: fc.nat(50),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("fork" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("detach" as const), at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("merge" as const), at: fc.nat(), other: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("restore" as const), at: fc.nat() }) },
);

/** Runs the steps from two roots, merging three-way only; returns every session made. */
function build(steps: readonly Step[]): Session[] {
  const pool = [Session.fromUserMessage("u"), Session.fromAgentPrompt("s")];
  let serial = 0;
  for (const step of steps) {
    const s = pool[step.at % pool.length]!;
    switch (step.op) {
      case "append":
        pool.push(s.append(...Array.from({ length: step.n }, () => say(`c${serial++}`, step.tokens))));
        break;
      case "fork":
        pool.push(s.fork());
        break;
      case "detach":
        pool.push(s.detach());
        break;
      case "merge":
        pool.push(s.merge(pool[step.other % pool.length]!));
        break;
      case "restore":
        pool.push(Session.fromJSON(JSON.stringify(s)));
        break;
    }
  }
  return pool;
}

const dag = fc.array(stepArb, { maxLength: 30 });

describe("three-way merge over random DAGs", () => {
  it("holds each chunk of both sides exactly once, this side's order entire, then the other side's new chunks in its order", () => {
    fc.assert(
      fc.property(dag, fc.nat(), fc.nat(), (steps, i, j) => {
        const pool = build(steps);
        const a = pool[i % pool.length]!;
        const b = pool[j % pool.length]!;
        const m = a.merge(b);
        const got = ids(m);
        expect(got).toEqual(expectedIds(a, b));
        // Exactly once: no chunk twice, and nothing from either side missing.
        expect(new Set(got).size).toBe(got.length);
        expect(new Set(got)).toEqual(new Set([...ids(a), ...ids(b)]));
        // Each side's relative order: this side's whole transcript is the prefix, and the chunks
        // the other side adds keep its order.
        expect(got.slice(0, a.length)).toEqual(ids(a));
        expect(
          inOrder(
            got,
            ids(b).filter((id) => !ids(a).includes(id)),
          ),
        ).toBe(true);
        // When the other side is chunks it shares with this side (in this side's order) followed
        // by its own, as after a fork, its whole order holds too.
        const inA = new Set(ids(a));
        const shared = ids(b).filter((id) => inA.has(id));
        const own = ids(b).filter((id) => !inA.has(id));
        if (inOrder(ids(a), shared) && ids(b).join() === [...shared, ...own].join()) {
          expect(inOrder(got, ids(b))).toBe(true);
        }
        expect(m.usage).toEqual(distinctUsage([...a.chunks, ...b.chunks]));
        expect(m.usage).toEqual(distinctUsage(m.chunks));
        const extras = m.lineage.extras as Record<string, number>;
        expect(extras["merge.shared"]! + extras["merge.left"]!).toBe(a.length);
        expect(extras["merge.right"]).toBe(m.length - a.length);
        expect(extras["merge.shared"]! + extras["merge.right"]!).toBe(b.length);
      }),
      { numRuns: 150 },
    );
  });

  it("re-merging after either side kept going adds only the new chunks", () => {
    fc.assert(
      fc.property(dag, fc.nat(), fc.nat(), fc.integer({ min: 1, max: 5 }), fc.nat(5), (steps, i, j, x, y) => {
        const pool = build(steps);
        const a = pool[i % pool.length]!;
        const b = pool[j % pool.length]!;
        const m = a.merge(b);
        const b2 = b.append(...Array.from({ length: x }, (_, k) => say(`x${k}`)));
        const m2 = m.append(...Array.from({ length: y }, (_, k) => say(`y${k}`)));
        expect(ids(m2.merge(b2))).toEqual([...ids(m2), ...ids(b2).slice(b.length)]);
        expect(ids(m.merge(b))).toEqual(ids(m));
        expect(m.merge(b).usage).toEqual(m.usage);
      }),
      { numRuns: 100 },
    );
  });

  it("diamonds and crossed merges repeat no chunk and agree on what they hold", () => {
    fc.assert(
      fc.property(dag, fc.nat(), fc.nat(), (steps, i, j) => {
        const pool = build(steps);
        const a = pool[i % pool.length]!;
        const b = pool[j % pool.length]!;
        const ab = a.merge(b);
        const ba = b.merge(a);
        for (const d of [ab.merge(ba), ba.merge(ab), ab.merge(ba).merge(ab.merge(ba))]) {
          expect(new Set(ids(d)).size).toBe(d.length);
          expect(new Set(ids(d))).toEqual(new Set([...ids(a), ...ids(b)]));
          expect(d.usage).toEqual(ab.usage);
        }
      }),
      { numRuns: 100 },
    );
  });

  it("concat is this side's chunks then all of the other's, usage counted over distinct chunks", () => {
    fc.assert(
      fc.property(dag, fc.nat(), fc.nat(), (steps, i, j) => {
        const pool = build(steps);
        const a = pool[i % pool.length]!;
        const b = pool[j % pool.length]!;
        const c = a.merge(b, { strategy: "concat" });
        expect(ids(c)).toEqual([...ids(a), ...ids(b)]);
        expect(c.usage).toEqual(distinctUsage(c.chunks));
        const back = Session.fromJSON(JSON.stringify(c));
        expect(ids(back)).toEqual(ids(c));
        expect(back.usage).toEqual(c.usage);
      }),
      { numRuns: 100 },
    );
  });
});
