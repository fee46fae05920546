import {
  type Chunk,
  type ChunkInput,
  createRegistry,
  type JsonValue,
  MergeConflictError,
  type SandboxV1,
  Session,
  type Usage,
} from "@openrath/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

declare module "@openrath/core" {
  interface SandboxBackends {
    fake: { readonly root?: string };
  }
}

const registry = createRegistry({
  sandboxes: [
    {
      kind: "sandbox",
      key: "fake",
      specVersion: "v1",
      capabilities: {
        streaming: true,
        stdin: false,
        network: "none",
        isolation: "process",
        snapshots: false,
        languages: [],
      },
      open: async () => ({ close: async () => {} }) as unknown as SandboxV1,
    },
  ],
});

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

/** Any Unicode text, astral planes and lone surrogates included. */
const text = fc.string({ unit: "binary", maxLength: 12 });
const nonEmptyText = fc.string({ unit: "binary", minLength: 1, maxLength: 12 });

const usageArb: fc.Arbitrary<Usage> = fc
  .record({ promptTokens: fc.nat(1_000_000), completionTokens: fc.nat(1_000_000) })
  .map((u) => ({ ...u, totalTokens: u.promptTokens + u.completionTokens }));

/** JSON values that survive stringify/parse exactly (no -0, no `__proto__` keys). */
const jsonArb: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    text,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(
      text.filter((k) => k !== "__proto__"),
      tie("value"),
      { maxKeys: 3 },
    ),
  ),
})).value;

const toolCallArb = fc
  .record({ id: nonEmptyText, name: nonEmptyText, args: text })
  .map(({ id, name, args }) => ({
    id,
    type: "function" as const,
    function: { name, arguments: args },
  }));

const chunkArb: fc.Arbitrary<ChunkInput> = fc.oneof(
  text.map((content): ChunkInput => ({ kind: "user", content })),
  text.map((content): ChunkInput => ({ kind: "system", content })),
  fc
    .record(
      { content: text, usage: usageArb, model: fc.constantFrom("m1", "m2"), author: text },
      { requiredKeys: ["content"] },
    )
    .map((r): ChunkInput => ({ kind: "assistant", ...r })),
  fc
    .record(
      { toolCalls: fc.array(toolCallArb, { minLength: 1, maxLength: 2 }), usage: usageArb },
      { requiredKeys: ["toolCalls"] },
    )
    .map((r): ChunkInput => ({ kind: "assistant", content: null, ...r })),
  fc
    .record({ toolCallId: text, name: text, content: text })
    .map((r): ChunkInput => ({ kind: "tool_result", ...r })),
  fc
    .record({ name: nonEmptyText, data: jsonArb, usage: usageArb }, { requiredKeys: ["name"] })
    .map((r): ChunkInput => ({ kind: "event", ...r })),
);
const chunksArb = (maxLength = 4) => fc.array(chunkArb, { maxLength });

/** One step of building sessions; indexes pick from the pool of sessions made so far. */
type Step =
  | { readonly op: "append"; readonly at: number; readonly chunks: ChunkInput[] }
  | { readonly op: "fork"; readonly at: number }
  | { readonly op: "detach"; readonly at: number }
  | {
      readonly op: "merge";
      readonly at: number;
      readonly other: number;
      readonly strategy: "three-way" | "concat";
    }
  | { readonly op: "to"; readonly at: number; readonly root: string }
  | { readonly op: "restore"; readonly at: number };

const stepArb = (ops: readonly Step["op"][]): fc.Arbitrary<Step> =>
  fc.oneof(
    ...ops.map((op): fc.Arbitrary<Step> => {
      const at = fc.nat();
      switch (op) {
        case "append":
          return fc.record({ op: fc.constant(op), at, chunks: chunksArb() });
        case "merge":
          return fc.record({
            op: fc.constant(op),
            at,
            other: fc.nat(),
            strategy: fc.constantFrom("three-way" as const, "concat" as const),
          });
        case "to":
          return fc.record({ op: fc.constant(op), at, root: text });
        default:
          return fc.record({ op: fc.constant(op), at });
      }
    }),
  );

const ALL_OPS = ["append", "fork", "detach", "merge", "to", "restore"] as const;

/** Runs `steps` from a user and a system session; returns every session made, the last last. */
function build(seed: { user: string; system: string }, steps: readonly Step[]): Session[] {
  const pool = [Session.fromUserMessage(seed.user), Session.fromAgentPrompt(seed.system)];
  for (const step of steps) {
    const s = pool[step.at % pool.length]!;
    switch (step.op) {
      case "append":
        pool.push(s.append(...step.chunks));
        break;
      case "fork":
        pool.push(s.fork());
        break;
      case "detach":
        pool.push(s.detach());
        break;
      case "merge": {
        const other = pool[step.other % pool.length]!;
        // Sessions placed on different sandboxes cannot merge (a merge_conflict, tested below).
        pool.push(conflicts(s, other) ? s.fork() : s.merge(other, { strategy: step.strategy }));
        break;
      }
      case "to":
        pool.push(s.fork().to("fake", { root: step.root }, { registry }));
        break;
      case "restore":
        pool.push(Session.fromJSON(JSON.stringify(s)));
        break;
    }
  }
  return pool;
}

