import type { Run } from "@openrath/client";
import { OpenRathError } from "@openrath/core";
import type { RunStatus } from "@openrath/runtime-durable";
import { UsageError } from "../internal/args.js";
import type { Command, CommandContext, CommandGroup } from "../internal/command.js";
import { type OperatorSource, openSource } from "./operator-source.js";

type Options = Readonly<Record<string, string | true | undefined>>;

/** Where the operator commands read and write: a server, or the store straight from this process. */
export const SOURCE_OPTIONS = [
  {
    name: "server",
    value: "<url>",
    description:
      "Talk to this Agent Server (default $OPENRATH_SERVER_URL, with $OPENRATH_TOKEN); without one, open the store.",
  },
  {
    name: "state",
    value: "<dir>",
    description:
      "The embedded store's directory (default $OPENRATH_STATE or ./.openrath); DATABASE_URL selects PostgreSQL.",
  },
  {
    name: "tenant",
    value: "<id>",
    description: "The tenant to act for on the store (default $OPENRATH_TENANT or default).",
  },
] as const;

export const JSON_OPTION = {
  name: "json",
  description: "Print JSON (one object per line for lists).",
} as const;

/** Runs `use` on the source the options name, and closes it. */
export async function withSource<T>(
  ctx: CommandContext,
  options: Options,
  use: (source: OperatorSource) => Promise<T>,
): Promise<T> {
  const source = await openSource(ctx, options);
  try {
    return await use(source);
  } catch (error) {
    // fetch's own failure says only "fetch failed": name the server and what to check.
    if (error instanceof TypeError && error.message === "fetch failed") {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new OpenRathError(
        "server_unreachable",
        `Cannot reach the server at ${source.where}${cause?.code ? ` (${cause.code})` : ""}: is openrath serve running there?`,
        { cause: error, details: { server: source.where } },
      );
    }
    throw error;
  } finally {
    await source.close();
  }
}

