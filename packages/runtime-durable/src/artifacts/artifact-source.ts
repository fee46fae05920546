import { createHash } from "node:crypto";
import { ArtifactError } from "../contract/artifact-error.js";
import type { ArtifactBody } from "../contract/artifact-store.js";
import { checkDigest, checkTenant } from "./artifact-id.js";

/** Characters of a string body encoded per chunk, so a 50 MB string never becomes one 50 MB buffer. */
const STRING_SLICE = 1 << 20;

/** Options of {@link createArtifactSource}. */
export interface ArtifactSourceOptions {
  /** The tenant, named in error details. */
  readonly tenant: string;
  /** Content above this many bytes is refused with `artifact_too_large` as soon as it is seen. */
  readonly maxBytes: number;
  /** The digest the content must hash to, checked before the iteration completes. */
  readonly digest?: string;
  /** The length the content must have, checked as bytes arrive. */
  readonly size?: number;
  /** Checked between chunks; fires `artifact_aborted`. */
  readonly signal?: AbortSignal;
}

/**
 * A put's body as a stream of byte chunks that hashes and checks itself as it is read. When the
 * iteration completes normally the content had the declared digest and size and is within the
 * limit; otherwise the iterator throws an {@link ArtifactError} — at the latest in place of
 * reporting the end, so a writer that only commits after a complete iteration never commits bad
 * content.
 */
export interface ArtifactSource extends AsyncIterable<Uint8Array> {
  /** The SHA-256 of the content. Available once the iteration completed. */
  readonly digest: string;
  /** Bytes read so far (the content length once the iteration completed). */
  readonly size: number;
}

/**
 * Wraps a put's body for a store: every implementation reads its body through this one place, so
 * the limit, the declared digest and size, the abort signal and the body's own failures are
 * handled the same way everywhere.
 *
 * @throws {ArtifactError} (synchronously) `invalid_argument` for a body or option of the wrong
 *   type; `artifact_too_large` when the declared size is over the limit. From the iterator:
 *   `artifact_too_large`, `artifact_digest_mismatch`, `artifact_aborted`, `artifact_source_failed`.
 */
export function createArtifactSource(body: ArtifactBody, options: ArtifactSourceOptions): ArtifactSource {
  const tenant = checkTenant(options.tenant);
  const expectedDigest = options.digest === undefined ? undefined : checkDigest(options.digest);
  const expectedSize = options.size;
  if (
    expectedSize !== undefined &&
    (typeof expectedSize !== "number" || !Number.isSafeInteger(expectedSize) || expectedSize < 0)
  ) {
    throw new ArtifactError(
      "invalid_argument",
      `An artifact size must be a non-negative integer, got ${JSON.stringify(expectedSize)}.`,
      { details: { tenant, size: expectedSize } },
    );
  }
  const limit = options.maxBytes;
  if (expectedSize !== undefined && expectedSize > limit) throw tooLarge(tenant, expectedSize, limit);
  const chunks = bodyChunks(body);
  const hash = createHash("sha256");
  let size = 0;
  let digest: string | undefined;

  async function* iterate(): AsyncGenerator<Uint8Array> {
    const signal = options.signal;
    const iterator = chunks[Symbol.asyncIterator]();
    try {
      for (;;) {
        if (signal?.aborted) throw aborted(tenant, signal);
        let next: IteratorResult<Uint8Array>;
        try {
          next = await iterator.next();
        } catch (error) {
          if (ArtifactError.isInstance(error)) throw error;
          throw new ArtifactError(
            "artifact_source_failed",
            `The artifact body failed while it was read (after ${size} bytes): ${(error as Error)?.message ?? String(error)}`,
            { cause: error, details: { tenant, bytesRead: size } },
          );
        }
        if (next.done) break;
        const chunk = next.value;
        if (chunk.byteLength === 0) continue;
        size += chunk.byteLength;
        if (size > limit) throw tooLarge(tenant, size, limit);
        if (expectedSize !== undefined && size > expectedSize) throw sizeMismatch(tenant, expectedSize, size);
        hash.update(chunk);
        yield chunk;
      }
      if (signal?.aborted) throw aborted(tenant, signal);
      if (expectedSize !== undefined && size !== expectedSize) throw sizeMismatch(tenant, expectedSize, size);
      const actual = hash.digest("hex");
      if (expectedDigest !== undefined && actual !== expectedDigest) {
        throw new ArtifactError(
          "artifact_digest_mismatch",
          `The artifact content hashes to ${actual}, not to the declared digest ${expectedDigest}; nothing was stored.`,
          { details: { tenant, digest: expectedDigest, actualDigest: actual, size } },
        );
      }
      digest = actual;
    } finally {
      if (digest === undefined) await iterator.return?.();
    }
  }

  const source = iterate();
  return {
    [Symbol.asyncIterator]: () => source,
    get size() {
      return size;
    },
    get digest() {
      if (digest === undefined) {
        throw new Error("ArtifactSource.digest is only known once the iteration has completed.");
      }
      return digest;
    },
  };
}

