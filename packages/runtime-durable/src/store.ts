/**
 * `@openrath/runtime-durable/store`: what a backend of the durable runtime implements and the
 * helpers its implementations share. The contracts (`RunStoreV1` with its capabilities,
 * `JournalStoreV1`, `DeploymentsV1`, `SignalsV1`, `ArtifactStoreV1`) and every record they take
 * and return; the transition table stores encode in their guards; the checkpoint format (chunk-list
 * deltas against a base, and the compressed body a store keeps per checkpoint); the rules of the
 * journal's records; in-process signals; the artifact ids, sources and stream verification.
 * `@openrath/testing` proves an implementation.
 *
 * Applications import `@openrath/runtime-durable`; a store imports this entry.
 *
 * @example
 * ```ts
 * import { DurableError, type RunStoreV1, sourcesOf } from "@openrath/runtime-durable/store";
 *
 * class AcmeStore implements RunStoreV1 {
 *   // … each state change is an UPDATE guarded by `status in (sourcesOf(target))`
 * }
 * ```
 */

export {
  artifactUri,
  checkDigest,
  checkTenant,
  DIGEST_PATTERN,
  EMPTY_DIGEST,
  parseArtifactUri,
  TENANT_PATTERN,
} from "./artifacts/artifact-id.js";
export {
  type ArtifactSource,
  type ArtifactSourceOptions,
  createArtifactSource,
  digestOf,
} from "./artifacts/artifact-source.js";
export type { ArtifactReferenceSource } from "./artifacts/collect-garbage.js";
export { DEFAULT_SWEEP_AGE_MS } from "./artifacts/filesystem-artifact-store.js";
export { OFFLOADED_KEY, type OffloadedString, offloadedArtifacts } from "./artifacts/offload.js";
export { type VerifyArtifactStreamOptions, verifyArtifactStream } from "./artifacts/verify-stream.js";
export {
  type BodyContent,
  type ChainContext,
  type CheckpointBody,
  contextAfter,
  contextOf,
  decodeBody,
  encodeBody,
  needsContext,
  packOps,
} from "./checkpoint/body-codec.js";
export {
  applyChunkOps,
  baseOf,
  CHAIN_GROWTH_LIMIT,
  CHAIN_SLACK_CHUNKS,
  type CheckpointBase,
  corrupt,
  encodeCheckpoint,
  isChunkRange,
  MAX_CHAIN_DEPTH,
  restoreSession,
} from "./checkpoint/delta-codec.js";
export type {
  AccessStoreV1,
  Audited,
  AuditInput,
  AuditOutcome,
  AuditRecord,
  CreateTokenInput,
  ListAuditQuery,
  TokenRecord,
} from "./contract/access.js";
export {
  ArtifactError,
  type ArtifactErrorCode,
  type ArtifactErrorOptions,
} from "./contract/artifact-error.js";
export type {
  ArtifactBody,
  ArtifactCapabilities,
  ArtifactGetOptions,
  ArtifactInfo,
  ArtifactListOptions,
  ArtifactPutOptions,
  ArtifactStat,
  ArtifactStoreV1,
  ArtifactSweepOptions,
} from "./contract/artifact-store.js";
export type { Deployment, DeploymentsV1, PlanRevision } from "./contract/deployments.js";
export { DurableError, type DurableErrorCode } from "./contract/durable-error.js";
export {
  EFFECT_STATUSES,
  type EffectInput,
  type EffectRecord,
  type EffectResolution,
  type EffectResolutionInput,
  type EffectStatus,
  type LedgeredEffectClass,
  type ListEffectsQuery,
} from "./contract/effect-records.js";
export type {
  ClaimOnSubmitV1,
  GroupCommitV1,
  NewSessionSubmitV1,
  SubmitClaim,
} from "./contract/fast-paths.js";
export {
  DECISION_KINDS,
  type DecisionInput,
  type DecisionKind,
  type DecisionRecord,
  INTERRUPT_KINDS,
  type InterruptInput,
  type InterruptKind,
  type InterruptRecord,
  type InterruptStatus,
  type JournaledInterrupt,
  type ListInterruptsQuery,
} from "./contract/interrupt-records.js";
export type {
  JournalEntry,
  JournalEntryInput,
  JournalKind,
  JournalTrace,
  Page,
  StepJournalState,
} from "./contract/journal-records.js";
export type { JournalStoreV1 } from "./contract/journal-store.js";
export {
  type EnqueueInput,
  type MessageQueueV1,
  type QueuedMessage,
  type QueuedMessageStatus,
  queuedMessageKey,
} from "./contract/message-queue.js";
export {
  type CheckpointRef,
  type CheckpointWrite,
  type ChunkOp,
  type Claim,
  type ClaimList,
  type ClaimRequest,
  type EventInput,
  type Fence,
  type FinishInput,
  type HeartbeatResult,
  type ListRunsQuery,
  type MaterializedCheckpoint,
  type PlacementJSON,
  type PlanRecord,
  PREVIOUS_CHECKPOINT,
  type RetentionPolicy,
  type RetentionResult,
  type RunErrorInfo,
  type RunEvent,
  type RunRecord,
  type SubmitInput,
  type SubmitResult,
  type SweepResult,
  type TraceContext,
} from "./contract/run-records.js";
export type { RunStoreCapabilities, RunStoreV1, SubmitHooks } from "./contract/run-store.js";
export {
  type CreateScheduleInput,
  type FireResult,
  type FiringPlan,
  type ListSchedulesQuery,
  type ScheduleFiring,
  type ScheduleRecord,
  type SchedulesV1,
  scheduleIdempotencyKey,
  type UpdateScheduleInput,
} from "./contract/schedules.js";
export {
  type HeardRunsV1,
  type Signal,
  type SignalsCapabilities,
  type SignalsV1,
  type SignalTopic,
  topicOf,
} from "./contract/signals.js";
export type { QueueCount, RunCount, StoreStatistics, StoreStatsV1 } from "./contract/stats.js";
export {
  ACTIVE_STATUSES,
  assertTransition,
  canTransition,
  isTerminal,
  RUN_STATUSES,
  type RunStatus,
  sourcesOf,
  TERMINAL_STATUSES,
  TRANSITIONS,
} from "./contract/status.js";
export type { InterruptDecision, InterruptRequest } from "./contract/step-context.js";
export {
  type AttemptOutcome,
  type CreateWebhookInput,
  type DeliveryRecord,
  type DeliveryStatus,
  type DueDelivery,
  type ListDeliveriesQuery,
  WEBHOOK_EVENTS,
  type WebhookEvent,
  type WebhookRecord,
  type WebhooksV1,
} from "./contract/webhooks.js";
export { checkResolution, resolutionOutcome, safeToRepeat } from "./effects/effect-rules.js";
export { canonicalJson, sha256 } from "./internal/canonical.js";
export { checkDecision } from "./interrupts/interrupt-schema.js";
export { HeardRuns } from "./signals/heard-runs.js";
export { inProcessSignals } from "./signals/in-process-signals.js";
