/**
 * The metric names and attribute keys `openrathMetrics` records (ADR 0033). Attribute values are
 * bounded: workflow names, step ids, statuses, tenant ids and model names, never run ids.
 */
export const METRIC = {
  /** Runs in the store by workflow and status (observable gauge). */
  runs: "openrath.runs",
  /** Queued runs that are due, by workflow (observable gauge). */
  queueDepth: "openrath.queue.depth",
  /** Seconds since the oldest due queued run became due, by workflow; 0 with none (observable gauge). */
  queueOldestAge: "openrath.queue.oldest_due_age",
  /** Effects parked for an operator (observable gauge). */
  effectsUnderReview: "openrath.effects.under_review",
  /** Interrupts waiting for a decision (observable gauge). */
  interruptsOpen: "openrath.interrupts.open",
  /** The round trip of each claim a worker sends to the store, by outcome (histogram, seconds). */
  claimDuration: "openrath.worker.claim.duration",
  /** Runs workers claimed, by how (`claim` or `submit`) (counter). */
  runsClaimed: "openrath.worker.runs.claimed",
  /** Leases a worker learnt it lost, by workflow (counter). */
  leasesLost: "openrath.worker.leases.lost",
  /** Runs whose lease expired in the database, requeued by a worker's sweep (counter). */
  leasesExpired: "openrath.worker.leases.expired",
  /** Runs a restarted worker identity took back at start (counter). */
  runsReclaimed: "openrath.worker.runs.reclaimed",
  /** Each step attempt's duration, by workflow, step and outcome (histogram, seconds). */
  stepDuration: "openrath.step.duration",
  /** Model and tool calls answered from the journal, by workflow and kind (counter). */
  journalHits: "openrath.journal.hits",
  /** Tokens of model calls made live (not journal hits), by tenant, workflow, model and type (counter). */
  tokens: "openrath.tokens",
  /** Cost in US dollars of live model calls, by tenant, workflow and model, with a price table (counter). */
  cost: "openrath.cost",
} as const;

/** The attribute keys. */
export const ATTR = {
  workflow: "openrath.workflow",
  status: "openrath.run.status",
  step: "openrath.step",
  outcome: "openrath.outcome",
  via: "openrath.claim.via",
  kind: "openrath.journal.kind",
  tenant: "openrath.tenant",
  model: "gen_ai.request.model",
  tokenType: "gen_ai.token.type",
} as const;
