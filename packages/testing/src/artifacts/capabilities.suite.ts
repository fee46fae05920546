import { readArtifact } from "@openrath/runtime-durable";
import { expect } from "vitest";
import { collect, pseudoRandomBytes } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/**
 * Capabilities: the store declares contract v1 and a complete manifest equal to the one the
 * caller passed; a `concurrentWriters` claim holds for two handles writing and deleting the same
 * objects at once.
 */
export function capabilitiesSuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "capabilities", (group) => {
    group.test("the store declares specVersion v1 and the manifest it was described with", async () => {
      const store = await group.open();
      expect(store.specVersion).toBe("v1");
      expect(store.capabilities).toEqual(context.capabilities);
      const { maxBytes, multipart, concurrentWriters, distributed } = store.capabilities;
      expect(Number.isSafeInteger(maxBytes) && maxBytes > 0, `maxBytes ${maxBytes}`).toBe(true);
      for (const [claim, value] of Object.entries({ multipart, concurrentWriters, distributed })) {
        expect(typeof value, `capabilities.${claim}`).toBe("boolean");
      }
    });

    if (!context.capabilities.concurrentWriters) {
      group.skip("two handles writing the same objects at once converge", "concurrentWriters is false");
      return;
    }
    group.test("two handles writing the same objects at once converge", async () => {
      const first = await group.open();
      const second = await group.reopen("concurrentWriters");
      const bodies = Array.from({ length: 6 }, (_, i) => pseudoRandomBytes(200_000, 70 + i));
      const infos = await Promise.all(bodies.flatMap((b) => [first.put("acme", b), second.put("acme", b)]));
      for (let i = 0; i < bodies.length; i++) expect(infos[2 * i]).toEqual(infos[2 * i + 1]);
      expect(await collect(first.list({ tenant: "acme" }))).toHaveLength(6);
      expect(await collect(second.list({ tenant: "acme" }))).toHaveLength(6);
      for (const [i, info] of infos.entries()) {
        if (i % 2 === 0)
          expect((await readArtifact(second, "acme", info.digest)).equals(bodies[i / 2]!)).toBe(true);
      }
      const [deleted, other] = await Promise.all([
        first.delete("acme", infos[0]!.digest),
        second.delete("acme", infos[0]!.digest),
      ]);
      expect([deleted, other].filter(Boolean).length).toBeGreaterThanOrEqual(1);
      expect(await first.stat("acme", infos[0]!.digest)).toBeUndefined();
    });
  });
}
