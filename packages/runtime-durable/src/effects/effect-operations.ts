import type { Audited } from "../contract/access.js";
import type { EffectRecord, EffectResolutionInput, ListEffectsQuery } from "../contract/effect-records.js";
import type { Page } from "../contract/journal-records.js";
import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { RunRecord } from "../contract/run-records.js";
import type { OperatorScope } from "../interrupts/interrupt-operations.js";

/**
 * The effect ledger of a runtime (`runtime.effects`) as operators see it: the effects under review
 * (ambiguous calls a crash left unfinished that are not safe to repeat), and their resolution one
 * by one. A run parked `needs_review` resumes when none of its effects is left under review.
 *
 * @example
 * ```ts
 * const { items } = await runtime.effects.list({ runId });
 * await runtime.effects.resolve(items[0].id, { kind: "succeeded", result: { id: "msg-17" }, actor: "ana" });
 * ```
 */
export class EffectOperations {
  constructor(
    private readonly journal: () => JournalStoreV1,
    private readonly tenantId: string,
  ) {}

  /** Effects under review (or `status`), oldest first; pass `nextCursor` back as `cursor`. */
  async list(query: Partial<ListEffectsQuery> = {}): Promise<Page<EffectRecord>> {
    return this.journal().listEffects({ ...query, tenantId: query.tenantId ?? this.tenantId });
  }

  /** The effect, or `undefined`. */
  async get(effectId: string, scope: OperatorScope = {}): Promise<EffectRecord | undefined> {
    return this.journal().getEffect(effectId, scope.tenantId ?? this.tenantId);
  }

  /**
   * Resolves an effect under review: `succeeded` with the result the outside world shows,
   * `failed` with a reason, or `retry` approved. Recorded as a `run.effect.resolved` event; the
   * resumed step shows it in its tool result and an `effect.resolved` event chunk.
   *
   * @throws {DurableError} `effect_not_found`, `effect_not_under_review`, `invalid_argument` —
   *   in every case nothing changes.
   */
  async resolve(
    effectId: string,
    resolution: EffectResolutionInput,
    scope: OperatorScope & Audited = {},
  ): Promise<{ readonly effect: EffectRecord; readonly run: RunRecord }> {
    const audited = scope.audit === undefined ? undefined : { audit: scope.audit };
    return this.journal().resolveEffect(effectId, resolution, scope.tenantId ?? this.tenantId, audited);
  }
}
