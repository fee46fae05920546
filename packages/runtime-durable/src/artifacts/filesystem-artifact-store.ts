import { randomUUID } from "node:crypto";
import { type FileHandle, mkdir, open, readdir, rename, stat, unlink, utimes } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { ArtifactError } from "../contract/artifact-error.js";
import type {
  ArtifactBody,
  ArtifactCapabilities,
  ArtifactInfo,
  ArtifactListOptions,
  ArtifactPutOptions,
  ArtifactStat,
  ArtifactStoreV1,
  ArtifactSweepOptions,
} from "../contract/artifact-store.js";
import { artifactUri, checkDigest, checkTenant, DIGEST_PATTERN, TENANT_PATTERN } from "./artifact-id.js";
import { createArtifactSource } from "./artifact-source.js";
import { verifyArtifactStream } from "./verify-stream.js";

/** Default limit of one object: 5 GiB. */
export const DEFAULT_ARTIFACT_MAX_BYTES = 5 * 1024 ** 3;
/** Default age after which {@link ArtifactStoreV1.sweepIncomplete} removes a leftover: one hour. */
export const DEFAULT_SWEEP_AGE_MS = 60 * 60 * 1000;

const STAGING = ".staging";
const WRITE_BATCH = 1 << 20;

/** Options of {@link filesystemArtifactStore}. */
export interface FilesystemArtifactStoreOptions {
  /**
   * The directory that holds the objects, created on first use. Objects live at
   * `<root>/<tenant>/<first two hex digits>/<digest>`, puts in progress under `<root>/.staging`.
   * Put it beside the embedded database (for example `.openrath/artifacts` next to
   * `.openrath/db`), on the same filesystem for the whole tree.
   */
  readonly root: string;
  /** The largest object in bytes (default 5 GiB). */
  readonly maxBytes?: number;
  /**
   * Whether each put flushes the file and its directory to disk before it resolves (default
   * `true`). Turning it off trades durability after a power loss for speed; atomicity after a
   * process crash holds either way.
   */
  readonly fsync?: boolean;
}

/**
 * The default artifact store: a directory on the local disk. A put streams into a private file
 * under `.staging`, flushes it and renames it into place, so an object is either whole or absent,
 * also when the process dies mid-write (the leftover stays invisible until
 * {@link ArtifactStoreV1.sweepIncomplete} removes it). Several processes on this machine may share
 * the directory; other machines cannot (use `@openrath/artifacts-s3` there).
 *
 * @example
 * ```ts
 * import { filesystemArtifactStore, readArtifactText } from "@openrath/runtime-durable";
 *
 * const artifacts = filesystemArtifactStore({ root: ".openrath/artifacts" });
 * const { digest, uri } = await artifacts.put("acme", "a large tool result…");
 * console.log(uri, await readArtifactText(artifacts, "acme", digest));
 * ```
 */
