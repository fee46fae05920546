/**
 * `@openrath/runtime-durable`: durable runs of compiled plans. Workflows (a `DurableWorkflow`
 * subclass with `@step`/`@router` methods, or `defineWorkflow()`) compile into immutable,
 * content-hashed plans; runs survive crashes through checkpoints of chunk references, leases with
 * fencing and a gap-free event log, over a {@link RunStoreV1} (PostgreSQL or embedded PGlite in
 * `@openrath/store-postgres`).
 */

// The artifact store contract, its filesystem implementation and the helpers adapters share (issue 14).
export * from "./artifacts/index.js";
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
} from "./checkpoint-codec.js";
export type { Deployment, DeploymentsV1, PlanRevision } from "./contract/deployments.js";
export { DurableError, type DurableErrorCode } from "./contract/durable-error.js";
export type {
  CheckpointRef,
  CheckpointWrite,
  ChunkOp,
  Claim,
  ClaimList,
  ClaimRequest,
  EventInput,
  Fence,
  FinishInput,
  HeartbeatResult,
  ListRunsQuery,
  MaterializedCheckpoint,
  PlacementJSON,
  PlanRecord,
  RetentionPolicy,
  RetentionResult,
  RunErrorInfo,
  RunEvent,
  RunRecord,
  SubmitInput,
  SweepResult,
} from "./contract/run-records.js";
export { PREVIOUS_CHECKPOINT } from "./contract/run-records.js";
export type { RunStoreCapabilities, RunStoreV1, SubmitHooks } from "./contract/run-store.js";
export {
  type Signal,
  type SignalsCapabilities,
  type SignalsV1,
  type SignalTopic,
  topicOf,
} from "./contract/signals.js";
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
export type {
  InterruptDecision,
  InterruptRequest,
  StepContext,
  StepLogger,
  StepMiddleware,
} from "./contract/step-context.js";
export { defineWorkflow, WorkflowBuilder } from "./definition/builder.js";
export { type CompiledPlan, compilePlan, type PlanNode, retryDelayMs } from "./definition/compile.js";
export { router, step } from "./definition/decorators.js";
export {
  type DurableDefinitionSource,
  DurableWorkflow,
  definitionOf,
} from "./definition/durable-workflow.js";
export { runPlanInMemory } from "./definition/run-in-memory.js";
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
export { canonicalJson, sha256 } from "./internal/canonical.js";
export {
  MAX_IDEMPOTENCY_KEY,
  MAX_METADATA_BYTES,
  MAX_TENANT_ID,
} from "./internal/validate.js";
// The step journal, the effect ledger and interrupts (issue 13).
export * from "./journal/index.js";
export {
  createDurableRuntime,
  DurableRuntime,
  type DurableRuntimeOptions,
  type ParkedRunDetails,
  type SubmitOptions,
  type WaitOptions,
} from "./runtime.js";
export {
  type FollowedEvent,
  type FollowRunOptions,
  followRun,
  type LivePayload,
  type LiveRunEvent,
} from "./signals/follow-run.js";
export { HeardRuns } from "./signals/heard-runs.js";
export { inProcessSignals } from "./signals/in-process-signals.js";
export { publishCommits } from "./signals/publishing-store.js";
export type { IsolatedContext } from "./worker/isolated-executor.js";
export { DurableWorker, type StopOptions, type WorkerOptions } from "./worker/worker.js";
export {
  type JsonLinesLogOptions,
  jsonLinesLog,
  type LogLevel,
  type WorkerLog,
} from "./worker/worker-log.js";
