import type { UsageReport, UsageRow } from "@openrath/core";

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
  return lines.join("\n");
}
