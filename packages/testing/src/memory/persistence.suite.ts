import { Session } from "@openrath/core";
import { expect } from "vitest";
import { DISTRACTORS, ids, showHits, texts } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

const TITLES = {
  entries: "entries, ids and ranking survive close and reopen",
  forget: "forget survives close and reopen",
  replace: "an entry replaced by id stays replaced after reopen",
  commit: "a committed session is not stored again after reopen",
} as const;

/**
 * Persistence (when `capabilities.persistence` is claimed): what was remembered, replaced,
 * forgotten and committed is the same after `close` and `reopen`. Not claimed, the group is
 * skipped: the suite does not require it.
 */
export function persistenceSuite(context: MemorySuiteContext): void {
  defineGroup(context, "persistence", (group) => {
    if (!context.capabilities.persistence) {
      const reason = "capabilities.persistence is false, so entries need not survive a reopen";
      for (const title of Object.values(TITLES)) group.skip(title, reason);
      return;
    }

    group.test(TITLES.entries, async () => {
      const first = await group.open();
      const scope = { tenant: "acme", user: "ann" };
      await first.remember(DISTRACTORS.map((text) => ({ text, scope })));
      const stored = await first.remember([
        { text: "Ferry timetable for the island route.", scope, metadata: { role: "user" }, source: "s-1" },
        { text: "Ferry tickets are cheaper online.", scope: { ...scope, agent: "planner" } },
        { text: "Bus timetable changes in summer.", scope },
        { id: "custom-id", text: "The ferry leaves from pier 4, see the timetable.", scope },
      ]);
      const asking = { ...scope, agent: "planner", session: "s9" };
      const before = await first.recall("ferry timetable", { scope: asking, topK: 10 });
      expect(ids(before), `hits before close: ${showHits(before)}`).toEqual(
        expect.arrayContaining(stored.map((entry) => entry.id)),
      );
      await first.close();

      const second = await group.reopen("persistence");
      const after = await second.recall("ferry timetable", { scope: asking, topK: 10 });
      expect(ids(after), `before close: ${showHits(before)}\nafter reopen: ${showHits(after)}`).toEqual(
        ids(before),
      );
      expect(after.map((hit) => hit.entry)).toEqual(before.map((hit) => hit.entry));
      for (const entry of stored) {
        const found = after.find((hit) => hit.entry.id === entry.id);
        expect(found?.entry, `entry ${entry.id} after reopen`).toEqual(entry);
      }
      const others = await second.recall("sourdough bakery", { scope, topK: 10 });
      expect(texts(others)).toContain("The bakery on Elm Street sells sourdough on weekends.");
    });

    group.test(TITLES.forget, async () => {
      const first = await group.open();
      const [keep, byId] = await first.remember([
        { text: "Keep: the vault code is in the red binder.", scope: { tenant: "acme" } },
        { text: "Forget by id: the vault code changed.", scope: { tenant: "acme" } },
        { text: "Forget by scope: the vault is in room 12.", scope: { tenant: "acme", user: "bob" } },
      ]);
      expect(await first.forget({ ids: [byId!.id], scope: { tenant: "acme" } })).toBe(1);
      expect(await first.forget({ scope: { tenant: "acme", user: "bob" } })).toBe(1);
      await first.close();

      const second = await group.reopen("persistence");
      const hits = await second.recall("vault code", { scope: { tenant: "acme", user: "bob" }, topK: 10 });
      expect(ids(hits), `after reopen: ${showHits(hits)}`).toEqual([keep!.id]);
    });

    group.test(TITLES.replace, async () => {
      const first = await group.open();
      await first.remember({ id: "deadline", text: "The report deadline is March 3." });
      await first.remember({ id: "deadline", text: "The report deadline is April 9." });
      await first.close();

      const second = await group.reopen("persistence");
      const [scoped] = await second.remember({ text: "Scope finder for the deadline test." });
      const hits = await second.recall("report deadline", { scope: scoped!.scope, topK: 10 });
      expect(texts(hits)).toContain("The report deadline is April 9.");
      expect(texts(hits)).not.toContain("The report deadline is March 3.");
    });

    group.test(TITLES.commit, async () => {
      const session = Session.fromUserMessage("Book a table for four at eight.").append({
        kind: "assistant",
        content: "Booked the corner table at Osteria Nove for 8 pm.",
      });
      const first = await group.open();
      const committed = await first.commit(session, { scope: { tenant: "acme", user: "ann" } });
      expect(committed).toHaveLength(2);
      await first.close();

      const second = await group.reopen("persistence");
      expect(await second.commit(session, { scope: { tenant: "acme", user: "ann" } })).toEqual([]);
      const hits = await second.recall("table Osteria", { scope: { tenant: "acme", user: "ann" }, topK: 10 });
      expect(hits.length, `hits: ${showHits(hits)}`).toBe(2);
    });
  });
}
