import type { MemoryInput, MemoryScope } from "@openrath/core";
import { expect } from "vitest";
import { ids, showHits } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import { expectMemoryError } from "./internal/expect-memory-error.js";
import type { MemorySuiteContext } from "./suite-context.js";

const scope = { tenant: "acme" };

/**
 * A failed write changes nothing: a `remember` list with one bad entry stores none of them, a
 * `forget` with one bad id removes nothing, and the ids of a refused call work normally afterwards.
 */
export function failedWritesSuite(context: MemorySuiteContext): void {
  defineGroup(context, "failed writes", (group) => {
    group.test("a remember list with one bad entry stores none of them", async () => {
      const memory = await group.open();
      const good = (i: number): MemoryInput => ({
        id: `atomic-${i}`,
        text: `atomic write number ${i} walrus`,
        scope,
      });
      const cases: [string, unknown][] = [
        ["blank text", { id: "atomic-bad", text: "  ", scope }],
        ["text not a string", { id: "atomic-bad", text: 7, scope }],
        ["bad id", { id: "", text: "walrus", scope }],
        ["metadata not JSON", { text: "walrus", metadata: { at: new Date() }, scope }],
        ["bad scope", { text: "walrus", scope: { tenant: "a/b" } as MemoryScope }],
      ];
      for (const [what, bad] of cases) {
        const code = what === "bad scope" ? "invalid_scope" : "invalid_argument";
        await expectMemoryError(
          () => memory.remember([good(1), bad as MemoryInput, good(2)]),
          code,
          `remember with ${what}`,
        );
        const hits = await memory.recall("atomic walrus", { scope, topK: 10 });
        expect(hits, `after the refused remember (${what}) the store holds ${showHits(hits)}`).toEqual([]);
      }
      // The ids of the refused calls work normally afterwards.
      await memory.remember([good(1), good(2)]);
      expect(ids(await memory.recall("atomic walrus", { scope, topK: 10 })).sort()).toEqual([
        "atomic-1",
        "atomic-2",
      ]);
      expect(await memory.forget({ ids: ["atomic-1", "atomic-2"], scope })).toBe(2);
      await memory.remember(good(1));
      expect(ids(await memory.recall("atomic walrus", { scope, topK: 10 }))).toEqual(["atomic-1"]);
    });

    group.test("a forget with one bad id removes nothing", async () => {
      const memory = await group.open();
      const stored = await memory.remember([
        { text: "Keep me: the gym opens at six.", scope },
        { text: "Keep me too: the gym closes at ten.", scope },
      ]);
      await expectMemoryError(
        () => memory.forget({ ids: [stored[0]!.id, 42 as unknown as string, stored[1]!.id], scope }),
        "invalid_argument",
        "forget with a number among the ids",
      );
      const hits = await memory.recall("gym", { scope, topK: 10 });
      expect(ids(hits).sort(), `hits: ${showHits(hits)}`).toEqual(stored.map((e) => e.id).sort());
    });
  });
}