export function filesystemArtifactStore(options: FilesystemArtifactStoreOptions): ArtifactStoreV1 {
  if (typeof options?.root !== "string" || options.root === "") {
    throw new ArtifactError(
      "invalid_argument",
      `filesystemArtifactStore needs a root directory, got ${JSON.stringify(options?.root)}.`,
    );
  }
  const root = options.root;
  const maxBytes = checkMaxBytes(options.maxBytes ?? DEFAULT_ARTIFACT_MAX_BYTES);
  const durable = options.fsync ?? true;
  const staging = join(root, STAGING);
  let closed = false;

  const capabilities: ArtifactCapabilities = Object.freeze({
    maxBytes,
    multipart: false,
    concurrentWriters: true,
    distributed: false,
  });

  const objectPath = (tenant: string, digest: string) => join(root, tenant, digest.slice(0, 2), digest);
  const ensureOpen = () => {
    if (closed) throw new ArtifactError("artifact_closed", "The filesystem artifact store is closed.");
  };
  const info = (tenant: string, digest: string, size: number): ArtifactInfo => ({
    tenant,
    digest,
    size,
    uri: artifactUri(tenant, digest),
  });

  async function statObject(tenant: string, digest: string): Promise<ArtifactStat | undefined> {
    try {
      const s = await stat(objectPath(tenant, digest));
      return { ...info(tenant, digest, s.size), modifiedAt: s.mtimeMs };
    } catch (error) {
      if (errno(error) === "ENOENT") return undefined;
      throw fsError(error, "stat", tenant, digest);
    }
  }

  async function put(tenant: string, body: ArtifactBody, putOptions: ArtifactPutOptions = {}) {
    ensureOpen();
    checkTenant(tenant);
    if (putOptions.digest !== undefined) {
      const digest = checkDigest(putOptions.digest);
      const existing = await statObject(tenant, digest);
      if (existing !== undefined) {
        if (putOptions.size !== undefined && putOptions.size !== existing.size) {
          throw new ArtifactError(
            "artifact_digest_mismatch",
            `Artifact ${digest} is stored with ${existing.size} bytes, but the put declares ${putOptions.size}; content with that digest cannot have that size.`,
            { details: { tenant, digest, size: putOptions.size, actualSize: existing.size } },
          );
        }
        if (await touch(objectPath(tenant, digest), tenant, digest))
          return info(tenant, digest, existing.size);
      }
    }
    const source = createArtifactSource(body, { ...putOptions, tenant, maxBytes });
    await mkdir(staging, { recursive: true }).catch((error) => {
      throw fsError(error, "create the staging directory for", tenant);
    });
    const temp = join(staging, `${tenant}.${randomUUID()}.part`);
    let handle: FileHandle | undefined;
    try {
      handle = await open(temp, "wx", 0o600);
      await writeAll(handle, source);
      if (durable) await handle.sync();
      await handle.close();
      handle = undefined;
      const digest = source.digest;
      const target = objectPath(tenant, digest);
      const dir = join(root, tenant, digest.slice(0, 2));
      await mkdir(dir, { recursive: true });
      // rename is atomic: readers see the old file (identical bytes) or the new one, never a part.
      await rename(temp, target);
      if (durable) await syncDirectory(dir);
      return info(tenant, digest, source.size);
    } catch (error) {
      await handle?.close().catch(() => {});
      await unlink(temp).catch(() => {});
      if (ArtifactError.isInstance(error)) throw error;
      throw fsError(error, "write", tenant);
    }
  }

  async function get(tenant: string, digest: string, getOptions: { signal?: AbortSignal } = {}) {
    ensureOpen();
    checkTenant(tenant);
    checkDigest(digest);
    let handle: FileHandle;
    try {
      handle = await open(objectPath(tenant, digest), "r");
    } catch (error) {
      if (errno(error) === "ENOENT") throw notFound(tenant, digest);
      throw fsError(error, "open", tenant, digest);
    }
    let size: number;
    try {
      size = (await handle.stat()).size;
    } catch (error) {
      await handle.close().catch(() => {});
      throw fsError(error, "stat", tenant, digest);
    }
    const file: Readable = handle.createReadStream({ highWaterMark: 1 << 20 });
    return verifyArtifactStream(file, {
      tenant,
      digest,
      size,
      signal: getOptions.signal,
      mapError: (error) => fsError(error, "read", tenant, digest),
    });
  }

  async function* list(listOptions: ArtifactListOptions = {}): AsyncGenerator<ArtifactStat> {
    ensureOpen();
    const tenants =
      listOptions.tenant !== undefined
        ? [checkTenant(listOptions.tenant)]
        : (await names(root)).filter((name) => TENANT_PATTERN.test(name));
    for (const tenant of tenants) {
      for (const prefix of (await names(join(root, tenant))).filter((n) => /^[0-9a-f]{2}$/.test(n))) {
        const digests = (await names(join(root, tenant, prefix))).filter(
          (n) => DIGEST_PATTERN.test(n) && n.startsWith(prefix),
        );
        for (const digest of digests) {
          ensureOpen();
          const found = await statObject(tenant, digest);
          if (found !== undefined) yield found;
        }
      }
    }
  }

  async function sweepIncomplete(sweepOptions: ArtifactSweepOptions = {}): Promise<number> {
    ensureOpen();
    const cutoff = Date.now() - (sweepOptions.olderThanMs ?? DEFAULT_SWEEP_AGE_MS);
    let removed = 0;
    for (const name of await names(staging)) {
      if (!name.endsWith(".part")) continue;
      const path = join(staging, name);
      try {
        if ((await stat(path)).mtimeMs >= cutoff) continue;
        await unlink(path);
        removed += 1;
      } catch (error) {
        if (errno(error) !== "ENOENT") throw fsError(error, "sweep", "-");
      }
    }
    return removed;
  }

  return {
    specVersion: "v1",
    capabilities,
    put,
    get,
    async stat(tenant, digest) {
      ensureOpen();
      return statObject(checkTenant(tenant), checkDigest(digest));
    },
    async delete(tenant, digest) {
      ensureOpen();
      checkTenant(tenant);
      checkDigest(digest);
      try {
        await unlink(objectPath(tenant, digest));
        return true;
      } catch (error) {
        if (errno(error) === "ENOENT") return false;
        throw fsError(error, "delete", tenant, digest);
      }
    },
    list,
    sweepIncomplete,
    async close() {
      closed = true;
    },
  };
}

