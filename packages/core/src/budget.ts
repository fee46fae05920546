import { OpenRathError } from "./errors.js";
import type { Session } from "./session.js";
import { addUsage, costOf, type PriceTable, type Usage, ZERO_USAGE } from "./usage.js";

/** Limits of a {@link Budget}. Each is optional; none set means unlimited. */
export interface BudgetLimits {
  /** Most total tokens (prompt + completion). */
  readonly maxTokens?: number;
  /** Most cost in US dollars; needs `prices`. */
  readonly maxCostUsd?: number;
  /** Prices per model for `maxCostUsd`; models missing from it cost nothing. */
  readonly prices?: PriceTable;
}

/**
 * Thrown (code `budget_exceeded`) when a model call would start over budget. `session` is the
 * transcript so far, ending with a `budget.exceeded` event chunk that records the limit and use.
 */
export class BudgetExceededError extends OpenRathError {
  constructor(
    message: string,
    /** The session as it stood, with the `budget.exceeded` event appended. */
    readonly session: Session,
    details: Record<string, unknown>,
  ) {
    super("budget_exceeded", message, { details });
  }
}

/**
 * A token and cost allowance shared by everything that charges it: pass one Budget to several
 * agents, or to `workflow.run(session, { budget })`, and every model call in every fork counts
 * against the same total. Checked before each call; a call that starts under budget finishes.
 */
export class Budget {
  private used: Usage = ZERO_USAGE;
  private cost = 0;

  constructor(readonly limits: BudgetLimits) {
    for (const key of ["maxTokens", "maxCostUsd"] as const) {
      const v = limits[key];
      if (v !== undefined && (typeof v !== "number" || !(v >= 0))) {
        throw new OpenRathError(
          "invalid_argument",
          `Budget ${key} must be a non-negative number, got ${JSON.stringify(v)}.`,
        );
      }
    }
  }

  /** Usage charged so far. */
  get spent(): Usage {
    return this.used;
  }

  /** Cost charged so far in US dollars (0 without prices). */
  get spentUsd(): number {
    return this.cost;
  }

  /** Adds one call's usage. */
  charge(usage: Usage | undefined, model: string | undefined): void {
    if (!usage) return;
    this.used = addUsage(this.used, usage);
    const price = model ? this.limits.prices?.[model] : undefined;
    if (price) this.cost += costOf(usage, price);
  }

  /** Why a new call may not start, or `undefined` if it may. */
  exceeded(): string | undefined {
    return exceededBy(this.limits, this.used, this.cost);
  }
}

/** Why `usage` (costing `cost`) is at or over `limits`, or `undefined`. */
export function exceededBy(limits: BudgetLimits, usage: Usage, cost: number): string | undefined {
  if (limits.maxTokens !== undefined && usage.totalTokens >= limits.maxTokens) {
    return `${usage.totalTokens} tokens used of a ${limits.maxTokens}-token budget`;
  }
  if (limits.maxCostUsd !== undefined && cost >= limits.maxCostUsd) {
    return `$${cost.toFixed(4)} spent of a $${limits.maxCostUsd} budget`;
  }
  return undefined;
}