const seedArb = fc.record({ user: text, system: text });

/** Whether merging `a` and `b` is a merge_conflict: placed on different sandboxes with different specs. */
function conflicts(a: Session, b: Session): boolean {
  if (!a.placement || !b.placement || a.placement.sharesSandboxWith(b.placement)) return false;
  return (
    a.placement.key !== b.placement.key ||
    JSON.stringify(a.placement.spec) !== JSON.stringify(b.placement.spec)
  );
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const ids = (s: Session) => s.chunks.map((c) => c.id);
/** A chunk without what append stamps on it. */
const body = (c: Chunk) => {
  const { id: _id, createdAt: _createdAt, sessionId: _sessionId, ...rest } = c;
  return rest;
};

function distinctUsage(chunks: readonly Chunk[]) {
  const seen = new Set<string>();
  const total = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for (const c of chunks) {
    if ((c.kind !== "assistant" && c.kind !== "event") || c.usage === undefined || seen.has(c.id)) continue;
    seen.add(c.id);
    total.promptTokens += c.usage.promptTokens;
    total.completionTokens += c.usage.completionTokens;
    total.totalTokens += c.usage.totalTokens;
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

describe("Session properties", () => {
  it("merging two forks of a base equals the base, then the left suffix, then the right (a sequential append)", () => {
    fc.assert(
      fc.property(
        seedArb,
        fc.array(stepArb(ALL_OPS), { maxLength: 12 }),
        chunksArb(6),
        chunksArb(6),
        fc.boolean(),
        (seed, steps, x, y, rightFirst) => {
          const base = build(seed, steps).at(-1)!;
          const n = base.length;
          // Which fork appends first decides which one grows the shared buffer in place.
          let left: Session;
          let right: Session;
          if (rightFirst) {
            right = base.fork().append(...y);
            left = base.fork().append(...x);
          } else {
            left = base.fork().append(...x);
            right = base.fork().append(...y);
          }
          const merged = left.merge(right);
          expect(ids(merged)).toEqual([...ids(base), ...ids(left).slice(n), ...ids(right).slice(n)]);
          expect(merged.chunks.map(body)).toEqual(
            base
              .append(...x)
              .append(...y)
              .chunks.map(body),
          );
          expect(merged.lineage.extras).toMatchObject({
            "merge.shared": n,
            "merge.left": x.length,
            "merge.right": y.length,
          });
          // The inputs are untouched.
          expect(left.length).toBe(n + x.length);
          expect(right.length).toBe(n + y.length);
          expect(base.length).toBe(n);
        },
      ),
    );
  });

  it("merging forks that were serialized and restored dedups the prefix by chunk id alone", () => {
    fc.assert(
      fc.property(
        seedArb,
        fc.array(stepArb(ALL_OPS), { maxLength: 8 }),
        chunksArb(),
        chunksArb(),
        (seed, steps, x, y) => {
          const base = build(seed, steps).at(-1)!;
          const left = Session.fromJSON(JSON.stringify(base.fork().append(...x)));
          const right = Session.fromJSON(JSON.stringify(base.fork().append(...y)));
          const merged = left.merge(right);
          expect(ids(merged)).toEqual([
            ...ids(base),
            ...ids(left).slice(base.length),
            ...ids(right).slice(base.length),
          ]);
        },
      ),
    );
  });

  it("the usage of any merge is the sum of usage over its distinct chunk ids", () => {
    fc.assert(
      fc.property(
        seedArb,
        fc.array(stepArb(ALL_OPS), { maxLength: 15 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom("three-way" as const, "concat" as const),
        (seed, steps, i, j, strategy) => {
          const pool = build(seed, steps);
          const a = pool[i % pool.length]!;
          const b = pool[j % pool.length]!;
          if (conflicts(a, b)) {
            expect(() => a.merge(b, { strategy })).toThrow(MergeConflictError);
            return;
          }
          const merged = a.merge(b, { strategy });
          expect(merged.usage).toEqual(distinctUsage(merged.chunks));
          // The merge never counts more than both sides, nor less than either.
          expect(merged.usage.totalTokens).toBeLessThanOrEqual(a.usage.totalTokens + b.usage.totalTokens);
          expect(merged.usage.totalTokens).toBeGreaterThanOrEqual(
            Math.max(a.usage.totalTokens, b.usage.totalTokens),
          );
        },
      ),
    );
  });

  it("every session built by append/fork/merge/detach/to survives toJSON → JSON text → fromJSON → toJSON", () => {
    fc.assert(
      fc.property(seedArb, fc.array(stepArb(ALL_OPS), { maxLength: 15 }), (seed, steps) => {
        for (const s of build(seed, steps)) {
          const first = s.toJSON();
          const restored = Session.fromJSON(JSON.parse(JSON.stringify(first)));
          expect(restored.toJSON()).toEqual(first);
          expect(restored.id).toBe(s.id);
          expect(restored.usage).toEqual(s.usage);
          expect(restored.messages()).toEqual(s.messages());
        }
      }),
    );
  });
});
