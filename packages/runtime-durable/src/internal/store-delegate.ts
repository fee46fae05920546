import type { AccessStoreV1 } from "../contract/access.js";
import type { DeploymentsV1 } from "../contract/deployments.js";
import type { ClaimOnSubmitV1, GroupCommitV1, NewSessionSubmitV1 } from "../contract/fast-paths.js";
import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { MessageQueueV1 } from "../contract/message-queue.js";
import type {
  CheckpointWrite,
  Claim,
  ClaimList,
  ClaimRequest,
  EventInput,
  Fence,
  FinishInput,
  HeartbeatResult,
  ListRunsQuery,
  MaterializedCheckpoint,
  PlanRecord,
  RetentionPolicy,
  RetentionResult,
  RunErrorInfo,
  RunEvent,
  RunRecord,
  SubmitInput,
  SubmitResult,
  SweepResult,
} from "../contract/run-records.js";
import type { RunStoreCapabilities, RunStoreV1, SubmitHooks } from "../contract/run-store.js";
import type { SchedulesV1 } from "../contract/schedules.js";
import type { SignalsV1 } from "../contract/signals.js";
import type { StoreStatsV1 } from "../contract/stats.js";
import type { WebhooksV1 } from "../contract/webhooks.js";

/**
 * A {@link RunStoreV1} that hands every member to `inner`, for store wrappers to extend: a wrapper
 * overrides the members it changes. Optional members are present exactly when `inner` has them.
 */
export class StoreDelegate implements RunStoreV1 {
  readonly specVersion = "v1";
  declare readonly referencedArtifacts?: (tenantId: string) => Promise<ReadonlySet<string>>;
  declare readonly groupCommit?: GroupCommitV1;
  declare readonly newSessionSubmit?: NewSessionSubmitV1;
  declare readonly claimOnSubmit?: ClaimOnSubmitV1;
  declare readonly deployments?: DeploymentsV1;
  declare readonly journal?: JournalStoreV1;
  declare readonly access?: AccessStoreV1;
  declare readonly schedules?: SchedulesV1;
  declare readonly webhooks?: WebhooksV1;
  declare readonly messageQueue?: MessageQueueV1;
  declare readonly stats?: StoreStatsV1;

  constructor(protected readonly inner: RunStoreV1) {
    const {
      referencedArtifacts,
      groupCommit,
      newSessionSubmit,
      claimOnSubmit,
      deployments,
      journal,
      access,
      schedules,
      webhooks,
      messageQueue,
      stats,
    } = inner;
    if (referencedArtifacts)
      this.referencedArtifacts = (tenantId) => referencedArtifacts.call(inner, tenantId);
    if (groupCommit) this.groupCommit = groupCommit;
    if (newSessionSubmit) this.newSessionSubmit = newSessionSubmit;
    if (claimOnSubmit) this.claimOnSubmit = claimOnSubmit;
    if (deployments) this.deployments = deployments;
    if (journal) this.journal = journal;
    if (access) this.access = access;
    if (schedules) this.schedules = schedules;
    if (webhooks) this.webhooks = webhooks;
    if (messageQueue) this.messageQueue = messageQueue;
    if (stats) this.stats = stats;
  }

  get name(): string {
    return this.inner.name;
  }
  get capabilities(): RunStoreCapabilities {
    return this.inner.capabilities;
  }
  get signals(): SignalsV1 {
    return this.inner.signals;
  }

  now(): Promise<number> {
    return this.inner.now();
  }
  registerPlan(plan: PlanRecord): Promise<void> {
    return this.inner.registerPlan(plan);
  }
  getPlan(hash: string): Promise<PlanRecord | undefined> {
    return this.inner.getPlan(hash);
  }
  submit(input: SubmitInput, hooks?: SubmitHooks): Promise<SubmitResult> {
    return this.inner.submit(input, hooks);
  }
  getRun(runId: string, tenantId?: string): Promise<RunRecord | undefined> {
    return this.inner.getRun(runId, tenantId);
  }
  listRuns(query: ListRunsQuery): Promise<RunRecord[]> {
    return this.inner.listRuns(query);
  }
  claim(request: ClaimRequest): Promise<ClaimList> {
    return this.inner.claim(request);
  }
  reclaim(request: Omit<ClaimRequest, "limit">): Promise<Claim[]> {
    return this.inner.reclaim(request);
  }
  heartbeat(fences: readonly Fence[], leaseMs: number): Promise<HeartbeatResult> {
    return this.inner.heartbeat(fences, leaseMs);
  }
  loadCheckpoint(runId: string, sequence?: number): Promise<MaterializedCheckpoint | undefined> {
    return this.inner.loadCheckpoint(runId, sequence);
  }
  findSessionHead(
    tenantId: string,
    sessionIds: readonly string[],
  ): Promise<MaterializedCheckpoint | undefined> {
    return this.inner.findSessionHead(tenantId, sessionIds);
  }
  commitStep(fence: Fence, checkpoint: CheckpointWrite, expectedVersion?: number): Promise<RunRecord> {
    return this.inner.commitStep(fence, checkpoint, expectedVersion);
  }
  finish(fence: Fence, input: FinishInput): Promise<RunRecord> {
    return this.inner.finish(fence, input);
  }
  scheduleRetry(
    fence: Fence,
    input: { readonly delayMs: number; readonly error: RunErrorInfo },
  ): Promise<RunRecord> {
    return this.inner.scheduleRetry(fence, input);
  }
  release(fence: Fence): Promise<RunRecord> {
    return this.inner.release(fence);
  }
  park(
    fence: Fence,
    input: {
      readonly status: "waiting" | "needs_review";
      readonly reason: string;
      readonly data?: EventInput["data"];
    },
  ): Promise<RunRecord> {
    return this.inner.park(fence, input);
  }
  unpark(runId: string, input: { readonly actor: string; readonly reason: string }): Promise<RunRecord> {
    return this.inner.unpark(runId, input);
  }
  cancel(runId: string, input?: { readonly reason?: string; readonly actor?: string }): Promise<RunRecord> {
    return this.inner.cancel(runId, input);
  }
  appendEvent(fence: Fence, event: EventInput): Promise<number> {
    return this.inner.appendEvent(fence, event);
  }
  readEvents(
    runId: string,
    options?: { readonly after?: number; readonly limit?: number },
  ): Promise<RunEvent[]> {
    return this.inner.readEvents(runId, options);
  }
  sweep(): Promise<SweepResult> {
    return this.inner.sweep();
  }
  setTenantLimit(tenantId: string, maxRunning: number | null): Promise<void> {
    return this.inner.setTenantLimit(tenantId, maxRunning);
  }
  applyRetention(policies: readonly RetentionPolicy[]): Promise<RetentionResult> {
    return this.inner.applyRetention(policies);
  }
  eraseSession(tenantId: string, sessionId: string): Promise<RetentionResult> {
    return this.inner.eraseSession(tenantId, sessionId);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