/** Writes every chunk of `source` to `handle`, coalescing small chunks into writes of about 1 MiB. */
async function writeAll(handle: FileHandle, source: AsyncIterable<Uint8Array>): Promise<void> {
  let batch: Uint8Array[] = [];
  let batched = 0;
  const flush = async () => {
    if (batched === 0) return;
    const bytes = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batched);
    batch = [];
    batched = 0;
    for (let offset = 0; offset < bytes.byteLength; ) {
      const { bytesWritten } = await handle.write(bytes, offset, bytes.byteLength - offset);
      offset += bytesWritten;
    }
  };
  for await (const chunk of source) {
    batch.push(chunk);
    batched += chunk.byteLength;
    if (batched >= WRITE_BATCH) await flush();
  }
  await flush();
}

/** Moves a file's modification time to now; `false` when it vanished meanwhile. */
async function touch(path: string, tenant: string, digest: string): Promise<boolean> {
  const now = new Date();
  try {
    await utimes(path, now, now);
    return true;
  } catch (error) {
    if (errno(error) === "ENOENT") return false;
    throw fsError(error, "refresh", tenant, digest);
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The sorted entries of a directory, or none when it does not exist. */
async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (error) {
    if (errno(error) === "ENOENT" || errno(error) === "ENOTDIR") return [];
    throw fsError(error, "list", "-");
  }
}

function checkMaxBytes(value: unknown): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
  throw new ArtifactError(
    "invalid_argument",
    `maxBytes must be a positive integer, got ${JSON.stringify(value)}.`,
  );
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The error of a missing object, naming its digest. */
function notFound(tenant: string, digest: string): ArtifactError {
  return new ArtifactError(
    "artifact_not_found",
    `Artifact ${digest} of tenant ${tenant} does not exist (never stored, deleted, or removed behind the store's back).`,
    { details: { tenant, digest } },
  );
}

function fsError(error: unknown, action: string, tenant: string, digest?: string): ArtifactError {
  const code = errno(error);
  const what = digest === undefined ? "an artifact" : `artifact ${digest}`;
  const details = { tenant, ...(digest === undefined ? {} : { digest }), errno: code };
  if (code === "EACCES" || code === "EPERM") {
    return new ArtifactError("artifact_denied", `Cannot ${action} ${what}: permission denied.`, {
      cause: error,
      details,
    });
  }
  return new ArtifactError(
    "artifact_backend_error",
    `Cannot ${action} ${what}: ${(error as Error)?.message ?? String(error)}`,
    { cause: error, details },
  );
}
