import type { Chunk } from "@openrath/core";
import { BoundedMap } from "@openrath/core/backend";
import { ArtifactError } from "../contract/artifact-error.js";
import type { ArtifactStoreV1 } from "../contract/artifact-store.js";
import { DurableError } from "../contract/durable-error.js";
import type { ClaimOnSubmitV1, GroupCommitV1, NewSessionSubmitV1 } from "../contract/fast-paths.js";
import type {
  CheckpointWrite,
  ClaimList,
  ClaimRequest,
  Fence,
  FinishInput,
  MaterializedCheckpoint,
  RunRecord,
  SubmitInput,
  SubmitResult,
} from "../contract/run-records.js";
import type { RunStoreV1, SubmitHooks } from "../contract/run-store.js";
import { StoreDelegate } from "../internal/store-delegate.js";
import {
  DEFAULT_OFFLOAD_THRESHOLD_BYTES,
  needsOffload,
  offloadChunk,
  offloadedArtifacts,
  resolveChunk,
} from "./offload.js";

/** Options of {@link withArtifactOffload}. */
export interface ArtifactOffloadOptions {
  /** Where large strings go. */
  readonly artifacts: ArtifactStoreV1;
  /**
   * Strings of at least this many UTF-8 bytes in a chunk (tool results, messages, event data) are
   * stored in `artifacts` and kept in the database by digest (default 64 KiB).
   */
  readonly thresholdBytes?: number;
}

/** Runs whose tenant is remembered, so a commit does not ask the store for it again. */
const TENANT_CACHE = 10_000;

/**
 * The claim check: a {@link RunStoreV1} that keeps large chunk content in an artifact store.
 * Before a checkpoint is written (a submission, a step commit, a finish), every string of at least
 * `thresholdBytes` in its new chunks is streamed to `artifacts` (content-addressed, in the run's
 * tenant) and the chunk row keeps a stub with the digest; when a checkpoint is read
 * (`loadCheckpoint`, `findSessionHead`) the stubs are resolved again, each string verified
 * against its digest, so a restored Session is equal to the one checkpointed. Every other member
 * is the wrapped store's.
 *
 * The artifact is stored before the row that refers to it is committed, so a crash in between
 * leaves an unreferenced artifact (which {@link collectArtifactGarbage} removes after its grace
 * period), never a row without its content. An artifact store that cannot be reached during a
 * write is reported as `store_unavailable`, which workers retry while they hold the lease.
 *
 * @example
 * ```ts
 * import { filesystemArtifactStore, withArtifactOffload } from "@openrath/runtime-durable";
 * import { pgliteStore } from "@openrath/store-postgres";
 *
 * const store = withArtifactOffload(await pgliteStore({ dataDir: ".openrath/db" }), {
 *   artifacts: filesystemArtifactStore({ root: ".openrath/artifacts" }),
 * });
 * ```
 */
export function withArtifactOffload(store: RunStoreV1, options: ArtifactOffloadOptions): RunStoreV1 {
  const { artifacts } = options;
  const threshold = options.thresholdBytes ?? DEFAULT_OFFLOAD_THRESHOLD_BYTES;
  const tenants = new BoundedMap<string, string>(TENANT_CACHE);

  async function tenantOf(runId: string): Promise<string> {
    const known = tenants.get(runId);
    if (known !== undefined) return known;
    const run = await store.getRun(runId);
    // An unknown run makes the store's own call fail with its own error; any tenant does here.
    const tenant = run?.tenantId ?? "default";
    tenants.set(runId, tenant);
    return tenant;
  }

  async function offloadWrite(
    write: CheckpointWrite,
    tenant: () => Promise<string>,
  ): Promise<CheckpointWrite> {
    if (!write.newChunks.some((chunk) => needsOffload(chunk, threshold))) return write;
    const t = await tenant();
    const newChunks: Chunk[] = [];
    try {
      for (const chunk of write.newChunks) newChunks.push(await offloadChunk(chunk, t, artifacts, threshold));
    } catch (error) {
      // An artifact store that is down is, for this write, a store that is down: workers retry
      // `store_unavailable` writes while their lease holds, so the commit goes through once it is back.
      if (ArtifactError.isInstance(error, "artifact_unavailable")) {
        throw new DurableError(
          "store_unavailable",
          `The artifact store is not reachable, so the checkpoint cannot be written: ${(error as Error).message}`,
          { cause: error, details: { ...(error as ArtifactError).details, retryable: true } },
        );
      }
      throw error;
    }
    return { ...write, newChunks };
  }

  async function resolve(checkpoint: MaterializedCheckpoint | undefined) {
    if (checkpoint === undefined) return undefined;
    const chunks: Chunk[] = [];
    for (const chunk of checkpoint.chunks) chunks.push(await resolveChunk(chunk, artifacts));
    return { ...checkpoint, chunks };
  }

  /** A submission's input with its checkpoint offloaded, and the created run's tenant noted. */
  const submitting = async <R extends SubmitResult | undefined>(
    input: SubmitInput,
    send: (input: SubmitInput) => Promise<R>,
  ): Promise<R> => {
    const checkpoint = await offloadWrite(input.checkpoint, async () => input.tenantId);
    const result = await send({ ...input, checkpoint });
    if (result) tenants.set(result.run.id, result.run.tenantId);
    return result;
  };
  return new OffloadingStore(store, { submitting, offloadWrite, tenantOf, resolve });
}

