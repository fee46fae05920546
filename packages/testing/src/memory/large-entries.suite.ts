import { expect } from "vitest";
import { DISTRACTORS, fillerText } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

/** Size of the large entry: 200 KB of ASCII text. */
const LARGE_BYTES = 200 * 1024;

/** Characters of the large CJK entry: past the size at which recursive or spread-based tokenizers overflow the stack. */
const CJK_CHARS = 150_000;

/**
 * Large entries: a 200 KB entry comes back byte for byte and is found by a term in its middle; a
 * Chinese entry of 150,000 characters is stored, found, forgotten and stored again.
 */
export function largeEntriesSuite(context: MemorySuiteContext): void {
  defineGroup(context, "large entries", (group) => {
    group.test("a 200 KB entry round-trips intact and is recallable by a term in its middle", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      const half = fillerText(Math.ceil(LARGE_BYTES / 7), 3).slice(0, LARGE_BYTES / 2 - 10);
      const text = `${half} quasarfield ${fillerText(Math.ceil(LARGE_BYTES / 7), 5)}`.slice(0, LARGE_BYTES);
      expect(text.length).toBe(LARGE_BYTES);
      expect(text.indexOf("quasarfield")).toBeGreaterThan(LARGE_BYTES / 2 - 20);

      await memory.remember(DISTRACTORS.map((t) => ({ text: t, scope })));
      const [stored] = await memory.remember({ text, scope });
      expect(stored!.text.length).toBe(LARGE_BYTES);
      expect(stored!.text === text, "the stored text differs from the text remembered").toBe(true);

      const hits = await memory.recall("quasarfield", { scope });
      expect(hits.length, "the term in the middle of the large entry found nothing").toBeGreaterThan(0);
      expect(hits[0]!.entry.id).toBe(stored!.id);
      expect(hits[0]!.entry.text.length).toBe(LARGE_BYTES);
      expect(hits[0]!.entry.text === text, "the recalled text differs from the text remembered").toBe(true);
    });

    group.test(
      "a Chinese entry of 150,000 characters is stored, found, forgotten and stored again",
      async () => {
        const memory = await group.open();
        const scope = { tenant: "acme" };
        const filler = "我们今天讨论了项目的进度和下一步的计划。".repeat(Math.ceil(CJK_CHARS / 20));
        const text = `${filler.slice(0, CJK_CHARS / 2)}量子纠缠${filler.slice(0, CJK_CHARS / 2 - 4)}`;
        expect(text.length).toBe(CJK_CHARS);
        await memory.remember(DISTRACTORS.map((t) => ({ text: t, scope })));
        const [stored] = await memory.remember({ id: "long-chinese", text, scope });
        expect(stored!.text === text, "the stored text differs from the text remembered").toBe(true);
        const hits = await memory.recall("量子纠缠", { scope });
        expect(hits[0]?.entry.id, "the term in the middle of the Chinese entry").toBe("long-chinese");
        expect(await memory.forget({ ids: ["long-chinese"], scope })).toBe(1);
        expect(await memory.recall("量子纠缠", { scope })).toEqual([]);
        const [again] = await memory.remember({ id: "long-chinese", text, scope });
        expect(again!.id).toBe("long-chinese");
        expect((await memory.recall("量子纠缠", { scope }))[0]?.entry.id).toBe("long-chinese");
      },
      Math.max(context.timeoutMs, 60_000),
    );
  });
}
