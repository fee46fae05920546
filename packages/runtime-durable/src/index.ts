/**
 * `@openrath/runtime-durable`: durable runs of compiled plans. Workflows (a `DurableWorkflow`
 * subclass with `@step`/`@router` methods, or `defineWorkflow()`) compile into immutable,
 * content-hashed plans; runs survive crashes through checkpoints of chunk references, leases with
 * fencing and a gap-free event log, over a {@link RunStoreV1} (PostgreSQL or embedded PGlite in
 * `@openrath/store-postgres`).
 *
 * This entry is what applications write. What only a backend needs (the records a store writes,
 * the checkpoint codec, the rules of the journal's records) is `@openrath/runtime-durable/store`.
 */

export {
  type ArtifactGarbageReport,
  type CollectArtifactGarbageOptions,
  collectArtifactGarbage,
} from "./artifacts/collect-garbage.js";
export {
  type FilesystemArtifactStoreOptions,
  filesystemArtifactStore,
} from "./artifacts/filesystem-artifact-store.js";
export { type ArtifactOffloadOptions, withArtifactOffload } from "./artifacts/offloading-store.js";
export { type ReadArtifactOptions, readArtifact, readArtifactText } from "./artifacts/read-artifact.js";
export type { AuditInput, AuditOutcome, AuditRecord, TokenRecord } from "./contract/access.js";
export type { ArtifactErrorCode } from "./contract/artifact-error.js";
export { ArtifactError } from "./contract/artifact-error.js";
export type { ArtifactStoreV1 } from "./contract/artifact-store.js";
export type { Deployment, PlanRevision } from "./contract/deployments.js";
export { DurableError, type DurableErrorCode } from "./contract/durable-error.js";
export type {
  EffectRecord,
  EffectResolutionInput,
  EffectStatus,
  ListEffectsQuery,
} from "./contract/effect-records.js";
export type {
  DecisionInput,
  DecisionKind,
  InterruptKind,
  InterruptRecord,
  InterruptStatus,
  ListInterruptsQuery,
} from "./contract/interrupt-records.js";
export type { JournalTrace, Page } from "./contract/journal-records.js";
export type { RunErrorInfo, RunEvent, RunRecord, TraceContext } from "./contract/run-records.js";
export type { RunStoreV1 } from "./contract/run-store.js";
export type { ListSchedulesQuery, ScheduleRecord } from "./contract/schedules.js";
export type { SignalsV1 } from "./contract/signals.js";
export type { QueueCount, RunCount, StoreStatistics, StoreStatsV1 } from "./contract/stats.js";
export {
  ACTIVE_STATUSES,
  isTerminal,
  RUN_STATUSES,
  type RunStatus,
  TERMINAL_STATUSES,
} from "./contract/status.js";
export type {
  InterruptDecision,
  InterruptRequest,
  StepContext,
  StepLogger,
  StepMiddleware,
} from "./contract/step-context.js";
export type {
  DeliveryRecord,
  DeliveryStatus,
  WebhookEvent,
  WebhookRecord,
} from "./contract/webhooks.js";
export { WEBHOOK_EVENTS } from "./contract/webhooks.js";
export { defineWorkflow, WorkflowBuilder } from "./definition/builder.js";
export { type CompiledPlan, compilePlan, type PlanNode } from "./definition/compile.js";
export { router, step } from "./definition/decorators.js";
export { type DurableDefinitionSource, DurableWorkflow } from "./definition/durable-workflow.js";
export type {
  IsolatedStep,
  NodeDeclaration,
  RetryPolicy,
  RouterHandler,
  RouterOptions,
  StepHandler,
  StepOptions,
  WorkflowDefinition,
} from "./definition/types.js";
export { EffectOperations } from "./effects/effect-operations.js";
export { checkTraceContext, parseTraceContext } from "./internal/trace-context.js";
export { MAX_IDEMPOTENCY_KEY, MAX_METADATA_BYTES, MAX_TENANT_ID } from "./internal/validate.js";
export { InterruptOperations, type OperatorScope } from "./interrupts/interrupt-operations.js";
export type { StepJournal } from "./journal/journal-attempt.js";
export { journalOf } from "./journal/journal-middleware.js";
export {
  createDurableRuntime,
  DurableRuntime,
  type DurableRuntimeOptions,
  type ParkedRunDetails,
  type SubmitOptions,
  type TraceSubmission,
  type WaitOptions,
} from "./runtime.js";
export { firstFireTime, nextFireTime } from "./schedules/cron.js";
export { fireSchedules } from "./schedules/fire-schedules.js";
export {
  type NewSchedule,
  type ScheduleChange,
  ScheduleOperations,
} from "./schedules/schedule-operations.js";
export {
  type FollowedEvent,
  type FollowRunOptions,
  followRun,
  type LivePayload,
  type LiveRunEvent,
} from "./signals/follow-run.js";
export {
  deliveryBody,
  dispatchWebhooks,
  type WebhookDeliveryOptions,
} from "./webhooks/dispatch-webhooks.js";
export {
  signWebhook,
  type VerifyWebhookOptions,
  verifyWebhook,
  WEBHOOK_HEADERS,
} from "./webhooks/webhook-signature.js";
export { isInternalAddress, webhookTargetRefusal } from "./webhooks/webhook-target.js";
export type { IsolatedContext } from "./worker/isolated-executor.js";
export type { PeriodicJobOptions } from "./worker/periodic-jobs.js";
export { DurableWorker, type StopOptions, type WorkerOptions } from "./worker/worker.js";
export {
  type JsonLinesLogOptions,
  jsonLinesLog,
  type LogLevel,
  type WorkerLog,
} from "./worker/worker-log.js";
export type { WorkerEvent, WorkerObserver } from "./worker/worker-observer.js";
