import { createHash } from "node:crypto";
import type { Readable } from "node:stream";

/** SHA-256 of `data` as lower-case hex. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Deterministic pseudo-random bytes (xorshift32 from `seed`): incompressible, reproducible, and
 * different for different seeds.
 */
export function pseudoRandomBytes(length: number, seed = 1): Buffer {
  const out = Buffer.allocUnsafe(length);
  let x = seed >>> 0 || 0x9e3779b9;
  let i = 0;
  for (; i + 4 <= length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.writeUInt32LE(x >>> 0, i);
  }
  for (; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/**
 * A large object as a generator of `chunkBytes` chunks, never held whole, with its digest
 * computed ahead by generating the same chunks once.
 */
export function largeObject(size: number, seed: number, chunkBytes = 1 << 20) {
  const chunks = function* () {
    for (let offset = 0, n = 0; offset < size; offset += chunkBytes, n++) {
      yield pseudoRandomBytes(Math.min(chunkBytes, size - offset), seed * 7919 + n);
    }
  };
  const hash = createHash("sha256");
  for (const chunk of chunks()) hash.update(chunk);
  return { size, digest: hash.digest("hex"), chunks };
}

/** What reading a stream to its end observed. */
export interface Drained {
  /** Bytes received before the stream ended or failed. */
  readonly bytes: number;
  /** Number of chunks received. */
  readonly chunks: number;
  /** SHA-256 of the bytes received. */
  readonly digest: string;
  /** Whether `end` was emitted. */
  readonly ended: boolean;
  /** The error the stream failed with, if any. */
  readonly error: unknown;
}

/** Reads `stream` to its end or its error, hashing as it goes, without keeping the bytes. */
export function drain(stream: Readable): Promise<Drained> {
  return new Promise((resolve) => {
    const hash = createHash("sha256");
    let bytes = 0;
    let chunks = 0;
    let ended = false;
    stream.on("data", (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.byteLength;
      chunks += 1;
    });
    stream.once("end", () => {
      ended = true;
    });
    stream.once("error", (error) => resolve({ bytes, chunks, digest: hash.digest("hex"), ended, error }));
    stream.once("close", () => {
      if (!stream.errored) resolve({ bytes, chunks, digest: hash.digest("hex"), ended, error: undefined });
    });
  });
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Collects an async iterable into an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
