import { expect } from "vitest";
import { collect, sha256Hex } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/**
 * Stat, delete and list, what a garbage collector needs: stat reports size and age without
 * reading; delete reports whether the object was there; list yields every visible object,
 * grouped by tenant and in digest order, across pages, and reflects deletes.
 */
export function listingSuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "stat, delete and list", (group) => {
    group.test("stat reports size and modifiedAt, and undefined for an absent object", async () => {
      const store = await group.open();
      const before = Date.now();
      const info = await store.put("acme", "twelve bytes");
      const stat = await store.stat("acme", info.digest);
      expect(stat).toMatchObject({ ...info, size: 12 });
      // Stores with whole-second timestamps may round down by up to a second.
      expect(stat!.modifiedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
      expect(stat!.modifiedAt).toBeLessThanOrEqual(Date.now() + 1000);
      expect(await store.stat("acme", sha256Hex("absent"))).toBeUndefined();
    });

    group.test("delete reports true once, then false, and the object is gone", async () => {
      const store = await group.open();
      const { digest } = await store.put("acme", "to be deleted");
      expect(await store.delete("acme", digest)).toBe(true);
      expect(await store.delete("acme", digest)).toBe(false);
      expect(await store.stat("acme", digest)).toBeUndefined();
      expect(await collect(store.list())).toEqual([]);
    });

    group.test(
      "list yields a tenant's objects in digest order, and every tenant's grouped by tenant",
      async () => {
        const store = await group.open();
        const acme = await Promise.all(
          Array.from({ length: 7 }, (_, i) => store.put("acme", `acme object ${i}`)),
        );
        const beta = await Promise.all(
          Array.from({ length: 3 }, (_, i) => store.put("beta", `beta object ${i}`)),
        );
        const byDigest = (a: { digest: string }, b: { digest: string }) => a.digest.localeCompare(b.digest);
        const listed = await collect(store.list({ tenant: "acme" }));
        expect(listed.map((s) => s.digest)).toEqual([...acme].sort(byDigest).map((i) => i.digest));
        for (const stat of listed) {
          expect(stat.tenant).toBe("acme");
          expect(stat.uri).toBe(`artifact://acme/${stat.digest}`);
          expect(stat.size).toBe(13);
          expect(typeof stat.modifiedAt).toBe("number");
        }
        const all = await collect(store.list());
        expect(all).toHaveLength(10);
        // Each tenant's objects come together and in digest order; which tenant comes first is the store's choice.
        const tenantsInOrder = all.map((s) => s.tenant).filter((t, i, a) => a.indexOf(t) === i);
        expect([...tenantsInOrder].sort()).toEqual(["acme", "beta"]);
        for (const [tenant, infos] of [
          ["acme", acme],
          ["beta", beta],
        ] as const) {
          expect(all.filter((s) => s.tenant === tenant).map((s) => s.digest)).toEqual(
            [...infos].sort(byDigest).map((i) => i.digest),
          );
        }
        const firstBeta = all.findIndex((s) => s.tenant === "beta");
        const lastBeta = all.findLastIndex((s) => s.tenant === "beta");
        expect(lastBeta - firstBeta, "a tenant's objects are not listed together").toBe(2);
      },
    );

    group.test("list reflects deletes and never shows puts in progress or failed", async () => {
      const store = await group.open();
      const kept = await store.put("acme", "kept");
      const gone = await store.put("acme", "gone");
      await store.delete("acme", gone.digest);
      await store
        .put(
          "acme",
          (async function* () {
            yield Buffer.from("partial");
            throw new Error("the source broke");
          })(),
        )
        .catch(() => {});
      expect((await collect(store.list())).map((s) => s.digest)).toEqual([kept.digest]);
    });
  });
}
