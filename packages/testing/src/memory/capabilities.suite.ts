import { expect } from "vitest";
import { DISTRACTORS, showHits, words } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

const TITLES = {
  persistence: "the persistence claim tells the truth",
  vectorSearch: "the vectorSearch claim tells the truth",
  sharedWriters: "the sharedWriters claim tells the truth",
} as const;

/**
 * Capabilities: the manifest tells the truth. `persistence` means entries survive a close and
 * reopen; `vectorSearch` means a paraphrase sharing no term with an entry finds it (checked with the
 * caller's `paraphrase`, since only a backend configured with an embedder can pass); `sharedWriters`
 * means each of two handles on one store sees the other's writes. A claim not made is not required.
 */
export function capabilitiesSuite(context: MemorySuiteContext): void {
  const capabilities = context.capabilities;
  defineGroup(context, "capabilities", (group) => {
    group.test("the manifest is well-formed", async () => {
      expect(typeof capabilities.vectorSearch).toBe("boolean");
      expect(typeof capabilities.persistence).toBe("boolean");
      expect(typeof capabilities.sharedWriters).toBe("boolean");
    });

    group.test("reopen is given for every claim that needs it", async () => {
      const needs = (["persistence", "sharedWriters"] as const).filter((claim) => capabilities[claim]);
      if (needs.length > 0) {
        expect(
          typeof context.reopen,
          `${needs.join(" and ")} claimed, so describeMemoryConformance needs reopen: () => Promise<MemoryV1> opening the store the latest create() made`,
        ).toBe("function");
      }
    });

    if (capabilities.persistence) {
      group.test(TITLES.persistence, async () => {
        const first = await group.open();
        const [entry] = await first.remember({
          text: "Persisted: the boiler is serviced in October.",
          scope: { tenant: "acme" },
        });
        await first.close();
        const second = await group.reopen("persistence");
        const hits = await second.recall("boiler serviced", { scope: { tenant: "acme" } });
        expect(hits[0]?.entry, `after reopen: ${showHits(hits)}`).toEqual(entry);
      });
    } else {
      group.skip(
        TITLES.persistence,
        "persistence is not claimed, so the suite does not require entries to survive a reopen",
      );
    }

    const paraphrase = context.paraphrase;
    if (capabilities.vectorSearch && paraphrase !== undefined) {
      group.test(TITLES.vectorSearch, async () => {
        const shared = words(paraphrase.query).filter((word) => words(paraphrase.text).includes(word));
        expect(
          shared,
          "the paraphrase option must share no word with its text, or it proves nothing",
        ).toEqual([]);
        const memory = await group.open();
        const scope = { tenant: "acme" };
        await memory.remember(DISTRACTORS.map((text) => ({ text, scope })));
        const [entry] = await memory.remember({ text: paraphrase.text, scope });
        const hits = await memory.recall(paraphrase.query, { scope });
        expect(
          hits.map((hit) => hit.entry.id),
          `vectorSearch is claimed but ${JSON.stringify(paraphrase.query)} did not find ${JSON.stringify(paraphrase.text)} in the top 5: ${showHits(hits)}`,
        ).toContain(entry!.id);
      });
    } else if (capabilities.vectorSearch) {
      group.skip(
        TITLES.vectorSearch,
        "no paraphrase option; pass paraphrase: { text, query } with the backend configured with its embedder",
      );
    } else {
      group.skip(
        TITLES.vectorSearch,
        "vectorSearch is not claimed; remember and recall checks that a query sharing no term finds nothing",
      );
    }

    if (capabilities.sharedWriters) {
      group.test(TITLES.sharedWriters, async () => {
        const a = await group.open();
        const b = await group.reopen("sharedWriters");
        const scope = { tenant: "acme" };
        const [fromA] = await a.remember({ text: "Written by handle a: the gate code is 4411.", scope });
        const seenByB = await b.recall("gate code", { scope });
        expect(
          seenByB.map((hit) => hit.entry.id),
          "handle b does not see a's write",
        ).toContain(fromA!.id);
        const [fromB] = await b.remember({ text: "Written by handle b: the gate code changed.", scope });
        const seenByA = await a.recall("gate code", { scope });
        expect(seenByA.map((hit) => hit.entry.id).sort(), "handle a does not see b's write").toEqual(
          [fromA!.id, fromB!.id].sort(),
        );
        expect(await b.forget({ ids: [fromA!.id], scope })).toBe(1);
        const afterForget = await a.recall("gate code", { scope });
        expect(
          afterForget.map((hit) => hit.entry.id),
          "handle a still sees what b forgot",
        ).toEqual([fromB!.id]);
      });
    } else {
      group.skip(TITLES.sharedWriters, "sharedWriters is not claimed");
    }
  });
}
