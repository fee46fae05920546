import { ArtifactError } from "../contract/artifact-error.js";
import type { ArtifactGetOptions, ArtifactStoreV1 } from "../contract/artifact-store.js";

/** Options of {@link readArtifact}. */
export interface ReadArtifactOptions extends ArtifactGetOptions {
  /**
   * Refuse objects larger than this many bytes with `artifact_too_large` before reading them
   * (default: no limit beyond the store's own). Reading into memory is for objects known to be
   * small; stream anything else with {@link ArtifactStoreV1.get}.
   */
  readonly maxBytes?: number;
}

/**
 * Reads a whole object into memory and resolves only after its digest checked, so the bytes it
 * returns are never corrupt.
 *
 * @throws {ArtifactError} everything {@link ArtifactStoreV1.get} throws, including
 *   `artifact_corrupt`; `artifact_too_large` above `options.maxBytes`.
 */
export async function readArtifact(
  store: ArtifactStoreV1,
  tenant: string,
  digest: string,
  options: ReadArtifactOptions = {},
): Promise<Buffer> {
  const { maxBytes } = options;
  if (maxBytes !== undefined) {
    const stat = await store.stat(tenant, digest);
    if (stat !== undefined && stat.size > maxBytes) {
      throw new ArtifactError(
        "artifact_too_large",
        `Artifact ${digest} is ${stat.size} bytes, more than the ${maxBytes} bytes this read accepts; stream it with get() instead.`,
        { details: { tenant, digest, size: stat.size, maxBytes } },
      );
    }
  }
  const stream = await store.get(tenant, digest, options);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** {@link readArtifact}, decoded as UTF-8. */
export async function readArtifactText(
  store: ArtifactStoreV1,
  tenant: string,
  digest: string,
  options: ReadArtifactOptions = {},
): Promise<string> {
  return (await readArtifact(store, tenant, digest, options)).toString("utf8");
}
