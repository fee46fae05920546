import { OpenRathError } from "./errors.js";
import type { Session } from "./session.js";
import { addUsage, costOf, type PriceTable, priceFor, type Usage, ZERO_USAGE } from "./usage.js";

/** Limits of a {@link Budget}. Each is optional; none set means unlimited. */
export interface BudgetLimits {
  /** Most total tokens (prompt + completion). */
  readonly maxTokens?: number;
  /**
   * Most cost in US dollars. Needs `prices`, and a price for every model that answers (matched as
   * {@link priceFor} says): a model without one stops the run with `budget_unpriced`.
   */
  readonly maxCostUsd?: number;
  /** Prices per model, in US dollars per million tokens. */
  readonly prices?: PriceTable;
}

/** Why a budget stopped a call: a limit reached (`budget_exceeded`), or a cost it cannot count (`budget_unpriced`). */
export type BudgetStopCode = "budget_exceeded" | "budget_unpriced";

/**
 * Thrown when a model call may not start: a limit is reached (code `budget_exceeded`), or a cost
 * budget met a model it has no price for (code `budget_unpriced`). `session` is the transcript so
 * far, ending with a `budget.exceeded` event chunk that records who stopped, why and before which call.
 */
export class BudgetExceededError extends OpenRathError {
  declare readonly code: BudgetStopCode;

  constructor(
    message: string,
    /** The session as it stood, with the `budget.exceeded` event appended. */
    readonly session: Session,
    details: Record<string, unknown>,
    code: BudgetStopCode = "budget_exceeded",
  ) {
    super(code, message, { details });
  }
}

/** A refusal: why a call may not start, and its code. */
export interface BudgetRefusal {
  readonly code: BudgetStopCode;
  readonly reason: string;
}

/**
 * What a call holds of a budget while it runs: settle it with the call's usage (a call that reported
 * none is charged its reservation, priced as input), or release it.
 */
export interface BudgetHold {
  /** Replaces the hold with what the call actually used. */
  settle(usage: Usage | undefined, model: string | undefined): void;
  /** Gives the hold back (the call failed before it used anything we know of). */
  release(): void;
}

/**
 * A token and cost allowance shared by everything that charges it: pass one Budget to several
 * agents, or to `workflow.run(session, { budget })`, and every model call in every fork counts
 * against the same total.
 *
 * Each call reserves its estimate (the prompt's size plus the request's `maxTokens`) before it
 * starts, and may start only while spent plus reserved is under the limit, so parallel branches
 * see each other's calls in flight: a run overshoots its limit by at most one call's use beyond
 * its reservation — one call's declared maximum when requests set `maxTokens`. Without it the
 * estimate is the prompt alone and the completion is not bounded in advance. A call that starts
 * finishes; the next one is refused.
 *
 * @throws {OpenRathError} `invalid_argument` for a negative limit, or `maxCostUsd` without `prices`.
 */
export class Budget {
  private used: Usage = ZERO_USAGE;
  private cost = 0;
  private heldTokens = 0;
  private heldCost = 0;
  private readonly unpriced = new Set<string>();

  constructor(readonly limits: BudgetLimits) {
    checkBudgetLimits(limits, "Budget");
  }

  /** Usage charged so far. */
  get spent(): Usage {
    return this.used;
  }

  /** Cost charged so far in US dollars (0 without prices). */
  get spentUsd(): number {
    return this.cost;
  }

  /** Tokens reserved by calls in flight. */
  get reservedTokens(): number {
    return this.heldTokens;
  }

  /** Adds one call's usage (a call made without a reservation). */
  charge(usage: Usage | undefined, model: string | undefined): void {
    if (!usage) return;
    this.used = addUsage(this.used, usage);
    const prices = this.limits.prices;
    if (!prices) return;
    const price = model === undefined ? undefined : priceFor(prices, model);
    if (price) this.cost += costOf(usage, price);
    else if (this.limits.maxCostUsd !== undefined) this.unpriced.add(model ?? "(unnamed model)");
  }

  /** Why a new call may not start (counting calls in flight), or `undefined` if it may. */
  exceeded(): string | undefined {
    return this.refusal()?.reason;
  }

