import type { CarriedUsage, Chunk } from "./chunk.js";

/**
 * Token counts of one or more model calls. Every count is a whole number of tokens, never negative.
 */
export interface Usage {
  /** Tokens sent to the model (the prompt, including any cached part). */
  readonly promptTokens: number;
  /** Tokens the model produced (including reasoning tokens, if the provider counts them there). */
  readonly completionTokens: number;
  /** `promptTokens + completionTokens` unless the provider reported otherwise. */
  readonly totalTokens: number;
  /** Part of `promptTokens` served from the provider's prompt cache (cache reads), if reported. */
  readonly cachedPromptTokens?: number;
  /**
   * Part of `promptTokens` written to the provider's prompt cache (Anthropic's
   * `cache_creation_input_tokens`), if reported. Priced by `cacheWrite`.
   */
  readonly cacheWriteTokens?: number;
  /** Part of `completionTokens` spent on hidden reasoning, if reported. */
  readonly reasoningTokens?: number;
}

/** Usage with every count at zero. */
export const ZERO_USAGE: Usage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

/** The sum of two usages. Optional counts stay absent unless one side reports them. */
export function addUsage(a: Usage, b: Usage): Usage {
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  if (a.cachedPromptTokens !== undefined || b.cachedPromptTokens !== undefined) {
    out.cachedPromptTokens = (a.cachedPromptTokens ?? 0) + (b.cachedPromptTokens ?? 0);
  }
  if (a.cacheWriteTokens !== undefined || b.cacheWriteTokens !== undefined) {
    out.cacheWriteTokens = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  }
  if (a.reasoningTokens !== undefined || b.reasoningTokens !== undefined) {
    out.reasoningTokens = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  }
  return out;
}

/** The price of one model in US dollars per million tokens. */
export interface ModelPrice {
  /** Prompt tokens that are neither cache reads nor cache writes. */
  readonly input: number;
  /** Completion tokens (reasoning included). */
  readonly output: number;
  /** Prompt tokens read from the prompt cache (`cachedPromptTokens`); defaults to `input`. */
  readonly cachedInput?: number;
  /** Prompt tokens written to the prompt cache (`cacheWriteTokens`); defaults to `input`. */
  readonly cacheWrite?: number;
}

/**
 * Prices per model in US dollars per million tokens. Keys are model names; a model name answered
 * by a provider finds its price as {@link priceFor} says (a dated snapshot such as
 * `gpt-4o-mini-2024-07-18` finds `gpt-4o-mini`).
 */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** A trailing date stamp of a model snapshot: `-2024-07-18`, `-20241022`, `@20240620`. */
const SNAPSHOT_DATE = /(?:-\d{4}-\d{2}-\d{2}|[-@]\d{8})$/;

/**
 * The price of `model` in `prices`: the entry named exactly `model`; else, for a dated snapshot,
 * the entry named without its trailing date stamp (`gpt-4o-mini-2024-07-18` → `gpt-4o-mini`,
 * `claude-3-5-sonnet-20241022` → `claude-3-5-sonnet`, `claude-3-5-sonnet@20240620` →
 * `claude-3-5-sonnet`). Nothing else matches: no prefixes (`gpt-4o` never prices `gpt-4o-mini`),
 * no case folding. `undefined` when neither is there.
 */
export function priceFor(prices: PriceTable, model: string): ModelPrice | undefined {
  const exact = Object.hasOwn(prices, model) ? prices[model] : undefined;
  if (exact) return exact;
  const undated = model.replace(SNAPSHOT_DATE, "");
  return undated !== model && Object.hasOwn(prices, undated) ? prices[undated] : undefined;
}

/** One row of a usage roll-up. */
export interface UsageRow {
  /** The model, author or branch id this row adds up. */
  readonly key: string;
  readonly usage: Usage;
  /** Model calls counted for this key (a summary's carried entries count their calls). */
  readonly calls: number;
  /** Cost in US dollars; present only when a price table was given and knows the model(s). */
  readonly cost?: number;
}

/** Usage of a session, in total and rolled up three ways. */
export interface UsageReport {
  readonly total: Usage;
  /** Total cost in US dollars, when a price table was given; models missing from it count as 0. */
  readonly cost?: number;
  /** Models that had usage but no price in the table. */
  readonly unpricedModels: readonly string[];
  readonly byModel: readonly UsageRow[];
  readonly byAuthor: readonly UsageRow[];
  readonly byBranch: readonly UsageRow[];
  /**
   * Model turns (assistant chunks) whose provider reported no usage, such as an OpenAI-compatible
   * stream without a usage chunk: their tokens are unknown and in neither `total` nor the rows.
   * Present only when there is at least one.
   */
  readonly unreportedCalls?: number;
}

/** Label used for chunks that carry no model, author or branch. */
export const UNKNOWN = "unknown";

