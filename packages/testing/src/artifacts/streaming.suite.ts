import { Readable } from "node:stream";
import { expect } from "vitest";
import { drain, largeObject } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/**
 * Streaming: a large object goes in from a generator that never holds it whole and comes out in
 * many chunks that hash to its digest; a reader may stop midway and the store stays usable.
 */
export function streamingSuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "streaming", (group) => {
    const size = context.largeBytes;

    group.test(
      `a ${Math.round(size / 2 ** 20)} MiB object streams in from a generator and out in many chunks`,
      async () => {
        const store = await group.open();
        const object = largeObject(size, 41);
        const info = await store.put("acme", Readable.from(object.chunks()));
        expect(info).toMatchObject({ digest: object.digest, size });
        const read = await drain(await store.get("acme", object.digest));
        expect(read.error).toBeUndefined();
        expect(read).toMatchObject({ bytes: size, digest: object.digest, ended: true });
        expect(read.chunks, "get handed out the large object in one chunk").toBeGreaterThan(1);
      },
      Math.max(context.timeoutMs, 120_000),
    );

    group.test(
      "a large put that declares its digest and size stores the same object",
      async () => {
        const store = await group.open();
        const object = largeObject(size, 42);
        const info = await store.put("acme", object.chunks(), { digest: object.digest, size });
        expect(info).toMatchObject({ digest: object.digest, size });
        expect((await store.stat("acme", object.digest))?.size).toBe(size);
      },
      Math.max(context.timeoutMs, 120_000),
    );

    group.test(
      "a reader that stops midway leaves the store usable",
      async () => {
        const store = await group.open();
        const object = largeObject(size, 43);
        await store.put("acme", object.chunks(), { digest: object.digest, size });
        const stream = await store.get("acme", object.digest);
        for await (const _chunk of stream) break;
        expect(stream.destroyed).toBe(true);
        const read = await drain(await store.get("acme", object.digest));
        expect(read).toMatchObject({ bytes: size, digest: object.digest, ended: true });
      },
      Math.max(context.timeoutMs, 120_000),
    );
  });
}
