import { createRegistry, OpenRathError, Session } from "@openrath/core";
import { afterEach, describe, expect, it } from "vitest";
import { type Bm25Memory, bm25Memory } from "./bm25-memory.js";

const open: Bm25Memory[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((m) => m.close()));
});

async function memory(scope?: object): Promise<Bm25Memory> {
  const m = await bm25Memory().open(scope ? { scope } : undefined);
  open.push(m);
  return m;
}

function code(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return OpenRathError.isInstance(error) ? error.code : `not an OpenRath error: ${String(error)}`;
  }
  return undefined;
}

describe("bm25Memory descriptor", () => {
  it("is a v1 memory backend under the key bm25", () => {
    const backend = bm25Memory();
    expect(backend).toMatchObject({ kind: "memory", key: "bm25", specVersion: "v1" });
    expect(createRegistry({ memories: [backend] }).memory("bm25")).toBe(backend);
  });

  it("rejects bad options with invalid_argument naming the option", () => {
    for (const options of [
      { k1: -1 },
      { b: 2 },
      { d: Number.NaN },
      { search: "vector" },
      { search: "semantic" },
      { embed: "openai" },
      { hybridWeights: { text: 0, vector: 1 } },
      { minSimilarity: 0 },
      { stopWords: "the" },
      { onCorrupt: "ignore" },
      { durability: "sometimes" },
      { embedBatchSize: 0 },
      { colour: "blue" },
    ]) {
      expect(
        code(() => bm25Memory(options as never)),
        JSON.stringify(options),
      ).toBe("invalid_argument");
    }
    expect(() => bm25Memory({ colour: "blue" } as never)).toThrow(
      /"colour" is "blue"; it is not an option of bm25Memory\(\); the fields are embed, embedModel, /,
    );
    expect(() => bm25Memory({ search: "vector" })).toThrow(/"search" is "vector"; .*no "embed" function/);
  });

  it("parseSpec normalizes the scope and rejects bad fields with invalid_spec", () => {
    const backend = bm25Memory();
    expect(backend.parseSpec!(undefined)).toEqual({ scope: { tenant: "default" } });
    expect(backend.parseSpec!({ path: "/m", scope: { agent: "a" } })).toEqual({
      path: "/m",
      scope: { tenant: "default", user: "default", agent: "a" },
    });
    for (const spec of ["./m", { path: "" }, { path: 3 }, { scope: "acme" }, { dir: "/m" }]) {
      expect(
        code(() => backend.parseSpec!(spec)),
        JSON.stringify(spec),
      ).toBe("invalid_spec");
    }
    expect(code(() => backend.parseSpec!({ scope: { tenant: "a/b" } }))).toBe("invalid_scope");
  });

  it("open honours an aborted signal", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(bm25Memory().open(undefined, { signal: controller.signal })).rejects.toMatchObject({
      code: "memory_unavailable",
    });
  });
});

describe("bm25 memory handle", () => {
  it("stores and recalls at the spec's scope by default", async () => {
    const m = await memory({ tenant: "acme", user: "ann" });
    const [entry] = await m.remember({ text: "Ann likes green tea" });
    expect(entry!.scope).toEqual({ tenant: "acme", user: "ann" });
    expect((await m.recall("tea")).map((h) => h.entry.id)).toEqual([entry!.id]);
    expect(await m.recall("tea", { scope: { tenant: "acme" } })).toEqual([]);
  });

  it("commit stores the extracted memories at the default or given scope, skipping existing ids", async () => {
    const m = await memory({ tenant: "acme", user: "ann" });
    const session = Session.fromUserMessage("Remind me to water the ferns.").append({
      kind: "assistant",
      content: "I will remind you about the ferns on Friday.",
    });
    const first = await m.commit(session);
    expect(first.map((e) => [e.text, e.scope, e.source, e.metadata?.role])).toEqual([
      ["Remind me to water the ferns.", { tenant: "acme", user: "ann" }, session.id, "user"],
      [
        "I will remind you about the ferns on Friday.",
        { tenant: "acme", user: "ann" },
        session.id,
        "assistant",
      ],
    ]);
    expect(await m.commit(session)).toEqual([]);
    const elsewhere = await m.commit(session, { scope: { tenant: "acme", user: "ann", agent: "planner" } });
    expect(elsewhere).toHaveLength(2);
    expect(await m.recall("ferns", { topK: 10 })).toHaveLength(2);
  });

  it("rejects bad input with stable codes", async () => {
    const m = await memory();
    const rejects = async (run: () => Promise<unknown>) => {
      try {
        await run();
      } catch (error) {
        return OpenRathError.isInstance(error) ? error.code : "not an OpenRath error";
      }
      return "resolved";
    };
    expect(await rejects(() => m.remember({ text: "   " }))).toBe("invalid_argument");
    expect(await rejects(() => m.remember({ text: "x", id: "" }))).toBe("invalid_argument");
    expect(await rejects(() => m.remember({ text: "x", metadata: [] as never }))).toBe("invalid_argument");
    expect(await rejects(() => m.remember({ text: "x", metadata: { when: new Date() } as never }))).toBe(
      "invalid_argument",
    );
    expect(await rejects(() => m.remember({ text: "x", source: 1 as never }))).toBe("invalid_argument");
    expect(await rejects(() => m.remember("text" as never))).toBe("invalid_argument");
    expect(await rejects(() => m.remember({ text: "x", scope: "acme" as never }))).toBe("invalid_scope");
    expect(await rejects(() => m.recall(7 as never))).toBe("invalid_argument");
    expect(await rejects(() => m.recall("x", { topK: 1.5 }))).toBe("invalid_argument");
    expect(await rejects(() => m.recall("x", { topK: -1 }))).toBe("invalid_argument");
    expect(await rejects(() => m.recall("x", { minScore: "high" as never }))).toBe("invalid_argument");
    expect(await rejects(() => m.forget({} as never))).toBe("invalid_argument");
    expect(await rejects(() => m.forget({ ids: "x" } as never))).toBe("invalid_argument");
    expect(await rejects(() => m.commit({} as never))).toBe("invalid_argument");
    expect(await m.recall("x", { topK: 0 })).toEqual([]);
  });

  it("returned entries are copies: changing them does not change the store", async () => {
    const m = await memory();
    const [entry] = await m.remember({ text: "original text", metadata: { tags: ["a"] } });
    (entry!.metadata!.tags as string[]).push("mutated");
    const [hit] = await m.recall("original");
    expect(hit!.entry.metadata).toEqual({ tags: ["a"] });
    (hit!.entry.metadata!.tags as string[]).push("again");
    expect((await m.recall("original"))[0]!.entry.metadata).toEqual({ tags: ["a"] });
  });

  it("flush is a no-op in memory and close makes every method reject with memory_closed", async () => {
    const m = await memory();
    await m.flush();
    await m.close();
    await expect(m.flush()).rejects.toMatchObject({ code: "memory_closed" });
  });
});