/**
 * Cost in US dollars of `usage` at `price`: cache reads at `cachedInput`, cache writes at
 * `cacheWrite`, the rest of the prompt at `input`, completion at `output`.
 */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - cached);
  const fresh = usage.promptTokens - cached - written;
  return (
    (fresh * price.input +
      cached * (price.cachedInput ?? price.input) +
      written * (price.cacheWrite ?? price.input) +
      usage.completionTokens * price.output) /
    1e6
  );
}

/**
 * Sum of the usage carried by `chunks`, counting each chunk id once, so a session that holds the
 * same chunk twice (a `concat` merge of two forks) does not double-count it.
 */
export function sumUsage(chunks: Iterable<Chunk>): Usage {
  let total = ZERO_USAGE;
  const seen = new Set<string>();
  for (const chunk of chunks) {
    const { usage, carried } = usageOf(chunk);
    if ((usage === undefined && carried === undefined) || seen.has(chunk.id)) continue;
    seen.add(chunk.id);
    if (usage) total = addUsage(total, usage);
    for (const entry of carried ?? []) total = addUsage(total, entry.usage);
  }
  return total;
}

/** Whether `chunk` records usage of its own or carries usage for chunks a summary replaced. */
export function carriesUsage(chunk: Chunk): boolean {
  return ownUsage(chunk) !== undefined || carriedUsage(chunk) !== undefined;
}

/**
 * `total` plus the usage `chunk` records and carries (`total` itself when it has none). The caller
 * decides whether the chunk counts (each chunk id counts once per session). The result is a new
 * object, not frozen: callers that hand it out freeze a copy.
 */
export function addChunkUsage(total: Usage, chunk: Chunk): Usage {
  const usage = ownUsage(chunk);
  const carried = carriedUsage(chunk);
  if (usage === undefined && carried === undefined) return total;
  let sum = usage ? addUsage(total, usage) : total;
  if (carried) for (const entry of carried) sum = addUsage(sum, entry.usage);
  return sum;
}

/** The usage of the model call a chunk records, if any (assistant turns, events, summaries). */
function ownUsage(chunk: Chunk): Usage | undefined {
  return chunk.kind === "assistant" || chunk.kind === "event" || chunk.kind === "user"
    ? chunk.usage
    : undefined;
}

/** The usage a summary chunk carries for the chunks it replaced, if any. */
function carriedUsage(chunk: Chunk): readonly CarriedUsage[] | undefined {
  return chunk.kind === "user" ? chunk.carriedUsage : undefined;
}

/** The usage a chunk records itself, and the usage it carries for chunks a summary replaced. */
function usageOf(chunk: Chunk): { usage: Usage | undefined; carried: readonly CarriedUsage[] | undefined } {
  return { usage: ownUsage(chunk), carried: carriedUsage(chunk) };
}

/**
 * Roll usage of `chunks` up by model, by author and by branch (the session that appended the
 * chunk), with costs when `prices` is given. Each chunk id counts once.
 */
export function usageReport(chunks: Iterable<Chunk>, options: { prices?: PriceTable } = {}): UsageReport {
  const prices = options.prices;
  const byModel = new Map<string, { usage: Usage; calls: number; cost: number }>();
  const byAuthor = new Map<string, { usage: Usage; calls: number; cost: number }>();
  const byBranch = new Map<string, { usage: Usage; calls: number; cost: number }>();
  const unpriced = new Set<string>();
  const seen = new Set<string>();
  let total = ZERO_USAGE;
  let cost = 0;
  const bump = (map: typeof byModel, key: string, usage: Usage, c: number, calls: number) => {
    const row = map.get(key) ?? { usage: ZERO_USAGE, calls: 0, cost: 0 };
    map.set(key, { usage: addUsage(row.usage, usage), calls: row.calls + calls, cost: row.cost + c });
  };
  const add = (
    usage: Usage,
    modelName: string | undefined,
    author: string | undefined,
    branch: string,
    calls: number,
  ) => {
    const model = modelName ?? UNKNOWN;
    const price = prices ? priceFor(prices, model) : undefined;
    if (prices && !price) unpriced.add(model);
    const c = price ? costOf(usage, price) : 0;
    total = addUsage(total, usage);
    cost += c;
    bump(byModel, model, usage, c, calls);
    bump(byAuthor, author ?? UNKNOWN, usage, c, calls);
    bump(byBranch, branch, usage, c, calls);
  };
  let unreported = 0;
  for (const chunk of chunks) {
    const { usage, carried } = usageOf(chunk);
    if (chunk.kind === "assistant" && usage === undefined && !seen.has(chunk.id)) {
      seen.add(chunk.id);
      unreported++;
      continue;
    }
    if ((usage === undefined && carried === undefined) || seen.has(chunk.id)) continue;
    seen.add(chunk.id);
    if (usage) add(usage, (chunk as { model?: string }).model, chunk.author, chunk.sessionId, 1);
    for (const entry of carried ?? [])
      add(entry.usage, entry.model, entry.author, entry.sessionId, entry.calls);
  }
  const rows = (map: typeof byModel): UsageRow[] =>
    [...map]
      .map(([key, row]) =>
        prices
          ? { key, usage: row.usage, calls: row.calls, cost: row.cost }
          : { key, usage: row.usage, calls: row.calls },
      )
      .sort((a, b) => b.usage.totalTokens - a.usage.totalTokens || a.key.localeCompare(b.key));
  return {
    total,
    ...(prices ? { cost } : {}),
    unpricedModels: [...unpriced].sort(),
    byModel: rows(byModel),
    byAuthor: rows(byAuthor),
    byBranch: rows(byBranch),
    ...(unreported > 0 ? { unreportedCalls: unreported } : {}),
  };
}