  /** Why a new call may not start, with its code, or `undefined` if it may. */
  refusal(): BudgetRefusal | undefined {
    if (this.unpriced.size > 0) {
      const models = [...this.unpriced].map((m) => JSON.stringify(m)).join(", ");
      return {
        code: "budget_unpriced",
        reason: `the cost budget has no price for ${models}, so it cannot count what the calls cost; add the model to prices`,
      };
    }
    const limits = this.limits;
    const tokens = this.used.totalTokens + this.heldTokens;
    if (limits.maxTokens !== undefined && tokens >= limits.maxTokens) {
      const held = this.heldTokens > 0 ? ` (${this.heldTokens} of them reserved by calls in flight)` : "";
      return {
        code: "budget_exceeded",
        reason: `${tokens} tokens used of a ${limits.maxTokens}-token budget${held}`,
      };
    }
    const cost = this.cost + this.heldCost;
    if (limits.maxCostUsd !== undefined && cost >= limits.maxCostUsd) {
      const held =
        this.heldCost > 0 ? ` ($${this.heldCost.toFixed(4)} of it reserved by calls in flight)` : "";
      return {
        code: "budget_exceeded",
        reason: `$${cost.toFixed(4)} spent of a $${limits.maxCostUsd} budget${held}`,
      };
    }
    return undefined;
  }

  /**
   * Reserves `tokens` for a call to `model` (priced when known), or says why the call may not start.
   * The hold counts against the limits until it is settled or released.
   */
  reserve(tokens: number, model: string | undefined): BudgetHold | BudgetRefusal {
    const refused = this.refusal();
    if (refused) return refused;
    const price = this.limits.prices && model !== undefined ? priceFor(this.limits.prices, model) : undefined;
    const held = Math.max(0, tokens);
    // The estimate is all prompt: the dearer side is unknown, so price it as input.
    const heldCost = price ? (held * price.input) / 1e6 : 0;
    this.heldTokens += held;
    this.heldCost += heldCost;
    let open = true;
    const drop = () => {
      if (!open) return false;
      open = false;
      this.heldTokens -= held;
      this.heldCost -= heldCost;
      return true;
    };
    return {
      settle: (usage, answered) => {
        // A call whose server reported no usage still spent something: it is charged its
        // reservation, so a server that never reports usage cannot run past a budget unseen.
        if (drop())
          this.charge(
            usage ?? { promptTokens: held, completionTokens: 0, totalTokens: held },
            answered ?? model,
          );
      },
      release: () => {
        drop();
      },
    };
  }
}

/** Checks budget limits: non-negative numbers, and prices with any cost limit. @throws `invalid_argument` */
export function checkBudgetLimits(limits: BudgetLimits, what: string): void {
  if (typeof limits !== "object" || limits === null) {
    throw new OpenRathError(
      "invalid_argument",
      `${what} limits must be an object, got ${JSON.stringify(limits)}.`,
    );
  }
  for (const key of ["maxTokens", "maxCostUsd"] as const) {
    const v = limits[key];
    if (v !== undefined && (typeof v !== "number" || !(v >= 0))) {
      throw new OpenRathError(
        "invalid_argument",
        `${what} ${key} must be a non-negative number, got ${JSON.stringify(v)}.`,
      );
    }
  }
  if (limits.maxCostUsd !== undefined && (!limits.prices || Object.keys(limits.prices).length === 0)) {
    throw new OpenRathError(
      "invalid_argument",
      `${what} maxCostUsd needs prices: without a price per model a cost budget cannot count anything, so it would never stop a run. Pass prices: { "<model>": { input, output } } (US dollars per million tokens).`,
      { details: { maxCostUsd: limits.maxCostUsd } },
    );
  }
}

/** Who a budget stop refused, for the one event and error every model-calling step records. */
export interface BudgetStop {
  /** The step's name (`"writer"`, `"selector"`). */
  readonly by: string;
  /** What kind of step: `Agent`, `Selector`, `Compressor`. */
  readonly kind: string;
  /** The author recorded on the event (workflow path included). */
  readonly author: string;
  /** The 1-based number of the model call refused (an agent's turn). */
  readonly call: number;
  /** Which budget refused: the run's shared one or the step's own limits. */
  readonly budget: "run" | "own";
}

/**
 * The one budget-stop path: appends a `budget.exceeded` event (`{ by, kind, reason, call, budget, code }`)
 * to `session` and returns the error carrying it. Agents, selectors and compressors all stop this way.
 */
export function budgetStop(session: Session, stop: BudgetStop, refusal: BudgetRefusal): BudgetExceededError {
  const recorded = session.append({
    kind: "event",
    name: "budget.exceeded",
    author: stop.author,
    data: {
      by: stop.by,
      kind: stop.kind,
      reason: refusal.reason,
      call: stop.call,
      budget: stop.budget,
      code: refusal.code,
    },
  });
  return new BudgetExceededError(
    `${stop.kind} "${stop.by}" stopped before model call ${stop.call}: ${refusal.reason}.`,
    recorded,
    { reason: refusal.reason, budget: stop.budget, call: stop.call },
    refusal.code,
  );
}
