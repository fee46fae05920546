import { Readable } from "node:stream";
import { readArtifact, readArtifactText } from "@openrath/runtime-durable";
import { EMPTY_DIGEST } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { drain, pseudoRandomBytes, sha256Hex } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/**
 * Put and get: a put names the content by its SHA-256 within the tenant and returns its size and
 * URI; every body shape (bytes, strings, Node and web streams, iterables) stores the same object;
 * get streams the exact bytes back; the empty object is an object.
 */
export function putGetSuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "put and get", (group) => {
    group.test(
      "a put returns the SHA-256, the size and the URI, and get streams the bytes back",
      async () => {
        const store = await group.open();
        const bytes = pseudoRandomBytes(100_000, 11);
        const info = await store.put("acme", bytes);
        const digest = sha256Hex(bytes);
        expect(info).toEqual({
          tenant: "acme",
          digest,
          size: 100_000,
          uri: `artifact://acme/${digest}`,
        });
        const read = await drain(await store.get("acme", digest));
        expect(read.error).toBeUndefined();
        expect(read.ended).toBe(true);
        expect(read.bytes).toBe(100_000);
        expect(read.digest).toBe(digest);
        expect((await readArtifact(store, "acme", digest)).equals(bytes)).toBe(true);
      },
    );

    group.test("a string body is stored as its UTF-8 bytes", async () => {
      const store = await group.open();
      const text = "Grüße, 東京, 🚀 and a lone line\n".repeat(50);
      const info = await store.put("acme", text);
      expect(info.digest).toBe(sha256Hex(Buffer.from(text, "utf8")));
      expect(info.size).toBe(Buffer.byteLength(text, "utf8"));
      expect(await readArtifactText(store, "acme", info.digest)).toBe(text);
    });

    group.test("every body shape stores the same object", async () => {
      const store = await group.open();
      const text = "chunked content ✓ ".repeat(4096);
      const bytes = Buffer.from(text, "utf8");
      const digest = sha256Hex(bytes);
      const split = [bytes.subarray(0, 1000), text.slice(0, 0), bytes.subarray(1000)];
      const bodies: [string, () => Parameters<typeof store.put>[1]][] = [
        ["Uint8Array", () => new Uint8Array(bytes)],
        ["Buffer", () => bytes],
        ["string", () => text],
        ["Node Readable", () => Readable.from(split.filter((c) => c.length > 0))],
        [
          "web ReadableStream",
          () =>
            new ReadableStream<Uint8Array>({
              start(controller) {
                controller.enqueue(new Uint8Array(bytes.subarray(0, 7)));
                controller.enqueue(new Uint8Array(bytes.subarray(7)));
                controller.close();
              },
            }),
        ],
        [
          "async iterable of strings and bytes",
          () =>
            (async function* () {
              yield text.slice(0, 10);
              yield Buffer.from(text.slice(10, 500), "utf8");
              yield text.slice(500);
            })(),
        ],
        ["array of chunks", () => [bytes.subarray(0, 3), bytes.subarray(3)]],
      ];
      for (const [shape, body] of bodies) {
        const info = await store.put("acme", body());
        expect(info.digest, `digest of the ${shape} body`).toBe(digest);
        expect(info.size, `size of the ${shape} body`).toBe(bytes.length);
      }
      expect((await readArtifact(store, "acme", digest)).equals(bytes)).toBe(true);
    });

    group.test("the empty object is stored and read back as zero bytes", async () => {
      const store = await group.open();
      const info = await store.put("acme", new Uint8Array(0));
      expect(info.digest).toBe(EMPTY_DIGEST);
      expect(info.size).toBe(0);
      expect((await store.stat("acme", EMPTY_DIGEST))?.size).toBe(0);
      const read = await drain(await store.get("acme", EMPTY_DIGEST));
      expect(read).toMatchObject({ bytes: 0, ended: true, error: undefined });
      expect((await store.put("acme", "")).digest).toBe(EMPTY_DIGEST);
    });

    group.test("a read aborted through its signal ends with artifact_aborted", async () => {
      const store = await group.open();
      const { digest } = await store.put("acme", pseudoRandomBytes(3 << 20, 5));
      const controller = new AbortController();
      const stream = await store.get("acme", digest, { signal: controller.signal });
      stream.once("data", () => controller.abort(new Error("enough")));
      const read = await drain(stream);
      expect(read.ended).toBe(false);
      expect((read.error as { code?: string })?.code).toBe("artifact_aborted");
    });
  });
}
