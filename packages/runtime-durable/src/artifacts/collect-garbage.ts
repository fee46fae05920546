import { ArtifactError } from "../contract/artifact-error.js";
import type { ArtifactStat, ArtifactStoreV1 } from "../contract/artifact-store.js";
import type { RunStoreV1 } from "../contract/run-store.js";

/** Default grace period of {@link collectArtifactGarbage}: one day. */
export const DEFAULT_ARTIFACT_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * What refers to artifacts. `@openrath/store-postgres` implements it over its chunk rows (what
 * checkpoints and retained runs refer to); any other record of references can too.
 */
export interface ArtifactReferenceSource {
  /**
   * The digests of `tenantId`'s artifacts that something stored refers to now. Read after the
   * candidates were listed, so a reference committed before the call is seen.
   */
  referencedArtifacts(tenantId: string): Promise<ReadonlySet<string>>;
}

/** Options of {@link collectArtifactGarbage}. */
export interface CollectArtifactGarbageOptions {
  readonly artifacts: ArtifactStoreV1;
  /**
   * What refers to artifacts: a run store that implements `referencedArtifacts` (the stores of
   * `@openrath/store-postgres` do, also wrapped by `withArtifactOffload`), or any other source.
   */
  readonly references: ArtifactReferenceSource | RunStoreV1;
  /**
   * An artifact put (or put again) less than this many milliseconds ago is kept even when nothing
   * refers to it yet: the row that will refer to it may not be committed (default one day). Also
   * the age after which leftovers of interrupted puts are swept.
   */
  readonly graceMs?: number;
  /** Only this tenant's artifacts (default: every tenant's). */
  readonly tenant?: string;
  /** Report what would be deleted without deleting anything. */
  readonly dryRun?: boolean;
  /** Stops the collection between objects with `artifact_aborted`. */
  readonly signal?: AbortSignal;
}

/** What {@link collectArtifactGarbage} found and did. */
export interface ArtifactGarbageReport {
  /** Artifacts listed. */
  readonly scanned: number;
  /** Artifacts past their grace period that something refers to (kept). */
  readonly referenced: number;
  /** Unreferenced artifacts still inside their grace period (kept). */
  readonly young: number;
  /** Unreferenced artifacts past their grace period: deleted, or with `dryRun` to be deleted. */
  readonly garbage: readonly { readonly tenant: string; readonly digest: string; readonly size: number }[];
  /** Leftovers of interrupted puts removed by `sweepIncomplete` (0 with `dryRun`). */
  readonly leftoversRemoved: number;
}

/**
 * Garbage collection by reference: deletes every artifact that nothing refers to and that was
 * last put more than `graceMs` ago; a referenced artifact is never deleted. Per tenant it lists
 * the candidates, then reads the references, then checks each candidate's age once more right
 * before deleting it, so an artifact put again meanwhile (its age restarts) survives. Then it
 * sweeps leftovers of interrupted puts older than the grace period.
 *
 * Whatever writes a new reference must put (or put again) the artifact first: a put moves its age
 * forward, which is what keeps a concurrent collection away from it.
 *
 * @throws {ArtifactError} from the store; `artifact_aborted` when `signal` fires.
 */
export async function collectArtifactGarbage(
  options: CollectArtifactGarbageOptions,
): Promise<ArtifactGarbageReport> {
  const { artifacts, signal } = options;
  const references = options.references;
  if (typeof references?.referencedArtifacts !== "function") {
    throw new ArtifactError(
      "invalid_argument",
      "collectArtifactGarbage needs references that implement referencedArtifacts(tenantId); this run store does not, so nothing can be collected safely.",
    );
  }
  const referencedArtifacts = references.referencedArtifacts.bind(references);
  const graceMs = options.graceMs ?? DEFAULT_ARTIFACT_GRACE_MS;
  let scanned = 0;
  let referenced = 0;
  let young = 0;
  const garbage: { tenant: string; digest: string; size: number }[] = [];
  const candidates = new Map<string, ArtifactStat[]>();
  const check = () => {
    if (signal?.aborted) {
      throw new ArtifactError("artifact_aborted", "The artifact garbage collection was aborted.", {
        cause: signal.reason,
      });
    }
  };

  const cutoff = () => Date.now() - graceMs;
  for await (const stat of artifacts.list(options.tenant === undefined ? {} : { tenant: options.tenant })) {
    check();
    scanned += 1;
    if (stat.modifiedAt > cutoff()) {
      young += 1;
      continue;
    }
    const list = candidates.get(stat.tenant) ?? [];
    if (list.length === 0) candidates.set(stat.tenant, list);
    list.push(stat);
  }

  for (const [tenant, stats] of candidates) {
    check();
    const live = await referencedArtifacts(tenant);
    for (const stat of stats) {
      check();
      if (live.has(stat.digest)) {
        referenced += 1;
        continue;
      }
      const now = await artifacts.stat(tenant, stat.digest);
      if (now === undefined) continue;
      if (now.modifiedAt > cutoff()) {
        young += 1;
        continue;
      }
      if (!options.dryRun) await artifacts.delete(tenant, stat.digest);
      garbage.push({ tenant, digest: stat.digest, size: now.size });
    }
  }
  const leftoversRemoved = options.dryRun ? 0 : await artifacts.sweepIncomplete({ olderThanMs: graceMs });
  return { scanned, referenced, young, garbage, leftoversRemoved };
}
