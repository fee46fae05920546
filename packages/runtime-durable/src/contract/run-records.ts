import type { Chunk, JsonObject, JsonValue, LineageNodeJSON } from "@openrath/core";
import type { AuditInput } from "./access.js";
import type { RunStatus } from "./status.js";

/** A coded error as stored on a run or in an event: never a raw stack. */
export interface RunErrorInfo {
  /** A stable code, such as `step_failed` or `deadline_exceeded`. */
  readonly code: string;
  readonly message: string;
  /** The step that failed, when a step did. */
  readonly stepId?: string;
  /** Whether another attempt could succeed. */
  readonly retryable?: boolean;
}

/**
 * The stored form of a compiled plan: its content hash, the workflow's name and the canonical
 * definition the hash was computed over. Insert-once: a hash never names two contents.
 */
export interface PlanRecord {
  /** SHA-256 (lower-case hex) over the canonical definition, handler implementations included. */
  readonly hash: string;
  /** The workflow's name. */
  readonly name: string;
  /** The workflow's declared version (default `"1"`). */
  readonly version: string;
  /** The canonical definition: nodes, successors, retry and timeout policies, implementation hashes. */
  readonly definition: JsonObject;
}

/** A run as the store holds it. Timestamps are database time, in epoch milliseconds. */
export interface RunRecord {
  readonly id: string;
  readonly tenantId: string;
  /**
   * The project of the tenant the run belongs to (`SubmitInput.projectId`, such as an API token's
   * project), or `null` for none. Set at submission, never changed.
   */
  readonly projectId: string | null;
  /** The id of the session the run was submitted with (its active slot is per session). */
  readonly sessionId: string;
  /** The plan the run is pinned to. */
  readonly planHash: string;
  /** The workflow's name, from the plan. */
  readonly workflow: string;
  readonly status: RunStatus;
  /** Bumped by every change of the run row (compare-and-set). Starts at 1. */
  readonly version: number;
  /** Higher runs first (−100..100, default 0). */
  readonly priority: number;
  readonly idempotencyKey: string | null;
  /** SHA-256 of the canonical submission, compared when the idempotency key is reused. */
  readonly fingerprint: string;
  /** The step that runs next, or `null` once the plan is done. */
  readonly nextStep: string | null;
  /** The attempt of `nextStep` that runs next (1 for the first); survives crashes. */
  readonly attempt: number;
  /** The run is not claimed before this time (a scheduled retry). */
  readonly notBefore: number;
  /** When the run times out, or `null`. */
  readonly deadline: number | null;
  /** The worker holding the lease, while running. */
  readonly leaseHolder: string | null;
  /** The current fencing token: bumped by every claim; 0 before the first. */
  readonly fencingToken: number;
  /** When the current lease expires (database clock), while running. */
  readonly leaseExpiresAt: number | null;
  /** Sequence of the last committed checkpoint (0 is the submitted session). */
  readonly checkpointSeq: number;
  /** Store-wide id of that checkpoint (the base the next one is encoded against). */
  readonly checkpointId: number;
  /** Sequence of the last event. */
  readonly eventSeq: number;
  /** Why the run failed, timed out or was cancelled. */
  readonly error: RunErrorInfo | null;
  /** Caller data kept with the run (labels, trace ids); never interpreted. */
  readonly metadata: JsonObject;
  /**
   * The W3C trace context the run continues (the submitter's, as `SubmitOptions.traceContext`
   * gave it or the runtime's `traceSubmit` made it): every step attempt, on whichever worker,
   * continues this trace. Absent when the run was submitted without one.
   */
  readonly traceContext?: TraceContext;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * A W3C trace context (https://www.w3.org/TR/trace-context/): the `traceparent` header value
 * (`00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`) and, optionally, `tracestate`.
 */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** A durable per-run event: `seq` is gap-free from 1 and written with the change it reports. */
export interface RunEvent {
  readonly runId: string;
  readonly seq: number;
  /** Dotted type such as `run.created`, `run.state.changed`, `run.checkpoint`, `step.progress`. */
  readonly type: string;
  readonly data: JsonValue;
  readonly at: number;
}

/** An event a caller writes (the store assigns `seq` and `at`). */
export interface EventInput {
  readonly type: string;
  readonly data?: JsonValue;
}

/**
 * One element of a checkpoint's chunk list encoded against its base checkpoint's list: a
 * `[start, count]` pair copies that range of the base list, a string is a chunk id.
 */
export type ChunkOp = readonly [start: number, count: number] | string;

/** Where a session was placed, as in `SessionJSON.placement`. */
export interface PlacementJSON {
  readonly key: string;
  readonly spec?: JsonValue;
}

/**
 * The `baseId` of a checkpoint written in the same batch right after its base
 * (`GroupCommitV1.commitSteps`): the base is the write before it, whose id the store assigns.
 */
export const PREVIOUS_CHECKPOINT = -1;

/**
 * A checkpoint to write: the session at a step boundary as references. Chunks are written once per
 * tenant (keyed by chunk id); the checkpoint stores the chunk-id delta against its base and the
 * lineage nodes its base does not have.
 */
export interface CheckpointWrite {
  /** Must be the run's `checkpointSeq + 1`. */
  readonly sequence: number;
  /** The session's id at this boundary. */
  readonly sessionId: string;
  /**
   * The checkpoint the delta is against (any checkpoint of the tenant), or `null` for a full list.
   * In a batch (`GroupCommitV1.commitSteps`), a write after the first may name
   * {@link PREVIOUS_CHECKPOINT}: the write before it in the batch, whose id is not known yet.
   */
  readonly baseId: number | null;
  /** The session's chunk ids, encoded against the base's list. */
  readonly chunkOps: readonly ChunkOp[];
  /** Chunks the base does not reference; the store inserts those it does not have yet. */
  readonly newChunks: readonly Chunk[];
  /** Lineage nodes the base does not have (or has with other content). */
  readonly lineage: readonly LineageNodeJSON[];
  readonly placement: PlacementJSON | null;
  /** The step that completed (for the event), or `null` for the submitted session. */
  readonly stepId: string | null;
  /** The step to run next, or `null` when the plan is done. */
  readonly nextStep: string | null;
}

/** A stored checkpoint's header (without its chunks). */
export interface CheckpointRef {
  /** Store-wide id, increasing with time; what later checkpoints use as their base. */
  readonly id: number;
  readonly runId: string;
  readonly sequence: number;
  readonly sessionId: string;
  readonly nextStep: string | null;
  /** How many checkpoints lie behind this one in its base chain (0: a full list, no base). */
  readonly depth: number;
  readonly createdAt: number;
}

/** A checkpoint resolved back into the parts of a `SessionJSON`. */
export interface MaterializedCheckpoint extends CheckpointRef {
  /** The session's chunk ids in order. */
  readonly chunkIds: readonly string[];
  /** The chunks, in `chunkIds` order. */
  readonly chunks: readonly Chunk[];
  /** Every lineage node the session's DAG needs (possibly more; `toJSON` walks from the head). */
  readonly lineage: readonly LineageNodeJSON[];
  readonly placement: PlacementJSON | null;
  /**
   * How many chunk bodies the checkpoint's base chain stores (its own and its bases', still listed
   * or not), when the store keeps chunks along chains: the runtime starts a new chain once this
   * outgrows the session, so a restore never reads much more than the session itself. Absent:
   * chains are cut by depth ({@link MAX_CHAIN_DEPTH}).
   */
  readonly chainChunks?: number;
}

/** What a worker's writes carry: the run and the fencing token of the lease it holds. */
export interface Fence {
  readonly runId: string;
  readonly token: number;
  /** The worker holding the lease. */
  readonly workerId: string;
}

/** A run a worker claimed, with the fence every write about it must carry. */
export interface Claim {
  readonly run: RunRecord;
  readonly fence: Fence;
  /** When the lease expires (database clock). */
  readonly leaseExpiresAt: number;
  /**
   * The run's current checkpoint, resolved, when the store brings it with the claim (a server
   * store does for fresh runs): the worker starts the run without reading it. Optional.
   */
  readonly checkpoint?: MaterializedCheckpoint;
}

/**
 * What `claim` returns: the claims, and (as the non-enumerable `nextAt`) the earliest future
 * `notBefore` among queued runs of the requested plans, so an idle worker can set one timer for
 * a scheduled retry instead of polling. `null` or absent when there is none.
 */
export type ClaimList = Claim[] & {
  readonly nextAt?: number | null;
  /**
   * Non-enumerable too: `true` when the claim left no claimable run of the requested plans queued
   * and no tenant's running cap held one back, so until a `work` signal another claim would find
   * nothing (a run ending here frees no work). Absent or `false`: there may be more.
   */
  readonly drained?: boolean;
};

/** A submission. */
export interface SubmitInput {
  readonly tenantId: string;
  readonly planHash: string;
  /** The submitted session as checkpoint 0. */
  readonly checkpoint: CheckpointWrite;
  readonly priority?: number;
  readonly idempotencyKey?: string;
  /** SHA-256 over the canonical submission; must match when `idempotencyKey` is reused. */
  readonly fingerprint: string;
  /** Epoch milliseconds, or absent for none. */
  readonly deadline?: number;
  readonly metadata?: JsonObject;
  /** The trace the run continues (checked by the runtime); stored with the run. */
  readonly traceContext?: TraceContext;
  /** Not claimed before this time (epoch ms; default now). */
  readonly notBefore?: number;
  /**
   * A project inside the tenant (a label for scoping, such as an API token's project); absent or
   * `null` for none. Part of the run, not of its fingerprint.
   */
  readonly projectId?: string | null;
  /** Written in the same transaction as the new run (not when an earlier submission answers). */
  readonly audit?: AuditInput;
}

/** What a submission returns: the run, and whether this call created it. */
export interface SubmitResult {
  readonly run: RunRecord;
  /** `false` when an earlier submission with the same (tenant, idempotency key) created it. */
  readonly created: boolean;
}

/** Filters of `listRuns`. */
export interface ListRunsQuery {
  readonly tenantId: string;
  readonly status?: RunStatus | readonly RunStatus[];
  readonly sessionId?: string;
  readonly planHash?: string;
  /** Only runs of this project. */
  readonly projectId?: string;
  /**
   * `"asc"` (default): oldest first. `"desc"`: newest first, and `after` is then read in that
   * order (runs created before that run).
   */
  readonly order?: "asc" | "desc";
  /**
   * The last run of the previous page: return the runs past it in `order` (keyset pagination; ids
   * are time-ordered, so runs created meanwhile never shift a page).
   */
  readonly after?: string;
  /** 1..500, default 100. */
  readonly limit?: number;
}

/** A claim request. */
export interface ClaimRequest {
  readonly workerId: string;
  /** Only runs pinned to one of these plans are claimed. */
  readonly planHashes: readonly string[];
  readonly leaseMs: number;
  /** How many runs to claim at most (default 1). */
  readonly limit?: number;
}

/** What a heartbeat learned about each lease it renewed. */
export interface HeartbeatResult {
  /** Runs whose lease was renewed, with the new expiry. */
  readonly renewed: ReadonlyMap<string, number>;
  /** Runs whose lease is gone: expired, taken over, or the run left `running` (cancelled). */
  readonly lost: ReadonlyMap<string, { readonly status: RunStatus | null; readonly reason: string }>;
}

/** How a run ends. */
export interface FinishInput {
  readonly status: "succeeded" | "failed" | "timed_out" | "cancelled";
  readonly error?: RunErrorInfo;
  /** The final checkpoint, written in the same transaction (for `succeeded`). */
  readonly checkpoint?: CheckpointWrite;
}

/** Retention policy of one workflow: what to keep of its terminal runs. */
export interface RetentionPolicy {
  /** The workflow (plan name) it applies to. */
  readonly workflow: string;
  /** Keep at most this many checkpoints per terminal run (the latest ones). */
  readonly keepLastCheckpoints?: number;
  /** Delete terminal runs (with checkpoints and events) that ended more than this long ago. */
  readonly keepForMs?: number;
}

/** What `applyRetention` removed. */
export interface RetentionResult {
  readonly runsDeleted: number;
  readonly checkpointsDeleted: number;
  readonly chunksDeleted: number;
}

/** What `sweep` changed. */
export interface SweepResult {
  /** Running runs whose lease had expired, put back in the queue. */
  readonly requeued: number;
  /** Queued or parked runs past their deadline, ended `timed_out`. */
  readonly timedOut: number;
}
