import { expect } from "vitest";
import { ids, showHits } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

const TWO_HANDLES = "two handles writing concurrently both see every entry";

/**
 * Concurrent writers: parallel `remember` calls on one handle all land, and (when
 * `capabilities.sharedWriters` is claimed) two handles on one store writing at once both see every
 * entry afterwards.
 */
export function concurrencySuite(context: MemorySuiteContext): void {
  defineGroup(context, "concurrent writers", (group) => {
    group.test("10 concurrent remember calls on one handle all land", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme", user: "ann" };
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => memory.remember({ text: `parallel write number ${i}`, scope })),
      );
      const written = results.map((stored) => stored[0]!.id);
      expect(new Set(written).size, "two writes got one id").toBe(10);
      const hits = await memory.recall("parallel write", { scope, topK: 50 });
      expect(ids(hits).sort(), `hits: ${showHits(hits)}`).toEqual([...written].sort());
    });

    group.test("concurrent remember and forget calls on one handle leave a consistent store", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      const doomed = await memory.remember(
        Array.from({ length: 5 }, (_, i) => ({ text: `doomed entry ${i}`, scope })),
      );
      const [removed, added] = await Promise.all([
        memory.forget({ ids: doomed.map((entry) => entry.id), scope }),
        Promise.all(
          Array.from({ length: 5 }, (_, i) => memory.remember({ text: `fresh entry ${i}`, scope })),
        ),
      ]);
      expect(removed).toBe(5);
      const gone = await memory.recall("doomed", { scope, topK: 50 });
      const stale = gone.filter((hit) => hit.entry.text.startsWith("doomed"));
      expect(stale, `forgotten entries are still recalled: ${showHits(stale)}`).toEqual([]);
      const fresh = await memory.recall("fresh", { scope, topK: 50 });
      expect(ids(fresh).sort(), `hits: ${showHits(fresh)}`).toEqual(
        added.map((stored) => stored[0]!.id).sort(),
      );
    });

    if (!context.capabilities.sharedWriters) {
      group.skip(TWO_HANDLES, "capabilities.sharedWriters is false");
      return;
    }

    group.test(TWO_HANDLES, async () => {
      const a = await group.open();
      const b = await group.reopen("sharedWriters");
      const scope = { tenant: "acme", user: "ann" };
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => [
          a.remember({ text: `shared write from a number ${i}`, scope }),
          b.remember({ text: `shared write from b number ${i}`, scope }),
        ]).flat(),
      );
      const written = results.map((stored) => stored[0]!.id).sort();
      expect(new Set(written).size).toBe(20);
      for (const [name, handle] of [
        ["a", a],
        ["b", b],
      ] as const) {
        const hits = await handle.recall("shared write", { scope, topK: 50 });
        expect(ids(hits).sort(), `handle ${name} sees ${hits.length} of 20: ${showHits(hits)}`).toEqual(
          written,
        );
      }
    });
  });
}