/** A whole number option in `min..max`. */
export function intOption(
  value: string | true | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be ${min}–${max}`);
  return n;
}

const short = (iso: string) => iso.replace(/\.\d+Z$/, "Z");

const listCommand: Command = {
  name: "runs list",
  summary: "List durable runs, newest first.",
  args: [],
  options: [
    ...SOURCE_OPTIONS,
    {
      name: "status",
      value: "<status>",
      description: "Only runs in this status (queued, running, succeeded…).",
    },
    { name: "limit", value: "<n>", description: "At most this many runs (1–200, default 100)." },
    { name: "after", value: "<run id>", description: "The runs older than this one (the next page)." },
    JSON_OPTION,
  ],
  examples: [
    "openrath runs list",
    "openrath runs list --status running --json",
    "openrath runs list --server http://127.0.0.1:8787",
  ],
  async run(ctx, { options }) {
    const { RUN_STATUSES } = await import("@openrath/runtime-durable");
    const status = options.status;
    if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) {
      throw new UsageError(`--status must be one of ${RUN_STATUSES.join(", ")}`);
    }
    const limit = intOption(options.limit, "limit", 100, 1, 200);
    const page = await withSource(ctx, options, (source) =>
      source.listRuns({
        limit,
        ...(typeof status === "string" ? { status: status as RunStatus } : {}),
        ...(typeof options.after === "string" ? { after: options.after } : {}),
      }),
    );
    if (options.json) {
      for (const run of page.items) ctx.stdout.write(`${JSON.stringify(run)}\n`);
      return 0;
    }
    if (page.items.length === 0) {
      ctx.stdout.write("No runs.\n");
      return 0;
    }
    for (const run of page.items) {
      const step = run.nextStep ? ` next ${run.nextStep}` : "";
      ctx.stdout.write(
        `${run.id}  ${run.status.padEnd(12)}  ${run.workflow}  ${run.lastCheckpoint} step(s)${step}  ${short(run.createdAt)}\n`,
      );
    }
    if (page.next) ctx.stderr.write(`More: --after ${page.next}\n`);
    return 0;
  },
};

function showRun(run: Run): string {
  return [
    `Run ${run.id} (${run.status})`,
    `  workflow   ${run.workflow}`,
    `  session    ${run.sessionId}`,
    `  steps      ${run.lastCheckpoint} done${run.nextStep ? `, next ${run.nextStep}` : ""}`,
    `  attempt    ${run.attempt}`,
    `  events     ${run.lastEventSequence}`,
    `  created    ${short(run.createdAt)}`,
    `  updated    ${short(run.updatedAt)}`,
    ...(run.projectId ? [`  project    ${run.projectId}`] : []),
    ...(run.error ? [`  error      ${run.error.code}: ${run.error.message}`] : []),
    "",
  ].join("\n");
}

const showCommand: Command = {
  name: "runs show",
  summary: "Show one run: its status, progress and error.",
  args: [{ name: "<run id>", description: "The run's id." }],
  options: [...SOURCE_OPTIONS, JSON_OPTION],
  examples: ["openrath runs show 01a2…"],
  async run(ctx, { positionals, options }) {
    const run = await withSource(ctx, options, (source) => source.getRun(positionals[0] ?? ""));
    ctx.stdout.write(options.json ? `${JSON.stringify(run, null, 2)}\n` : showRun(run));
    return 0;
  },
};

const eventsCommand: Command = {
  name: "runs events",
  summary: "Print a run's events in order; --follow waits for new ones until the run ends.",
  args: [{ name: "<run id>", description: "The run's id." }],
  options: [
    ...SOURCE_OPTIONS,
    { name: "after", value: "<seq>", description: "Only events after this sequence number." },
    {
      name: "follow",
      short: "f",
      description: "Keep printing events as they are committed, until the run ends.",
    },
    JSON_OPTION,
  ],
  examples: [
    "openrath runs events 01a2… --json",
    "openrath runs events 01a2… --follow --server http://127.0.0.1:8787",
  ],
  async run(ctx, { positionals, options }) {
    const after = intOption(options.after, "after", 0, 0, Number.MAX_SAFE_INTEGER);
    await withSource(ctx, options, async (source) => {
      for await (const event of source.events(positionals[0] ?? "", after, options.follow === true)) {
        ctx.stdout.write(
          options.json
            ? `${JSON.stringify(event)}\n`
            : `${String(event.sequence).padStart(4)}  ${short(event.at)}  ${event.type}  ${JSON.stringify(event.data)}\n`,
        );
      }
    });
    return 0;
  },
};

const cancelCommand: Command = {
  name: "runs cancel",
  summary: "Cancel a run that has not ended; a step in flight is told to stop.",
  args: [{ name: "<run id>", description: "The run's id." }],
  options: [
    ...SOURCE_OPTIONS,
    { name: "reason", value: "<text>", description: "Recorded with the cancellation." },
    JSON_OPTION,
  ],
  examples: ['openrath runs cancel 01a2… --reason "wrong input"'],
  async run(ctx, { positionals, options }) {
    const reason = typeof options.reason === "string" ? options.reason : undefined;
    const run = await withSource(ctx, options, (source) => source.cancel(positionals[0] ?? "", reason));
    ctx.stdout.write(options.json ? `${JSON.stringify(run)}\n` : `Run ${run.id}: ${run.status}\n`);
    return 0;
  },
};

const resumeCommand: Command = {
  name: "runs resume",
  summary: "Put a run parked for review back in the queue (after its effects are resolved).",
  description:
    "Only a needs_review run resumes; while any of its effects waits for a resolution (openrath effects list) it is refused with effects_under_review. A run waiting on an interrupt is answered with openrath interrupts decide.",
  args: [{ name: "<run id>", description: "The run's id." }],
  options: [
    ...SOURCE_OPTIONS,
    { name: "reason", value: "<text>", description: "Recorded with the transition." },
    JSON_OPTION,
  ],
  examples: ['openrath runs resume 01a2… --reason "checked the mail log"'],
  async run(ctx, { positionals, options }) {
    const reason = typeof options.reason === "string" ? options.reason : undefined;
    const run = await withSource(ctx, options, (source) => source.resume(positionals[0] ?? "", reason));
    ctx.stdout.write(options.json ? `${JSON.stringify(run)}\n` : `Run ${run.id}: ${run.status}\n`);
    return 0;
  },
};

/** `openrath runs`: list, show, follow the events of, cancel and resume durable runs, through a server or the store. */
export const runsCommand: CommandGroup = {
  name: "runs",
  summary: "List, show, cancel and resume durable runs and print or follow their events.",
  commands: [listCommand, showCommand, eventsCommand, cancelCommand, resumeCommand],
};
