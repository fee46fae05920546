import { UsageError } from "../internal/args.js";
import type { Command, CommandGroup } from "../internal/command.js";
import { jsonOption, printPage } from "./interrupts-command.js";
import { intOption, JSON_OPTION, SOURCE_OPTIONS, withSource } from "./runs-command.js";

const listCommand: Command = {
  name: "effects list",
  summary: "Side effects under review (ambiguous after a crash), oldest first.",
  args: [],
  options: [
    ...SOURCE_OPTIONS,
    {
      name: "status",
      value: "<status>",
      choices: ["needs_review", "prepared", "dispatched", "succeeded", "failed"],
      description: "Default needs_review.",
    },
    { name: "run", value: "<run id>", description: "Only this run's effects." },
    { name: "limit", value: "<n>", description: "At most this many (1–200, default 50)." },
    { name: "cursor", value: "<cursor>", description: "The next page (printed after a full page)." },
    JSON_OPTION,
  ],
  examples: ["openrath effects list", "openrath effects list --json"],
  async run(ctx, { options }) {
    const page = await withSource(ctx, options, (source) =>
      source.listEffects({
        status: typeof options.status === "string" ? options.status : "needs_review",
        limit: intOption(options.limit, "limit", 50, 1, 200),
        ...(typeof options.run === "string" ? { runId: options.run } : {}),
        ...(typeof options.cursor === "string" ? { cursor: options.cursor } : {}),
      }),
    );
    printPage(
      ctx,
      page,
      options.json === true,
      "No effects.",
      (item) =>
        `${item.id}  ${item.status.padEnd(12)}  ${item.tool}  run ${item.runId}  ${JSON.stringify(item.arguments)}`,
    );
    return 0;
  },
};

const resolveCommand: Command = {
  name: "effects resolve",
  summary: "Resolve one effect under review: it succeeded (with its result), failed, or may be retried.",
  args: [{ name: "<effect id>", description: "The effect's id." }],
  options: [
    ...SOURCE_OPTIONS,
    {
      name: "kind",
      value: "<kind>",
      choices: ["succeeded", "failed", "retry"],
      description: "The resolution (required).",
    },
    {
      name: "result",
      value: "<json>",
      description: "With succeeded: what the call did, as the tool's result.",
    },
    { name: "reason", value: "<text>", description: "Why (required with failed)." },
    JSON_OPTION,
  ],
  examples: [
    `openrath effects resolve 01a2… --kind succeeded --result '{"charged":true}'`,
    "openrath effects resolve 01a2… --kind retry",
  ],
  async run(ctx, { positionals, options }) {
    const kind = options.kind;
    const reason = typeof options.reason === "string" ? options.reason : undefined;
    if (kind !== "succeeded" && kind !== "failed" && kind !== "retry")
      throw new UsageError("openrath effects resolve needs --kind succeeded, failed or retry");
    if (kind === "failed" && reason === undefined) throw new UsageError("--kind failed needs --reason");
    if (kind === "succeeded" && options.result === undefined)
      throw new UsageError("--kind succeeded needs --result <json>");
    const resolution =
      kind === "succeeded"
        ? { kind, result: jsonOption(options.result, "result") ?? null, ...(reason ? { reason } : {}) }
        : kind === "failed"
          ? { kind, reason: reason ?? "" }
          : { kind, ...(reason ? { reason } : {}) };
    const result = await withSource(ctx, options, (source) =>
      source.resolve(positionals[0] ?? "", resolution as never),
    );
    ctx.stdout.write(
      options.json
        ? `${JSON.stringify(result)}\n`
        : `Effect ${result.effect.id}: ${result.effect.status}; run ${result.run.id}: ${result.run.status}\n`,
    );
    return 0;
  },
};

/** `openrath effects`: the review inbox of ambiguous side effects. */
export const effectsCommand: CommandGroup = {
  name: "effects",
  summary: "List side effects under review and resolve them one by one.",
  commands: [listCommand, resolveCommand],
};
