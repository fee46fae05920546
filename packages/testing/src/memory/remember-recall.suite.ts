import type { MemoryScope } from "@openrath/core";
import { memoryId } from "@openrath/core/backend";
import { expect } from "vitest";
import { DISTRACTORS, ids, showHits, texts } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import { expectMemoryError } from "./internal/expect-memory-error.js";
import type { MemorySuiteContext } from "./suite-context.js";

/** Clock skew tolerated between the test process and the store when checking `createdAt`. */
const CLOCK_SKEW_MS = 60_000;

/**
 * Remember and recall: stored entries come back normalized, duplicates collapse, an explicit id
 * replaces, and recall ranks, limits and filters its hits, returning nothing for a blank query or a
 * query that matches nothing.
 */
export function rememberRecallSuite(context: MemorySuiteContext): void {
  defineGroup(context, "remember and recall", (group) => {
    group.test(
      "remember returns the stored entries with id, text, normalized scope and createdAt",
      async () => {
        const memory = await group.open();
        const before = Date.now();
        const stored = await memory.remember({
          text: "Ann prefers window seats on long flights.",
          scope: { tenant: "acme", user: "ann" },
        });
        const after = Date.now();
        expect(stored).toHaveLength(1);
        const entry = stored[0]!;
        expect(typeof entry.id).toBe("string");
        expect(entry.id.length).toBeGreaterThan(0);
        expect(entry.text).toBe("Ann prefers window seats on long flights.");
        expect(entry.scope).toEqual({ tenant: "acme", user: "ann" });
        expect(Number.isFinite(entry.createdAt), `createdAt ${entry.createdAt} is not a number`).toBe(true);
        expect(entry.createdAt).toBeGreaterThanOrEqual(before - CLOCK_SKEW_MS);
        expect(entry.createdAt).toBeLessThanOrEqual(after + CLOCK_SKEW_MS);

        const [agentOnly] = await memory.remember({
          text: "The helper agent answers in French.",
          scope: { agent: "helper" },
        });
        expect(agentOnly!.scope, "{ agent } alone is read as default/default/agent").toEqual({
          tenant: "default",
          user: "default",
          agent: "helper",
        });
        const [defaulted] = await memory.remember({ text: "Stored at the store's default scope." });
        expect(defaulted!.scope.tenant, "an entry without a scope gets the store's default scope").toEqual(
          expect.any(String),
        );
      },
    );

    group.test("an entry without an id gets memoryId(scope, text)", async () => {
      const memory = await group.open();
      const scope: MemoryScope = { tenant: "acme", user: "ann", agent: "planner" };
      const [entry] = await memory.remember({ text: "Standups are at 9:30.", scope });
      expect(entry!.id).toBe(memoryId(scope, "Standups are at 9:30."));
    });

    group.test("remember takes a list and returns the entries in order", async () => {
      const memory = await group.open();
      const inputs = ["first of three", "second of three", "third of three"].map((text) => ({ text }));
      const stored = await memory.remember(inputs);
      expect(stored.map((e) => e.text)).toEqual(["first of three", "second of three", "third of three"]);
      expect(new Set(stored.map((e) => e.id)).size, "two different texts got one id").toBe(3);
      expect(await memory.remember([])).toEqual([]);
    });

    group.test("metadata and source are kept", async () => {
      const memory = await group.open();
      const metadata = { role: "user", tags: ["travel", "seats"], priority: 2, pinned: true, extra: null };
      const [stored] = await memory.remember({
        text: "Bob books aisle seats.",
        metadata,
        source: "https://example.com/profile/bob",
      });
      expect(stored!.metadata).toEqual(metadata);
      expect(stored!.source).toBe("https://example.com/profile/bob");
      const [hit] = await memory.recall("aisle seats", { scope: stored!.scope });
      expect(hit?.entry).toEqual(stored);
    });

    group.test("remembering the same text at the same scope twice keeps one entry", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme", user: "ann" };
      const [first] = await memory.remember({ text: "The office wifi is called Lighthouse.", scope });
      const [second] = await memory.remember({ text: "The office wifi is called Lighthouse.", scope });
      expect(second!.id).toBe(first!.id);
      const hits = await memory.recall("office wifi Lighthouse", { scope, topK: 10 });
      expect(ids(hits), `duplicates were not collapsed: ${showHits(hits)}`).toEqual([first!.id]);
    });

    group.test("remembering with an existing id replaces that entry", async () => {
      const memory = await group.open();
      await memory.remember({ id: "launch-date", text: "The launch is on Monday." });
      const [replaced] = await memory.remember({ id: "launch-date", text: "The launch moved to Friday." });
      expect(replaced!.id).toBe("launch-date");
      expect(replaced!.text).toBe("The launch moved to Friday.");
      const hits = await memory.recall("launch", { scope: replaced!.scope, topK: 10 });
      expect(texts(hits)).toEqual(["The launch moved to Friday."]);
      const old = await memory.recall("Monday", { scope: replaced!.scope, topK: 10 });
      expect(texts(old), "the replaced text is still recalled").not.toContain("The launch is on Monday.");
    });

    group.test("recall ranks the relevant entry first among 20 distractors", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      const distractors = [
        ...DISTRACTORS.slice(0, 18),
        "The production database is backed up every night.",
        "Password hints are disabled for service accounts.",
      ];
      await memory.remember(distractors.map((text) => ({ text, scope })));
      const [target] = await memory.remember({
        text: "The staging database password rotates on Tuesdays.",
        scope,
      });
      await memory.remember(DISTRACTORS.slice(18).map((text) => ({ text, scope })));
      const hits = await memory.recall("staging database password", { scope });
      expect(hits[0]?.entry.id, `hits: ${showHits(hits)}`).toBe(target!.id);
    });

    group.test("recall returns at most topK hits (default 5)", async () => {
      const memory = await group.open();
      const kinds = ["gala", "fuji", "honeycrisp", "braeburn", "pink lady", "granny smith", "jazz", "envy"];
      await memory.remember(kinds.map((kind) => ({ text: `apple variety: ${kind}` })));
      const scope = (await memory.remember({ text: "apple variety: cox" }))[0]!.scope;
      expect(await memory.recall("apple", { scope })).toHaveLength(5);
      expect(await memory.recall("apple", { scope, topK: 3 })).toHaveLength(3);
      expect(await memory.recall("apple", { scope, topK: 1 })).toHaveLength(1);
      expect(await memory.recall("apple", { scope, topK: 50 })).toHaveLength(9);
    });

    group.test("scores are positive and in descending order", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      await memory.remember(
        [
          ...DISTRACTORS,
          "Tea ceremony tea tasting notes.",
          "Green tea steeps for two minutes.",
          "Tea and biscuits at four.",
          "Oolong tea ceremony in Taipei.",
        ].map((text) => ({ text, scope })),
      );
      const hits = await memory.recall("tea ceremony", { scope, topK: 50 });
      expect(hits.length, `hits: ${showHits(hits)}`).toBeGreaterThanOrEqual(4);
      for (const hit of hits) {
        expect(hit.score, `a hit scored ${hit.score}: ${showHits([hit])}`).toBeGreaterThan(0);
        expect(Number.isFinite(hit.score)).toBe(true);
      }
      for (let i = 1; i < hits.length; i++) {
        expect(hits[i]!.score, `hits out of order: ${showHits(hits)}`).toBeLessThanOrEqual(
          hits[i - 1]!.score,
        );
      }
    });

    group.test("minScore drops hits scoring below it", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme" };
      await memory.remember(
        [
          ...DISTRACTORS,
          "Lantern festival by the lake on Saturday.",
          "Lantern repair kit in the garage.",
          "Festival parking map for visitors.",
        ].map((text) => ({ text, scope })),
      );
      const all = await memory.recall("lantern festival", { scope, topK: 50 });
      expect(all.length, `hits: ${showHits(all)}`).toBeGreaterThanOrEqual(3);
      const top = all[0]!.score;
      const low = all[all.length - 1]!.score;
      expect(
        top,
        `every hit has the same score, so minScore cannot be checked: ${showHits(all)}`,
      ).toBeGreaterThan(low);
      const threshold = (top + low) / 2;
      const kept = await memory.recall("lantern festival", { scope, topK: 50, minScore: threshold });
      for (const hit of kept) expect(hit.score).toBeGreaterThanOrEqual(threshold);
      expect(ids(kept).sort(), `minScore ${threshold} over ${showHits(all)}`).toEqual(
        ids(all.filter((hit) => hit.score >= threshold)).sort(),
      );
      expect(await memory.recall("lantern festival", { scope, topK: 50, minScore: top })).not.toEqual([]);
      expect(await memory.recall("lantern festival", { scope, topK: 50, minScore: top * 2 + 1 })).toEqual([]);
    });

    group.test("a blank query returns []", async () => {
      const memory = await group.open();
      const [entry] = await memory.remember({ text: "Something worth remembering." });
      for (const query of ["", " ", "\n\t  "]) {
        expect(
          await memory.recall(query, { scope: entry!.scope, topK: 10 }),
          `recall(${JSON.stringify(query)})`,
        ).toEqual([]);
      }
    });

    if (context.capabilities.vectorSearch) {
      group.test("a query sharing no term with any entry returns only positive scores", async () => {
        const memory = await group.open();
        const scope = { tenant: "acme" };
        await memory.remember(DISTRACTORS.map((text) => ({ text, scope })));
        const hits = await memory.recall("xylophone quokka", { scope, topK: 50 });
        for (const hit of hits) expect(hit.score, `hits: ${showHits(hits)}`).toBeGreaterThan(0);
      });
    } else {
      group.test("a query sharing no term with any entry returns []", async () => {
        const memory = await group.open();
        const scope = { tenant: "acme" };
        await memory.remember(DISTRACTORS.map((text) => ({ text, scope })));
        const hits = await memory.recall("xylophone quokka", { scope, topK: 50 });
        expect(hits, `no entry shares a term with the query, yet recall found ${showHits(hits)}`).toEqual([]);
      });
    }

    group.test("remember rejects text that is not a string with invalid_argument", async () => {
      const memory = await group.open();
      for (const input of [{ text: 42 }, { text: undefined }, { text: null }, {}]) {
        await expectMemoryError(
          () => memory.remember(input as never),
          "invalid_argument",
          `remember(${JSON.stringify(input)})`,
        );
      }
      expect(await memory.recall("42", { topK: 10 })).toEqual([]);
    });
  });
}
