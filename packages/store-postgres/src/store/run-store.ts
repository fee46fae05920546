import {
  type AccessStoreV1,
  type ClaimOnSubmitV1,
  type DeploymentsV1,
  DurableError,
  type GroupCommitV1,
  type JournalStoreV1,
  type MessageQueueV1,
  type NewSessionSubmitV1,
  type RunRecord,
  type RunStoreCapabilities,
  type RunStoreV1,
  type SchedulesV1,
  type SignalsV1,
  type StoreStatsV1,
  type WebhooksV1,
} from "@openrath/runtime-durable/store";
import { sql } from "kysely";
import { accessStore } from "./access.js";
import { checkAudit } from "./access-inputs.js";
import { referencedArtifacts } from "./artifact-references.js";
import { Batcher } from "./batcher.js";
import { findSessionHead, loadCheckpoint } from "./checkpoints.js";
import { mapDriverError, type StoreContext, tables } from "./context.js";
import { readEvents } from "./events.js";
import { FINISH_BATCH, type FinishItem, finishRuns } from "./finish.js";
import { isUuid } from "./ids.js";
import { expireInterrupts } from "./interrupts.js";
import { journalStore } from "./journal-store.js";
import { messageQueueStore } from "./message-queue.js";
import { deploymentsOf, getPlan, registerPlan } from "./plans.js";
import { applyRetention, eraseSession } from "./retention.js";
import { claimRuns, getRun, heartbeat, listRuns, reclaimRuns } from "./runs.js";
import { schedulesStore } from "./schedules.js";
import { statsStore } from "./stats.js";
import {
  checkClaim,
  checkSubmission,
  SUBMIT_BATCH,
  type SubmitItem,
  type SubmitOutcome,
  submitRuns,
} from "./submit.js";
import {
  appendEvent,
  cancelRun,
  commitSteps,
  parkRun,
  releaseRun,
  scheduleRetry,
  sweep,
  unparkRun,
} from "./transitions.js";
import { webhooksStore } from "./webhooks.js";

/** A {@link RunStoreV1} over Kysely: the same SQL for PostgreSQL and PGlite. */
export class KyselyRunStore implements RunStoreV1 {
  readonly specVersion = "v1" as const;
  private closed = false;
  /** The step journal, effect ledger and interrupts (capability `journal`). */
  readonly journal: JournalStoreV1;
  /** Workflow names resolved through the store (capability `deployments`). */
  readonly deployments: DeploymentsV1;
  /** API tokens and the audit log (capability `access`). */
  readonly access: AccessStoreV1;
  /** Cron schedules (capability `schedules`). */
  readonly schedules: SchedulesV1;
  /** Webhook endpoints and their outbox (capability `webhooks`). */
  readonly webhooks: WebhooksV1;
  /** Messages queued behind a session's active run (capability `messageQueue`). */
  readonly messageQueue: MessageQueueV1;
  /** Store-wide counts for monitoring (capability `stats`). */
  readonly stats: StoreStatsV1;

  constructor(
    readonly name: string,
    readonly capabilities: RunStoreCapabilities,
    readonly signals: SignalsV1,
    private readonly c: StoreContext,
    private readonly onClose: () => Promise<void>,
    journalDurability: "relaxed" | "strict" = "relaxed",
  ) {
    this.journal = journalStore(c, (work) => this.run(work), journalDurability);
    this.deployments = deploymentsOf(c, (work) => this.run(work));
    this.access = accessStore(c, (work) => this.run(work));
    this.schedules = schedulesStore(c, (work) => this.run(work));
    this.webhooks = webhooksStore(c, (work) => this.run(work));
    this.messageQueue = messageQueueStore(c, (work) => this.run(work));
    this.stats = statsStore(c, (work) => this.run(work));
    // Runs that end while another end is being written share the next statement (group commit).
    this.finishes = new Batcher<FinishItem, RunRecord>(
      (items) => finishRuns(c, items),
      FINISH_BATCH,
      c.multiProcess ? 2 : 1,
    );
    // Likewise submissions: one insert statement and, on a server, one WAL flush for those that queue.
    this.submissions = new Batcher<SubmitItem, SubmitOutcome>(
      (items) => submitRuns(c, items),
      SUBMIT_BATCH,
      c.multiProcess ? 2 : 1,
    );
  }

  private readonly finishes: Batcher<FinishItem, RunRecord>;
  private readonly submissions: Batcher<SubmitItem, SubmitOutcome>;

