import { expect } from "vitest";
import { DISTRACTORS, fillerText, showHits } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

/**
 * Ranking sanity: an entry with the whole query outranks entries with part of it, a rare term
 * outranks a common one, and a long entry does not outrank a short one for the same matches.
 */
export function rankingSuite(context: MemorySuiteContext): void {
  defineGroup(context, "ranking", (group) => {
    group.test("an entry with the exact phrase outranks entries with part of it", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      await memory.remember(
        [...DISTRACTORS, "Blue paint for the garden fence.", "Whale song recordings in the archive."].map(
          (text) => ({
            text,
            scope,
          }),
        ),
      );
      const [target] = await memory.remember({ text: "Blue whale migration along the coast.", scope });
      const hits = await memory.recall("blue whale", { scope, topK: 10 });
      expect(hits[0]?.entry.id, `hits: ${showHits(hits)}`).toBe(target!.id);
      expect(hits.length, `the partial matches were not found: ${showHits(hits)}`).toBeGreaterThanOrEqual(3);
    });

    group.test("a rare term outranks a common term", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      const topics = ["sales", "hiring", "travel", "security", "payroll", "support", "legal", "design"];
      await memory.remember(topics.map((topic) => ({ text: `Quarterly report draft on ${topic}.`, scope })));
      const [rare] = await memory.remember({ text: "Zeppelin hangar tour on Friday.", scope });
      const hits = await memory.recall("report zeppelin", { scope, topK: 20 });
      expect(hits[0]?.entry.id, `hits: ${showHits(hits)}`).toBe(rare!.id);
      expect(hits.length, `the common term found nothing: ${showHits(hits)}`).toBeGreaterThan(1);
    });

    group.test("a long entry does not outrank a short one with the same matches", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      const long = `${fillerText(150, 7)} glacier hike permits ${fillerText(150, 11)}`;
      const [longEntry] = await memory.remember({ text: long, scope });
      const [shortEntry] = await memory.remember({ text: "Glacier hike permits.", scope });
      await memory.remember(DISTRACTORS.map((text) => ({ text, scope })));
      const hits = await memory.recall("glacier hike permits", { scope, topK: 10 });
      expect(hits[0]?.entry.id, `hits: ${showHits(hits)}`).toBe(shortEntry!.id);
      expect(
        hits.map((hit) => hit.entry.id),
        "the long entry matches every term and must be found too",
      ).toContain(longEntry!.id);
    });
  });
}