/**
 * The usage of `chunks` grouped by model, author and branch, for a summary chunk that replaces
 * them (nested summaries are unfolded, so nothing is lost or counted twice).
 */
export function carryUsage(chunks: Iterable<Chunk>): CarriedUsage[] {
  const groups = new Map<
    string,
    { model?: string; author?: string; sessionId: string; usage: Usage; calls: number }
  >();
  const seen = new Set<string>();
  const add = (
    model: string | undefined,
    author: string | undefined,
    sessionId: string,
    usage: Usage,
    calls: number,
  ) => {
    const key = JSON.stringify([model ?? null, author ?? null, sessionId]);
    const group = groups.get(key) ?? {
      ...(model ? { model } : {}),
      ...(author ? { author } : {}),
      sessionId,
      usage: ZERO_USAGE,
      calls: 0,
    };
    group.usage = addUsage(group.usage, usage);
    group.calls += calls;
    groups.set(key, group);
  };
  for (const chunk of chunks) {
    const { usage, carried } = usageOf(chunk);
    if ((usage === undefined && carried === undefined) || seen.has(chunk.id)) continue;
    seen.add(chunk.id);
    if (usage) add((chunk as { model?: string }).model, chunk.author, chunk.sessionId, usage, 1);
    for (const entry of carried ?? [])
      add(entry.model, entry.author, entry.sessionId, entry.usage, entry.calls);
  }
  return [...groups.values()];
}

const count = new Intl.NumberFormat("en-US");

/** US dollars with four decimals: single model calls cost fractions of a cent. */
function usd(amount: number): string {
  return `$${amount.toFixed(4)}`;
}

/**
 * Renders a usage report as a plain-text table for a terminal: one section per author, one per
 * model, then a total row. Columns are calls, prompt, completion and total tokens, plus cost in US
 * dollars when the report was made with a price table. Models missing from the price table count as
 * $0 and are named in a note under the table.
 *
 * @example
 * ```ts
 * console.log(formatUsageTable(usageReport(session.chunks, { prices })));
 * ```
 */
export function formatUsageTable(report: UsageReport): string {
  const priced = report.cost !== undefined;
  const header = ["", "calls", "prompt", "completion", "total", ...(priced ? ["cost (USD)"] : [])];
  const cells = (label: string, usage: UsageRow["usage"], calls: number, cost?: number) => [
    label,
    count.format(calls),
    count.format(usage.promptTokens),
    count.format(usage.completionTokens),
    count.format(usage.totalTokens),
    ...(priced ? [cost === undefined ? "" : usd(cost)] : []),
  ];
  const calls = report.byModel.reduce((n, row) => n + row.calls, 0);
  const body: (string[] | "rule")[] = [
    ["by author"],
    ...report.byAuthor.map((row) => cells(`  ${row.key}`, row.usage, row.calls, row.cost)),
    ["by model"],
    ...report.byModel.map((row) => cells(`  ${row.key}`, row.usage, row.calls, row.cost)),
    "rule",
    cells("total", report.total, calls, report.cost),
  ];
  const rows = [header, ...body];
  const widths = header.map((_, i) =>
    Math.max(...rows.map((row) => (row === "rule" || row.length === 1 ? 0 : (row[i]?.length ?? 0)))),
  );
  const width = widths.reduce((sum, w) => sum + w, 0) + 2 * (widths.length - 1);
  const lines = rows.map((row) => {
    if (row === "rule") return "─".repeat(width);
    // Section headings span the row; the label column is left-aligned and numbers right-aligned.
    if (row.length === 1) return row[0]!;
    return row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  });
  if (report.unpricedModels.length > 0) {
    lines.push(`not in the price table (counted as $0): ${report.unpricedModels.join(", ")}`);
  }
  if (report.unreportedCalls !== undefined) {
    lines.push(`model calls whose provider reported no usage (not counted above): ${report.unreportedCalls}`);
  }
  return lines.join("\n");
}
