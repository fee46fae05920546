import { expect } from "vitest";
import { ids, showHits, texts } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";

const A = { tenant: "acme", user: "ann" };
const B = { tenant: "globex", user: "ann" };

/**
 * What an id means: an entry is identified by its scope and its id together. The same id at two
 * scopes is two entries: remembering one never replaces or removes the other, and
 * `forget({ ids, scope })` removes only the entries at that scope (default: the store's default
 * scope) — never another tenant's.
 */
export function idsSuite(context: MemorySuiteContext): void {
  defineGroup(context, "id semantics", (group) => {
    group.test(
      "the same id in two tenants names two entries; neither remember replaces the other",
      async () => {
        const memory = await group.open();
        await memory.remember({ id: "x", text: "Acme's note x: the loading dock is at gate 3.", scope: A });
        await memory.remember({ id: "x", text: "Globex's note x: the loading dock is at gate 9.", scope: B });
        const atA = await memory.recall("loading dock gate", { scope: A, topK: 10 });
        const atB = await memory.recall("loading dock gate", { scope: B, topK: 10 });
        expect(texts(atA), `tenant acme sees ${showHits(atA)}`).toEqual([
          "Acme's note x: the loading dock is at gate 3.",
        ]);
        expect(texts(atB), `tenant globex sees ${showHits(atB)}`).toEqual([
          "Globex's note x: the loading dock is at gate 9.",
        ]);
        expect(atA[0]!.entry).toMatchObject({ id: "x", scope: A });
        expect(atB[0]!.entry).toMatchObject({ id: "x", scope: B });
      },
    );

    group.test(
      "the same id at a scope and at its enclosing level are two entries, both visible below",
      async () => {
        const memory = await group.open();
        await memory.remember({
          id: "policy",
          text: "Tenant policy: expenses need a receipt.",
          scope: { tenant: "acme" },
        });
        await memory.remember({
          id: "policy",
          text: "Ann's policy: expenses over 50 need a receipt.",
          scope: A,
        });
        const hits = await memory.recall("expenses receipt policy", {
          scope: { ...A, agent: "planner" },
          topK: 10,
        });
        expect(texts(hits).sort(), `hits: ${showHits(hits)}`).toEqual(
          [
            "Ann's policy: expenses over 50 need a receipt.",
            "Tenant policy: expenses need a receipt.",
          ].sort(),
        );
      },
    );

    group.test(
      "forget({ ids, scope }) removes only the entry at that scope, never another tenant's",
      async () => {
        const memory = await group.open();
        await memory.remember([
          { id: "shared-id", text: "Acme keeps the spare keys in the safe.", scope: A },
          { id: "shared-id", text: "Globex keeps the spare keys at reception.", scope: B },
        ]);
        expect(await memory.forget({ ids: ["shared-id"], scope: B }), "forget at globex").toBe(1);
        expect(ids(await memory.recall("spare keys", { scope: A, topK: 10 })), "acme's entry").toEqual([
          "shared-id",
        ]);
        expect(await memory.recall("spare keys", { scope: B, topK: 10 }), "globex's entry").toEqual([]);
        // At another scope (here the default one) the id names nothing.
        expect(await memory.forget({ ids: ["shared-id"] }), "forget at the default scope").toBe(0);
        expect(
          await memory.forget({ ids: ["shared-id"], scope: { tenant: "acme" } }),
          "forget at acme's tenant level",
        ).toBe(0);
        expect(ids(await memory.recall("spare keys", { scope: A, topK: 10 }))).toEqual(["shared-id"]);
      },
    );

    group.test("forget({ ids }) without a scope forgets at the store's default scope", async () => {
      const memory = await group.open();
      const [stored] = await memory.remember({
        id: "plain-id",
        text: "The parking permit is renewed in March.",
      });
      expect(await memory.forget({ ids: ["plain-id"] })).toBe(1);
      expect(await memory.recall("parking permit", { scope: stored!.scope, topK: 10 })).toEqual([]);
    });
  });
}