/**
 * The SHA-256 and UTF-8 length of a string or the SHA-256 of bytes, computed in slices: a string
 * is never encoded into one buffer of its size, and nothing of it is left behind for the garbage
 * collector. What a store uses to name re-readable content before it sends it.
 */
export function digestOf(body: string | Uint8Array): { readonly digest: string; readonly size: number } {
  const hash = createHash("sha256");
  if (typeof body !== "string") return { digest: hash.update(body).digest("hex"), size: body.byteLength };
  let size = 0;
  for (let start = 0; start < body.length; ) {
    const end = sliceEnd(body, start);
    const slice = body.slice(start, end);
    hash.update(slice, "utf8");
    size += Buffer.byteLength(slice, "utf8");
    start = end;
  }
  return { digest: hash.digest("hex"), size };
}

/** Where the string slice starting at `start` ends: {@link STRING_SLICE} units, never inside a surrogate pair. */
function sliceEnd(text: string, start: number): number {
  let end = Math.min(start + STRING_SLICE, text.length);
  const last = text.charCodeAt(end - 1);
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
  return end;
}

/** Every accepted body shape as an async iterable of byte chunks. */
function bodyChunks(body: ArtifactBody): AsyncIterable<Uint8Array> {
  if (typeof body === "string") return stringChunks(body);
  if (body instanceof Uint8Array) return oneChunk(body);
  if (typeof body === "object" && body !== null) {
    if (Symbol.asyncIterator in body || Symbol.iterator in body) {
      return mixedChunks(body as AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>);
    }
    if (typeof (body as ReadableStream).getReader === "function") {
      return readerChunks(body as ReadableStream<Uint8Array>);
    }
  }
  throw new ArtifactError(
    "invalid_argument",
    `An artifact body must be a string, a Uint8Array, a ReadableStream or an (async) iterable of chunks, got ${describe(body)}.`,
  );
}

async function* oneChunk(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

async function* stringChunks(text: string): AsyncGenerator<Uint8Array> {
  for (let start = 0; start < text.length; ) {
    // Never split a surrogate pair: both halves would encode as U+FFFD.
    const end = sliceEnd(text, start);
    yield Buffer.from(text.slice(start, end), "utf8");
    start = end;
  }
}

async function* mixedChunks(
  chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) {
    if (typeof chunk === "string") yield* stringChunks(chunk);
    else if (chunk instanceof Uint8Array) yield chunk;
    else {
      throw new ArtifactError(
        "invalid_argument",
        `An artifact body chunk must be a Uint8Array or a string, got ${describe(chunk)}.`,
      );
    }
  }
}

async function* readerChunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      if (!(value instanceof Uint8Array)) {
        throw new ArtifactError(
          "invalid_argument",
          `An artifact body stream must yield Uint8Array chunks, got ${describe(value)}.`,
        );
      }
      yield value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  return value.constructor?.name ?? "an object";
}

function tooLarge(tenant: string, size: number, limit: number): ArtifactError {
  return new ArtifactError(
    "artifact_too_large",
    `The artifact is larger than this store's limit of ${limit} bytes (at least ${size} bytes); nothing was stored. Raise maxBytes or keep the content elsewhere.`,
    { details: { tenant, size, maxBytes: limit } },
  );
}

function sizeMismatch(tenant: string, expected: number, actual: number): ArtifactError {
  return new ArtifactError(
    "artifact_digest_mismatch",
    `The artifact content is ${actual > expected ? "longer" : "shorter"} than the declared ${expected} bytes (${actual > expected ? "at least " : ""}${actual}); nothing was stored.`,
    { details: { tenant, size: expected, actualSize: actual } },
  );
}

/** The error a store raises when the caller's signal fires. */
export function aborted(tenant: string, signal: AbortSignal, digest?: string): ArtifactError {
  return new ArtifactError("artifact_aborted", "The artifact operation was aborted.", {
    cause: signal.reason,
    details: digest === undefined ? { tenant } : { tenant, digest },
  });
}
