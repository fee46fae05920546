import type { JsonValue } from "@openrath/core";
import { UsageError } from "../internal/args.js";
import type { Command, CommandContext, CommandGroup } from "../internal/command.js";
import type { Listed } from "./operator-source.js";
import { intOption, JSON_OPTION, SOURCE_OPTIONS, withSource } from "./runs-command.js";

/** A JSON option's value, parsed. */
export function jsonOption(value: string | true | undefined, name: string): JsonValue | undefined {
  if (typeof value !== "string") return undefined;
  try {
    return JSON.parse(value) as JsonValue;
  } catch {
    throw new UsageError(`--${name} must be JSON`);
  }
}

/** Prints a page of an inbox: JSON lines, or one row per item, and the next page's cursor. */
export function printPage<T>(
  ctx: CommandContext,
  page: Listed<T>,
  json: boolean,
  empty: string,
  row: (item: T) => string,
): void {
  if (json) for (const item of page.items) ctx.stdout.write(`${JSON.stringify(item)}\n`);
  else if (page.items.length === 0) ctx.stdout.write(`${empty}\n`);
  else for (const item of page.items) ctx.stdout.write(`${row(item)}\n`);
  if (page.next) ctx.stderr.write(`More: --cursor ${page.next}\n`);
}

const listCommand: Command = {
  name: "interrupts list",
  summary: "The interrupt inbox: pending approvals and inputs across runs, oldest first.",
  args: [],
  options: [
    ...SOURCE_OPTIONS,
    {
      name: "status",
      value: "<status>",
      choices: ["pending", "decided", "expired", "all"],
      description: "Default pending.",
    },
    { name: "run", value: "<run id>", description: "Only this run's interrupts." },
    { name: "limit", value: "<n>", description: "At most this many (1–200, default 50)." },
    { name: "cursor", value: "<cursor>", description: "The next page (printed after a full page)." },
    JSON_OPTION,
  ],
  examples: ["openrath interrupts list", "openrath interrupts list --status all --json"],
  async run(ctx, { options }) {
    const page = await withSource(ctx, options, (source) =>
      source.listInterrupts({
        status: typeof options.status === "string" ? options.status : "pending",
        limit: intOption(options.limit, "limit", 50, 1, 200),
        ...(typeof options.run === "string" ? { runId: options.run } : {}),
        ...(typeof options.cursor === "string" ? { cursor: options.cursor } : {}),
      }),
    );
    printPage(
      ctx,
      page,
      options.json === true,
      "No interrupts.",
      (item) =>
        `${item.id}  ${item.status.padEnd(8)}  ${item.kind.padEnd(8)}  run ${item.runId}  ${JSON.stringify(item.request)}`,
    );
    return 0;
  },
};

const decideCommand: Command = {
  name: "interrupts decide",
  summary: "Decide a pending interrupt; its run resumes where it asked.",
  args: [{ name: "<interrupt id>", description: "The interrupt's id." }],
  options: [
    ...SOURCE_OPTIONS,
    {
      name: "kind",
      value: "<kind>",
      choices: ["approve", "reject", "edit", "respond"],
      description: "The decision (required).",
    },
    { name: "reason", value: "<text>", description: "Recorded with the decision." },
    {
      name: "payload",
      value: "<json>",
      description: "For edit and respond: checked against the interrupt's schema.",
    },
    JSON_OPTION,
  ],
  examples: [
    "openrath interrupts decide 01a2… --kind approve",
    `openrath interrupts decide 01a2… --kind respond --payload '{"city":"Kyoto"}'`,
  ],
  async run(ctx, { positionals, options }) {
    if (typeof options.kind !== "string") throw new UsageError("openrath interrupts decide needs --kind");
    const payload = jsonOption(options.payload, "payload");
    const result = await withSource(ctx, options, (source) =>
      source.decide(positionals[0] ?? "", {
        kind: options.kind as "approve",
        ...(typeof options.reason === "string" ? { reason: options.reason } : {}),
        ...(payload !== undefined ? { payload } : {}),
      }),
    );
    ctx.stdout.write(
      options.json
        ? `${JSON.stringify(result)}\n`
        : `Interrupt ${result.interrupt.id}: ${result.interrupt.status}; run ${result.run.id}: ${result.run.status}\n`,
    );
    return 0;
  },
};

/** `openrath interrupts`: the inbox and decisions. */
export const interruptsCommand: CommandGroup = {
  name: "interrupts",
  summary: "List pending interrupts and decide them.",
  commands: [listCommand, decideCommand],
};
