import type { Chunk } from "@openrath/core";
import { ArtifactError } from "../contract/artifact-error.js";
import type { ArtifactStoreV1 } from "../contract/artifact-store.js";
import { parseArtifactUri } from "./artifact-id.js";
import { readArtifactText } from "./read-artifact.js";

/** Default size above which a string in a chunk goes to the artifact store: 64 KiB of UTF-8. */
export const DEFAULT_OFFLOAD_THRESHOLD_BYTES = 64 * 1024;

/**
 * The key of the list of offloaded strings in a stored chunk. A chunk never has it otherwise
 * (chunk fields are plain names), so its presence marks a claim-check stub.
 */
export const OFFLOADED_KEY = "$artifacts";

/** Deepest nesting the offloader looks into (event data, reasoning items, tool calls). */
const MAX_DEPTH = 16;

/** One string of a chunk that lives in the artifact store. */
export interface OffloadedString {
  /** Where the string sits in the chunk: property names and array indices from the chunk's root. */
  readonly path: readonly (string | number)[];
  /** `artifact://<tenant>/<digest>` of its UTF-8 bytes. */
  readonly uri: string;
  /** Its length in UTF-8 bytes. */
  readonly size: number;
}

type Path = (string | number)[];

/** The paths of the strings in `value` of at least `threshold` UTF-8 bytes. */
function largeStrings(value: unknown, threshold: number, path: Path, depth: number, out: Path[]): void {
  if (typeof value === "string") {
    // Each UTF-16 unit is at most 3 UTF-8 bytes and at least 1, so most strings need no count.
    if (value.length * 3 < threshold) return;
    if (value.length >= threshold || Buffer.byteLength(value, "utf8") >= threshold) out.push([...path]);
    return;
  }
  if (depth >= MAX_DEPTH || typeof value !== "object" || value === null) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) largeStrings(value[i], threshold, [...path, i], depth + 1, out);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (depth === 0 && (key === "id" || key === "kind" || key === OFFLOADED_KEY)) continue;
    largeStrings(item, threshold, [...path, key], depth + 1, out);
  }
}

/** A copy of `value` with `replace` at `path`, copying only the containers on the way. */
function withAt(value: unknown, path: readonly (string | number)[], replace: unknown): unknown {
  if (path.length === 0) return replace;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[head as number] = withAt(value[head as number], rest, replace);
    return copy;
  }
  const object = value as Record<string, unknown>;
  return { ...object, [head as string]: withAt(object[head as string], rest, replace) };
}

function at(value: unknown, path: readonly (string | number)[]): unknown {
  let current = value;
  for (const step of path) current = (current as Record<string | number, unknown> | undefined)?.[step];
  return current;
}

/** Whether `chunk` has a string of at least `thresholdBytes` that {@link offloadChunk} would move. */
export function needsOffload(chunk: Chunk, thresholdBytes = DEFAULT_OFFLOAD_THRESHOLD_BYTES): boolean {
  const found: Path[] = [];
  largeStrings(chunk, thresholdBytes, [], 0, found);
  return found.length > 0;
}

/**
 * The claim check for one chunk: every string of at least `thresholdBytes` UTF-8 bytes (a tool
 * result, a long message, a big value in event data) is streamed to the artifact store and
 * replaced by `""`, and the chunk gets an {@link OFFLOADED_KEY} list saying where each string
 * went. A chunk without large strings is returned as it is. The strings are encoded in slices,
 * so a 50 MB tool result is never copied whole.
 */
export async function offloadChunk(
  chunk: Chunk,
  tenant: string,
  artifacts: ArtifactStoreV1,
  thresholdBytes = DEFAULT_OFFLOAD_THRESHOLD_BYTES,
): Promise<Chunk> {
  const paths: Path[] = [];
  largeStrings(chunk, thresholdBytes, [], 0, paths);
  if (paths.length === 0) return chunk;
  let stub: unknown = chunk;
  const refs: OffloadedString[] = [];
  for (const path of paths) {
    const text = at(chunk, path) as string;
    const info = await artifacts.put(tenant, text);
    refs.push({ path, uri: info.uri, size: info.size });
    stub = withAt(stub, path, "");
  }
  return { ...(stub as object), [OFFLOADED_KEY]: refs } as unknown as Chunk;
}

/**
 * The chunk {@link offloadChunk} stubbed, whole again: every offloaded string read back from the
 * artifact store (verified against its digest) and put in its place. A chunk without an
 * {@link OFFLOADED_KEY} list is returned as it is.
 *
 * @throws {ArtifactError} `artifact_not_found` or `artifact_corrupt` naming the digest and the
 *   chunk when an offloaded string is gone or damaged; `invalid_argument` for a malformed list.
 */
export async function resolveChunk(chunk: Chunk, artifacts: ArtifactStoreV1): Promise<Chunk> {
  const refs = (chunk as unknown as Record<string, unknown>)[OFFLOADED_KEY];
  if (refs === undefined) return chunk;
  if (!Array.isArray(refs)) throw malformed(chunk, refs);
  const { [OFFLOADED_KEY]: _refs, ...rest } = chunk as unknown as Record<string, unknown>;
  let whole: unknown = rest;
  for (const ref of refs as OffloadedString[]) {
    if (!Array.isArray(ref?.path) || typeof ref.uri !== "string" || ref.path.length === 0)
      throw malformed(chunk, ref);
    const { tenant, digest } = parseArtifactUri(ref.uri);
    let text: string;
    try {
      text = await readArtifactText(artifacts, tenant, digest);
    } catch (error) {
      if (!ArtifactError.isInstance(error)) throw error;
      const e = error as ArtifactError;
      throw new ArtifactError(
        e.code,
        `Chunk ${chunk.id} keeps part of its content in artifact ${digest} (tenant ${tenant}), which cannot be read back: ${e.message}`,
        { cause: e, retryable: e.retryable, details: { ...e.details, tenant, digest, chunkId: chunk.id } },
      );
    }
    whole = withAt(whole, ref.path, text);
  }
  return whole as Chunk;
}

/** The artifacts a stored chunk refers to, as `{ tenant, digest }`. */
export function offloadedArtifacts(chunk: unknown): { readonly tenant: string; readonly digest: string }[] {
  const refs = (chunk as Record<string, unknown> | null)?.[OFFLOADED_KEY];
  if (!Array.isArray(refs)) return [];
  const out: { tenant: string; digest: string }[] = [];
  for (const ref of refs) {
    try {
      out.push(parseArtifactUri((ref as OffloadedString).uri));
    } catch {
      // A malformed entry refers to nothing; resolveChunk reports it when the chunk is read.
    }
  }
  return out;
}

function malformed(chunk: Chunk, value: unknown): ArtifactError {
  return new ArtifactError(
    "invalid_argument",
    `Chunk ${chunk.id} has a malformed ${OFFLOADED_KEY} entry ${JSON.stringify(value)?.slice(0, 200)}; expected { path, uri, size } items.`,
    { details: { chunkId: chunk.id } },
  );
}
