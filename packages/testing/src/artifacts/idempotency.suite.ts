import { expect } from "vitest";
import { collect, pseudoRandomBytes, sha256Hex, sleep } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/**
 * Idempotent puts: the same content put again, or many times at once, is one object with the
 * same info; a put that declares a digest already stored (and no size) does not read its body; every put moves
 * the object's `modifiedAt` forward, so a garbage collector's grace period counts from the
 * latest one.
 */
export function idempotencySuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "idempotent puts", (group) => {
    group.test("putting the same content twice gives the same info and one object", async () => {
      const store = await group.open();
      const bytes = pseudoRandomBytes(4096, 21);
      const first = await store.put("acme", bytes);
      const second = await store.put("acme", Buffer.from(bytes));
      expect(second).toEqual(first);
      const listed = await collect(store.list({ tenant: "acme" }));
      expect(listed.map((a) => a.digest)).toEqual([first.digest]);
    });

    group.test("concurrent puts of the same content converge on one object", async () => {
      const store = await group.open();
      const bytes = pseudoRandomBytes(300_000, 22);
      const infos = await Promise.all(Array.from({ length: 8 }, () => store.put("acme", bytes)));
      expect(new Set(infos.map((i) => i.digest))).toEqual(new Set([sha256Hex(bytes)]));
      const listed = await collect(store.list({ tenant: "acme" }));
      expect(listed).toHaveLength(1);
      expect(listed[0]!.size).toBe(300_000);
    });

    group.test("a put that declares a stored digest and no size does not read its body", async () => {
      const store = await group.open();
      const bytes = pseudoRandomBytes(2048, 23);
      const digest = sha256Hex(bytes);
      const first = await store.put("acme", bytes, { digest, size: bytes.length });
      let read = false;
      const untouched = {
        async *[Symbol.asyncIterator]() {
          read = true;
          yield new Uint8Array(1);
        },
      };
      const again = await store.put("acme", untouched, { digest });
      expect(again).toEqual(first);
      expect(read, "the body of a put whose declared digest is already stored was read").toBe(false);
    });

    group.test("a put of stored content moves modifiedAt forward", async () => {
      const store = await group.open();
      const bytes = pseudoRandomBytes(1024, 24);
      const { digest } = await store.put("acme", bytes);
      const before = (await store.stat("acme", digest))!.modifiedAt;
      // S3 reports Last-Modified in whole seconds.
      await sleep(1100);
      await store.put("acme", bytes);
      expect((await store.stat("acme", digest))!.modifiedAt).toBeGreaterThan(before);
    });

    group.test("a put that declares a stored digest moves modifiedAt forward", async () => {
      const store = await group.open();
      const bytes = pseudoRandomBytes(1024, 25);
      const { digest } = await store.put("acme", bytes);
      const before = (await store.stat("acme", digest))!.modifiedAt;
      await sleep(1100);
      // The body is not read: the object is there, only its age moves.
      await store.put("acme", [], { digest });
      expect((await store.stat("acme", digest))!.modifiedAt).toBeGreaterThan(before);
    });
  });
}
