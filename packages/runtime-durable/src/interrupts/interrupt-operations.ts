import type { Audited } from "../contract/access.js";
import type { DecisionInput, InterruptRecord, ListInterruptsQuery } from "../contract/interrupt-records.js";
import type { Page } from "../contract/journal-records.js";
import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { RunRecord } from "../contract/run-records.js";

/** Scope of an operator call: the tenant whose objects it may see (default: the runtime's). */
export interface OperatorScope {
  readonly tenantId?: string;
}

/**
 * The interrupt inbox of a runtime (`runtime.interrupts`): what operators (the CLI, the Agent
 * Server, Studio) list and decide. Every call is scoped to one tenant: another tenant's interrupt
 * is not found.
 *
 * @example
 * ```ts
 * const { items } = await runtime.interrupts.list();
 * await runtime.interrupts.decide(items[0].id, { kind: "approve", actor: "ana", reason: "looks right" });
 * ```
 */
export class InterruptOperations {
  constructor(
    private readonly journal: () => JournalStoreV1,
    private readonly tenantId: string,
  ) {}

  /** Pending interrupts (or `status`), oldest first; pass `nextCursor` back as `cursor` for the next page. */
  async list(query: Partial<ListInterruptsQuery> = {}): Promise<Page<InterruptRecord>> {
    return this.journal().listInterrupts({ ...query, tenantId: query.tenantId ?? this.tenantId });
  }

  /** The interrupt, or `undefined`. */
  async get(interruptId: string, scope: OperatorScope = {}): Promise<InterruptRecord | undefined> {
    return this.journal().getInterrupt(interruptId, scope.tenantId ?? this.tenantId);
  }

  /**
   * Decides a pending interrupt and resumes its run (it continues exactly where it asked). An
   * `audit` record is written with the decision, in its transaction, on a store with `access`.
   *
   * @throws {DurableError} `interrupt_not_found`, `interrupt_decided`, `invalid_decision`,
   *   `invalid_transition` — in every case nothing changes.
   */
  async decide(
    interruptId: string,
    decision: DecisionInput,
    scope: OperatorScope & Audited = {},
  ): Promise<{ readonly interrupt: InterruptRecord; readonly run: RunRecord }> {
    const audited = scope.audit === undefined ? undefined : { audit: scope.audit };
    return this.journal().decideInterrupt(interruptId, decision, scope.tenantId ?? this.tenantId, audited);
  }
}
