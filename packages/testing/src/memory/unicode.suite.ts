import { expect } from "vitest";
import { DISTRACTORS, showHits } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

/** Each text with a query in its own script: for CJK, a word contained in the text. */
const SCRIPTS: readonly { readonly name: string; readonly text: string; readonly query: string }[] = [
  { name: "accented Latin", text: "café crème", query: "café" },
  { name: "Cyrillic", text: "привет мир", query: "привет" },
  { name: "Greek", text: "καλημέρα", query: "καλημέρα" },
  { name: "Japanese", text: "東京タワー", query: "東京" },
  { name: "Chinese", text: "北京大学", query: "北京" },
];

const EMOJI = "Ship it 🚀 then celebrate 🎉 with the 👩‍👩‍👧 crew 👍🏽 ✅ 🇵🇹 ❤️";

/**
 * Unicode: entries in accented Latin, Cyrillic, Greek, Japanese and Chinese are found by a query in
 * their own script, and text with emoji (surrogate pairs, ZWJ sequences, flags, skin tones) comes
 * back intact.
 */
export function unicodeSuite(context: MemorySuiteContext): void {
  defineGroup(context, "unicode", (group) => {
    for (const script of SCRIPTS) {
      group.test(
        `${script.name}: ${JSON.stringify(script.text)} is found by ${JSON.stringify(script.query)}`,
        async () => {
          const memory = await group.open();
          const scope = { tenant: "acme" };
          await memory.remember(
            [...DISTRACTORS, ...SCRIPTS.map((s) => s.text)].map((text) => ({ text, scope })),
          );
          const hits = await memory.recall(script.query, { scope, topK: 10 });
          expect(hits[0]?.entry.text, `hits: ${showHits(hits)}`).toBe(script.text);
        },
      );
    }

    group.test("text with emoji is stored and returned intact", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      const [stored] = await memory.remember({ text: EMOJI, scope, metadata: { mood: "🎉" } });
      expect(stored!.text).toBe(EMOJI);
      const hits = await memory.recall("celebrate", { scope });
      expect(hits[0]?.entry.text, `hits: ${showHits(hits)}`).toBe(EMOJI);
      expect(hits[0]?.entry.metadata).toEqual({ mood: "🎉" });
    });
  });
}
