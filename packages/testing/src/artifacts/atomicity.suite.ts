import { readArtifactText } from "@openrath/runtime-durable";
import { expect } from "vitest";
import { collect, largeObject, pseudoRandomBytes } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import { expectArtifactError } from "./internal/expect-artifact-error.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/**
 * Atomic visibility: a put whose body fails, that is aborted, or that is too large leaves nothing
 * visible, for small bodies and for bodies large enough to be uploaded in parts; sweeping
 * leftovers never removes a visible object.
 */
export function atomicitySuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "atomic puts", (group) => {
    const large = context.largeBytes;
    for (const [label, size] of [
      ["small", 64 * 1024],
      ["large", large],
    ] as const) {
      group.test(
        `a ${label} body that fails midway leaves nothing visible`,
        async () => {
          const store = await group.open();
          const object = largeObject(size, 61, Math.min(1 << 20, size / 4));
          const failing = (async function* () {
            let sent = 0;
            for (const chunk of object.chunks()) {
              if (sent + chunk.length > size * 0.75) throw new Error("the source broke");
              sent += chunk.length;
              yield chunk;
            }
          })();
          const error = await expectArtifactError(
            () => store.put("acme", failing),
            "artifact_source_failed",
            "put of a failing body",
          );
          expect(String((error.cause as Error)?.message)).toContain("the source broke");
          expect(await store.stat("acme", object.digest)).toBeUndefined();
          expect(await collect(store.list())).toEqual([]);
        },
        Math.max(context.timeoutMs, 120_000),
      );

      group.test(
        `an aborted ${label} put leaves nothing visible`,
        async () => {
          const store = await group.open();
          const object = largeObject(size, 62, Math.min(1 << 20, size / 4));
          const controller = new AbortController();
          const body = (async function* () {
            let sent = 0;
            for (const chunk of object.chunks()) {
              if (sent > size / 2) controller.abort(new Error("stop"));
              sent += chunk.length;
              yield chunk;
            }
          })();
          await expectArtifactError(
            () => store.put("acme", body, { signal: controller.signal }),
            "artifact_aborted",
            "aborted put",
          );
          expect(await store.stat("acme", object.digest)).toBeUndefined();
          expect(await collect(store.list())).toEqual([]);
        },
        Math.max(context.timeoutMs, 120_000),
      );
    }

    group.test("a put over the size limit is refused and leaves nothing visible", async () => {
      const { maxBytes } = context.capabilities;
      const store = await group.open();
      await expectArtifactError(
        () => store.put("acme", [], { size: maxBytes + 1 }),
        "artifact_too_large",
        "put declaring maxBytes + 1",
      );
      if (maxBytes > 64 * 1024 * 1024) return;
      const object = largeObject(maxBytes + 1, 63);
      await expectArtifactError(
        () => store.put("acme", object.chunks()),
        "artifact_too_large",
        "put of maxBytes + 1",
      );
      expect(await collect(store.list())).toEqual([]);
      const fits = pseudoRandomBytes(Math.min(maxBytes, 1024), 64);
      expect((await store.put("acme", fits)).size).toBe(fits.length);
    });

    group.test("sweeping leftovers never removes a visible object", async () => {
      const store = await group.open();
      const kept = await store.put("acme", "still here");
      await store
        .put(
          "acme",
          (async function* () {
            yield Buffer.from("half");
            throw new Error("broken");
          })(),
        )
        .catch(() => {});
      const removed = await store.sweepIncomplete({ olderThanMs: 0 });
      expect(removed).toBeGreaterThanOrEqual(0);
      expect(await readArtifactText(store, "acme", kept.digest)).toBe("still here");
      expect((await collect(store.list())).map((s) => s.digest)).toEqual([kept.digest]);
    });
  });
}
