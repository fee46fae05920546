import { expect } from "vitest";
import { ids, showHits } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

/**
 * Deletion: `forget({ ids, scope })` returns how many entries it removed and they are gone from
 * recall; unknown, repeated and already forgotten ids count nothing; a forgotten text can be
 * remembered again. (Ids across scopes: see the id semantics group.)
 */
export function deletionSuite(context: MemorySuiteContext): void {
  defineGroup(context, "deletion", (group) => {
    group.test("forget by ids returns the count and the entries are gone from recall", async () => {
      const memory = await group.open();
      const scope = { tenant: "acme", user: "ann" };
      const [a, b, c] = await memory.remember([
        { text: "Parcel one goes to Lisbon.", scope },
        { text: "Parcel two goes to Porto.", scope },
        { text: "Parcel three goes to Faro.", scope: { tenant: "acme" } },
      ]);
      expect(await memory.forget({ ids: [a!.id, c!.id], scope })).toBe(1);
      expect(await memory.forget({ ids: [c!.id], scope: { tenant: "acme" } })).toBe(1);
      const hits = await memory.recall("parcel", { scope, topK: 10 });
      expect(ids(hits), `hits: ${showHits(hits)}`).toEqual([b!.id]);
    });

    group.test("forgetting unknown ids returns 0", async () => {
      const memory = await group.open();
      const [kept] = await memory.remember({ text: "Nothing here is forgotten." });
      expect(await memory.forget({ ids: ["m_0000000000000000", "no-such-entry"] })).toBe(0);
      expect(await memory.forget({ ids: [] })).toBe(0);
      expect(await memory.forget({ scope: { tenant: "initech", user: "nobody" } })).toBe(0);
      const hits = await memory.recall("forgotten", { scope: kept!.scope });
      expect(ids(hits)).toEqual([kept!.id]);
    });

    group.test("a list mixing known, repeated and unknown ids counts each removed entry once", async () => {
      const memory = await group.open();
      const [first, second] = await memory.remember([
        { text: "Token alpha expires soon." },
        { text: "Token beta expires later." },
      ]);
      const scope = first!.scope;
      expect(await memory.forget({ ids: [first!.id, first!.id, "no-such-entry"], scope })).toBe(1);
      expect(await memory.forget({ ids: [first!.id], scope }), "forgetting an already forgotten id").toBe(0);
      const hits = await memory.recall("token expires", { scope: second!.scope, topK: 10 });
      expect(ids(hits)).toEqual([second!.id]);
    });

    group.test("a forgotten text can be remembered again", async () => {
      const memory = await group.open();
      const [entry] = await memory.remember({ text: "The spare key is under the mat." });
      expect(await memory.forget({ ids: [entry!.id], scope: entry!.scope })).toBe(1);
      const [again] = await memory.remember({ text: "The spare key is under the mat." });
      expect(again!.id).toBe(entry!.id);
      const hits = await memory.recall("spare key", { scope: entry!.scope });
      expect(ids(hits)).toEqual([entry!.id]);
    });
  });
}
