import { readArtifact } from "@openrath/runtime-durable";
import { expect } from "vitest";
import { drain, largeObject, pseudoRandomBytes, sha256Hex } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import { expectArtifactError } from "./internal/expect-artifact-error.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

function codeOf(error: unknown): string | undefined {
  return (error as { code?: string } | undefined)?.code;
}

/**
 * Integrity, with objects damaged or removed behind the store's back: a read of bytes that do
 * not hash to their name fails with `artifact_corrupt` naming the digest before the stream ends
 * (a small object is not handed out at all, a large one holds back its last chunk); a removed
 * object is `artifact_not_found` naming the digest.
 */
export function integritySuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "integrity", (group) => {
    group.tampering("a small object whose bytes were changed is never handed out", async (tamper) => {
      const store = await group.open();
      const bytes = pseudoRandomBytes(20_000, 51);
      const { digest } = await store.put("acme", bytes);
      const damaged = Buffer.from(bytes);
      damaged[12_345] = (damaged[12_345]! + 1) & 0xff;
      await tamper.overwrite("acme", digest, damaged);
      const read = await drain(await store.get("acme", digest));
      expect(read.ended, "a corrupt stream emitted end").toBe(false);
      expect(codeOf(read.error)).toBe("artifact_corrupt");
      expect(read.bytes, "bytes of a corrupt one-chunk object were handed out").toBe(0);
      const error = await expectArtifactError(
        () => readArtifact(store, "acme", digest),
        "artifact_corrupt",
        "readArtifact of a damaged object",
      );
      expect(error.message).toContain(digest);
      expect(error.details).toMatchObject({ tenant: "acme", digest, actualDigest: sha256Hex(damaged) });
    });

    group.tampering(
      "a large damaged object fails before its stream ends and never delivers all its bytes",
      async (tamper) => {
        const store = await group.open();
        const object = largeObject(6 << 20, 52);
        await store.put("acme", object.chunks(), { digest: object.digest, size: object.size });
        const damaged = Buffer.concat([...object.chunks()]);
        damaged[damaged.length - 1] = damaged[damaged.length - 1]! ^ 0x01;
        await tamper.overwrite("acme", object.digest, damaged);
        const read = await drain(await store.get("acme", object.digest));
        expect(read.ended).toBe(false);
        expect(codeOf(read.error)).toBe("artifact_corrupt");
        expect(read.bytes).toBeLessThan(object.size);
      },
      Math.max(context.timeoutMs, 60_000),
    );

    group.tampering("an object replaced by shorter or longer content is corrupt", async (tamper) => {
      const store = await group.open();
      const bytes = pseudoRandomBytes(50_000, 53);
      const { digest } = await store.put("acme", bytes);
      for (const replacement of [
        bytes.subarray(0, 49_999),
        Buffer.concat([bytes, Buffer.from("!")]),
        Buffer.alloc(0),
      ]) {
        await tamper.overwrite("acme", digest, replacement);
        await expectArtifactError(
          () => readArtifact(store, "acme", digest),
          "artifact_corrupt",
          `readArtifact of an object replaced by ${replacement.length} bytes`,
        );
      }
    });

    group.tampering(
      "an object removed behind the store's back is artifact_not_found naming the digest",
      async (tamper) => {
        const store = await group.open();
        const { digest } = await store.put("acme", "soon gone");
        await tamper.remove("acme", digest);
        const error = await expectArtifactError(
          () => store.get("acme", digest),
          "artifact_not_found",
          "get of a removed object",
        );
        expect(error.message).toContain(digest);
        expect(error.details).toMatchObject({ tenant: "acme", digest });
        expect(await store.stat("acme", digest)).toBeUndefined();
        expect(await store.delete("acme", digest)).toBe(false);
        const again = await store.put("acme", "soon gone");
        expect(again.digest).toBe(digest);
      },
    );

    group.test("get of a digest never stored is artifact_not_found before any byte", async () => {
      const store = await group.open();
      const digest = sha256Hex("never stored");
      const error = await expectArtifactError(() => store.get("acme", digest), "artifact_not_found", "get");
      expect(error.details).toMatchObject({ tenant: "acme", digest });
    });
  });
}