/** What {@link OffloadingStore} does to the checkpoints it passes on. */
interface Offloader {
  submitting<R extends SubmitResult | undefined>(
    input: SubmitInput,
    send: (input: SubmitInput) => Promise<R>,
  ): Promise<R>;
  offloadWrite(write: CheckpointWrite, tenant: () => Promise<string>): Promise<CheckpointWrite>;
  tenantOf(runId: string): Promise<string>;
  resolve(checkpoint: MaterializedCheckpoint | undefined): Promise<MaterializedCheckpoint | undefined>;
}

class OffloadingStore extends StoreDelegate {
  declare readonly groupCommit?: GroupCommitV1;
  declare readonly newSessionSubmit?: NewSessionSubmitV1;
  declare readonly claimOnSubmit?: ClaimOnSubmitV1;

  constructor(
    inner: RunStoreV1,
    private readonly offload: Offloader,
  ) {
    super(inner);
    const { submitting, offloadWrite, tenantOf } = offload;
    // The fast paths the store has, each writing its checkpoints as the plain members do.
    const { groupCommit, newSessionSubmit, claimOnSubmit } = inner;
    if (groupCommit) {
      this.groupCommit = {
        specVersion: "v1",
        async commitSteps(fence, checkpoints) {
          const writes: CheckpointWrite[] = [];
          for (const checkpoint of checkpoints)
            writes.push(await offloadWrite(checkpoint, () => tenantOf(fence.runId)));
          return groupCommit.commitSteps(fence, writes);
        },
      };
    }
    if (newSessionSubmit) {
      this.newSessionSubmit = {
        specVersion: "v1",
        submitIfNew: (input, sessionIds, hooks) =>
          submitting(input, (offloaded) => newSessionSubmit.submitIfNew(offloaded, sessionIds, hooks)),
      };
    }
    if (claimOnSubmit) {
      const { submitIfNew } = claimOnSubmit;
      this.claimOnSubmit = {
        specVersion: "v1",
        submit: (input, claim, hooks) =>
          submitting(input, (offloaded) => claimOnSubmit.submit(offloaded, claim, hooks)),
        ...(submitIfNew && {
          submitIfNew: (input, sessionIds, claim, hooks) =>
            submitting(input, (offloaded) =>
              submitIfNew.call(claimOnSubmit, offloaded, sessionIds, claim, hooks),
            ),
        }),
      };
    }
  }

  override submit(input: SubmitInput, hooks?: SubmitHooks): Promise<SubmitResult> {
    return this.offload.submitting(input, (offloaded) => this.inner.submit(offloaded, hooks));
  }
  override async commitStep(
    fence: Fence,
    checkpoint: CheckpointWrite,
    expectedVersion?: number,
  ): Promise<RunRecord> {
    const write = await this.offload.offloadWrite(checkpoint, () => this.offload.tenantOf(fence.runId));
    return this.inner.commitStep(fence, write, expectedVersion);
  }
  override async finish(fence: Fence, input: FinishInput): Promise<RunRecord> {
    if (input.checkpoint === undefined) return this.inner.finish(fence, input);
    const checkpoint = await this.offload.offloadWrite(input.checkpoint, () =>
      this.offload.tenantOf(fence.runId),
    );
    return this.inner.finish(fence, { ...input, checkpoint });
  }
  override async claim(request: ClaimRequest): Promise<ClaimList> {
    const claims = await this.inner.claim(request);
    // A checkpoint the claim brought along may hold claim-check stubs: without it, the worker
    // reads the checkpoint through loadCheckpoint, resolved.
    for (const [i, claim] of claims.entries()) {
      if (claim.checkpoint?.chunks.some((chunk) => offloadedArtifacts(chunk).length > 0)) {
        const { checkpoint: _stubbed, ...rest } = claim;
        claims[i] = rest;
      }
    }
    return claims;
  }
  override async loadCheckpoint(
    runId: string,
    sequence?: number,
  ): Promise<MaterializedCheckpoint | undefined> {
    return this.offload.resolve(await this.inner.loadCheckpoint(runId, sequence));
  }
  override async findSessionHead(
    tenantId: string,
    sessionIds: readonly string[],
  ): Promise<MaterializedCheckpoint | undefined> {
    return this.offload.resolve(await this.inner.findSessionHead(tenantId, sessionIds));
  }
}
