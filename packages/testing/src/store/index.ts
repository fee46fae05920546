import type { RunStoreCapabilities, RunStoreV1 } from "@openrath/runtime-durable/store";
import { describe } from "vitest";
import { checkSkipKeys } from "../internal/skip-list.js";
import { accessSuite } from "./access.suite.js";
import { auditedMutationsSuite } from "./audited-mutations.suite.js";
import { capabilitiesSuite } from "./capabilities.suite.js";
import { checkpointsSuite } from "./checkpoints.suite.js";
import { claimsSuite } from "./claims.suite.js";
import { deploymentsSuite } from "./deployments.suite.js";
import { effectsSuite } from "./effects.suite.js";
import { eventsSuite } from "./events.suite.js";
import { interruptsSuite } from "./interrupts.suite.js";
import { journalSuite } from "./journal.suite.js";
import { leasesSuite } from "./leases.suite.js";
import { messageQueueSuite } from "./message-queue.suite.js";
import { projectsSuite } from "./projects.suite.js";
import { retentionSuite } from "./retention.suite.js";
import { schedulesSuite } from "./schedules.suite.js";
import { schedulingSuite } from "./scheduling.suite.js";
import { statsSuite } from "./stats.suite.js";
import { submissionSuite } from "./submission.suite.js";
import { createSuiteContext } from "./suite-context.js";
import { transitionsSuite } from "./transitions.suite.js";
import { webhooksSuite } from "./webhooks.suite.js";

export type { StoreSuiteContext } from "./suite-context.js";

/** Options of {@link describeStoreConformance}. */
export interface StoreConformanceOptions {
  /** Names the backend in the suite's title: `store conformance: <name>`. */
  readonly name: string;
  /** Opens a fresh, empty store (a new schema or database). Called once per test; closed after it. */
  readonly create: () => Promise<RunStoreV1>;
  /**
   * Opens a second handle on the store the latest `create` made, as another process would (its own
   * connections). Concurrency tests split their claimers and writers between the two.
   */
  readonly peer?: () => Promise<RunStoreV1>;
  /** The capabilities the backend claims (normally `store.capabilities`); the suite checks each one. */
  readonly capabilities: RunStoreCapabilities;
  /** Tests to skip with the reason: a group title, a test title, or `"<group> > <test>"`. Unknown keys fail. */
  readonly skip?: Readonly<Record<string, string>>;
  /** Per-test timeout in milliseconds (default 30 000). */
  readonly timeoutMs?: number;
}

/**
 * Registers the run-store conformance suite for one backend: capabilities; plans and idempotent
 * submission; the transition table and version compare-and-set; gap-free events under concurrent
 * writers; claim exclusivity, plan filtering, ordering and tenant caps; leases by the database
 * clock and fencing of every write; checkpoints (restore equality, deltas, dedupe across runs and
 * forks); retention and erasure; retry scheduling and deadlines; for stores with
 * `capabilities.deployments`, workflow names resolved through the store; runs' projects and the
 * listings filtered by them; for stores with `capabilities.schedules`, cron schedules fired exactly
 * once; for stores with `capabilities.webhooks`, webhook endpoints and the outbox written with
 * each run's end or park; for stores with `capabilities.messageQueue`, messages queued behind a
 * session's active run; for stores with `capabilities.access`, tokens, the audit log and the
 * audit records of mutations; and, for stores with `capabilities.journal`, the step journal, the
 * effect ledger and interrupts.
 *
 * @example
 * ```ts
 * // src/acme-store.conformance.test.ts
 * import { describeStoreConformance } from "@openrath/testing/store";
 * import { acmeStore } from "./acme-store.js";
 *
 * describeStoreConformance({
 *   name: "acme",
 *   create: () => acmeStore({ database: `test_${crypto.randomUUID()}` }),
 *   capabilities: { multiProcess: true, notifiesOnCommit: true, databaseClock: true, retention: true, tenantLimits: true },
 * });
 * ```
 */
export function describeStoreConformance(options: StoreConformanceOptions): void {
  const context = createSuiteContext(options);
  describe(`store conformance: ${options.name}`, () => {
    capabilitiesSuite(context);
    submissionSuite(context);
    transitionsSuite(context);
    eventsSuite(context);
    claimsSuite(context);
    leasesSuite(context);
    checkpointsSuite(context);
    retentionSuite(context);
    schedulingSuite(context);
    projectsSuite(context);
    if (context.capabilities.deployments) deploymentsSuite(context);
    if (context.capabilities.schedules) schedulesSuite(context);
    if (context.capabilities.webhooks) webhooksSuite(context);
    if (context.capabilities.messageQueue) messageQueueSuite(context);
    if (context.capabilities.stats) statsSuite(context);
    // Tokens, the audit log and the audit records of mutations, for stores that claim them.
    if (context.capabilities.access) {
      accessSuite(context);
      auditedMutationsSuite(context);
    }
    // The step journal, the effect ledger and interrupts, for stores that claim them.
    if (context.capabilities.journal) {
      journalSuite(context);
      effectsSuite(context);
      interruptsSuite(context);
    }

    checkSkipKeys(options.skip, context);
  });
}