  private async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new DurableError("store_unavailable", `The ${this.name} store is closed.`);
    try {
      return await work();
    } catch (error) {
      throw mapDriverError(error);
    }
  }

  async now() {
    return this.run(async () => {
      const r = await this.c.db.selectNoFrom(sql<Date>`now()`.as("now")).executeTakeFirstOrThrow();
      return new Date(r.now).getTime();
    });
  }

  registerPlan: RunStoreV1["registerPlan"] = (plan) => this.run(() => registerPlan(this.c, plan));
  getPlan: RunStoreV1["getPlan"] = (hash) => this.run(() => getPlan(this.c, hash));

  submit: RunStoreV1["submit"] = (input, hooks) =>
    this.run(async () => {
      checkSubmission(input);
      return (await this.submissions.call({ input, ...(hooks ? { hooks } : {}) }))!;
    });
  /** A new session's submission in one statement (capability `newSessionSubmit`). */
  readonly newSessionSubmit: NewSessionSubmitV1 = {
    specVersion: "v1",
    submitIfNew: (input, sessionIds, hooks) =>
      this.run(async () => {
        checkSubmission(input);
        return this.submissions.call({ input, unlessHeads: sessionIds, ...(hooks ? { hooks } : {}) });
      }),
  };
  /** Submissions that create their run claimed for a worker (capability `claimOnSubmit`). */
  readonly claimOnSubmit: ClaimOnSubmitV1 = {
    specVersion: "v1",
    submit: (input, claim, hooks) =>
      this.run(async () => {
        checkSubmission(input);
        checkClaim(claim);
        return (await this.submissions.call({ input, claim, ...(hooks ? { hooks } : {}) }))!;
      }),
    submitIfNew: (input, sessionIds, claim, hooks) =>
      this.run(async () => {
        checkSubmission(input);
        checkClaim(claim);
        return this.submissions.call({ input, unlessHeads: sessionIds, claim, ...(hooks ? { hooks } : {}) });
      }),
  };
  getRun: RunStoreV1["getRun"] = (runId, tenantId) => this.run(() => getRun(this.c, runId, tenantId));
  listRuns: RunStoreV1["listRuns"] = (query) => this.run(() => listRuns(this.c, query));
  claim: RunStoreV1["claim"] = (request) => this.run(() => claimRuns(this.c, request));
  reclaim: RunStoreV1["reclaim"] = (request) => this.run(() => reclaimRuns(this.c, request));
  heartbeat: RunStoreV1["heartbeat"] = (fences, leaseMs) =>
    this.run(() => heartbeat(this.c, fences, leaseMs));
  loadCheckpoint: RunStoreV1["loadCheckpoint"] = (runId, sequence) =>
    this.run(() => loadCheckpoint(this.c, runId, sequence));
  findSessionHead: RunStoreV1["findSessionHead"] = (tenantId, ids) =>
    this.run(() => findSessionHead(this.c, tenantId, ids));
  commitStep: RunStoreV1["commitStep"] = (fence, write, version) =>
    this.run(() => commitSteps(this.c, fence, [write], version));
  /** Step commits in batches (capability `groupCommit`). */
  readonly groupCommit: GroupCommitV1 = {
    specVersion: "v1",
    commitSteps: (fence, writes) => this.run(() => commitSteps(this.c, fence, writes)),
  };
  finish: RunStoreV1["finish"] = (fence, input) => this.run(() => this.finishes.call({ fence, input }));
  scheduleRetry: RunStoreV1["scheduleRetry"] = (fence, input) =>
    this.run(() => scheduleRetry(this.c, fence, input));
  release: RunStoreV1["release"] = (fence) => this.run(() => releaseRun(this.c, fence));
  park: RunStoreV1["park"] = (fence, input) => this.run(() => parkRun(this.c, fence, input));
  unpark: RunStoreV1["unpark"] = (runId, input) =>
    this.run(async () => {
      if (input.audit !== undefined) checkAudit(input.audit);
      return unparkRun(this.c, runId, input);
    });
  cancel: RunStoreV1["cancel"] = (runId, input) =>
    this.run(async () => {
      if (input?.audit !== undefined) checkAudit(input.audit);
      return cancelRun(this.c, runId, input);
    });
  appendEvent: RunStoreV1["appendEvent"] = (fence, event) =>
    this.run(() => appendEvent(this.c, fence, event));
  sweep: RunStoreV1["sweep"] = () =>
    this.run(async () => {
      const swept = await sweep(this.c);
      // Interrupts past their timeout: a default decision requeues the run, none ends it timed_out.
      const expired = await expireInterrupts(this.c);
      return { requeued: swept.requeued + expired.decided, timedOut: swept.timedOut + expired.timedOut };
    });
  applyRetention: RunStoreV1["applyRetention"] = (policies) =>
    this.run(() => applyRetention(this.c, policies));
  eraseSession: RunStoreV1["eraseSession"] = (tenantId, sessionId) =>
    this.run(() => eraseSession(this.c, tenantId, sessionId));
  referencedArtifacts = (tenantId: string) => this.run(() => referencedArtifacts(this.c, tenantId));

  readEvents: RunStoreV1["readEvents"] = (runId, options = {}) =>
    this.run(async () => {
      if (!isUuid(runId)) return [];
      const after = options.after ?? 0;
      const limit = Math.min(Math.max(options.limit ?? 1000, 1), 10_000);
      return readEvents(this.c, runId, after, limit);
    });

  setTenantLimit: RunStoreV1["setTenantLimit"] = (tenantId, maxRunning) =>
    this.run(async () => {
      if (maxRunning === null) {
        await tables(this.c).deleteFrom("tenant_limits").where("tenant_id", "=", tenantId).execute();
        return;
      }
      if (!Number.isInteger(maxRunning) || maxRunning < 1) {
        throw new DurableError(
          "invalid_argument",
          `A tenant's running cap must be an integer ≥ 1 (or null for none), got ${maxRunning}.`,
        );
      }
      await tables(this.c)
        .insertInto("tenant_limits")
        .values({ tenant_id: tenantId, max_running: maxRunning })
        .onConflict((oc) =>
          oc.column("tenant_id").doUpdateSet((eb) => ({ max_running: eb.ref("excluded.max_running") })),
        )
        .execute();
    });

  async close() {
    if (this.closed) return;
    this.closed = true;
    await this.signals.close().catch(() => {});
    await this.onClose();
  }
}
