import { existsSync } from "node:fs";
import { join } from "node:path";
import { OpenRathError } from "@openrath/core";
import type { RunEvent, RunRecord, RunStatus, RunStoreV1 } from "@openrath/runtime-durable";
import { readConfig, stateDir } from "../config.js";
import { UsageError } from "../internal/args.js";
import type { Command, CommandContext, CommandGroup } from "../internal/command.js";

const STORE_OPTIONS = [
  {
    name: "state",
    value: "<dir>",
    description:
      "The embedded store's directory (default ./.openrath); DATABASE_URL selects PostgreSQL instead.",
  },
  { name: "tenant", value: "<id>", description: 'The tenant whose runs to read (default "default").' },
] as const;

const JSON_OPTION = { name: "json", description: "Print JSON instead of text." } as const;

type Options = Readonly<Record<string, string | true | undefined>>;

/**
 * Opens the store the runs live in, straight from this process: PostgreSQL when `DATABASE_URL` is
 * set, else the embedded PGlite store that `openrath demo --durable` writes under `--state`.
 */
async function withStore<T>(ctx: CommandContext, options: Options, use: (store: RunStoreV1) => Promise<T>) {
  const { pgliteStore, postgresStore } = await import("@openrath/store-postgres");
  const config = readConfig(ctx.env);
  const url = config.DATABASE_URL;
  const dataDir = join(stateDir(ctx, config, options), "db");
  // Reading must not create a database where the user has none.
  if (!url && !existsSync(dataDir)) {
    throw new OpenRathError(
      "not_found",
      `No embedded store at ${dataDir}: run openrath demo --durable first, pass --state <dir>, or set DATABASE_URL`,
      { details: { dataDir } },
    );
  }
  const store = url ? await postgresStore({ connectionString: url }) : await pgliteStore({ dataDir });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

function tenant(ctx: CommandContext, options: Options): string {
  return typeof options.tenant === "string" ? options.tenant : readConfig(ctx.env).OPENRATH_TENANT;
}

async function findRun(store: RunStoreV1, id: string, tenantId: string): Promise<RunRecord> {
  const run = await store.getRun(id, tenantId);
  if (!run)
    throw new OpenRathError("not_found", `No run ${id} in tenant ${tenantId}`, { details: { id, tenantId } });
  return run;
}

function when(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

const listCommand: Command = {
  name: "runs list",
  summary: "List durable runs, oldest first.",
  args: [],
  options: [
    ...STORE_OPTIONS,
    {
      name: "status",
      value: "<status>",
      description: "Only runs in this status (queued, running, succeeded…).",
    },
    { name: "limit", value: "<n>", description: "At most this many runs (1–500, default 100)." },
    JSON_OPTION,
  ],
  examples: ["openrath runs list", "openrath runs list --status running --json"],
  async run(ctx, { options }) {
    const { RUN_STATUSES } = await import("@openrath/runtime-durable");
    const status = options.status;
    if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) {
      throw new UsageError(`--status must be one of ${RUN_STATUSES.join(", ")}`);
    }
    const limit = options.limit === undefined ? 100 : Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError("--limit must be 1–500");
    const runs = await withStore(ctx, options, (store) =>
      store.listRuns({
        tenantId: tenant(ctx, options),
        limit,
        ...(typeof status === "string" ? { status: status as RunStatus } : {}),
      }),
    );
    if (options.json) {
      for (const run of runs) ctx.stdout.write(`${JSON.stringify(run)}\n`);
      return 0;
    }
    if (runs.length === 0) {
      ctx.stdout.write("No runs.\n");
      return 0;
    }
    for (const run of runs) {
      const step = run.nextStep ? ` next ${run.nextStep}` : "";
      ctx.stdout.write(
        `${run.id}  ${run.status.padEnd(9)}  ${run.workflow}  ${run.checkpointSeq} step(s)${step}  ${when(run.createdAt)}\n`,
      );
    }
    return 0;
  },
};

const showCommand: Command = {
  name: "runs show",
  summary: "Show one run: its status, progress, lease and error.",
  args: [{ name: "<run id>", description: "The run's id." }],
  options: [...STORE_OPTIONS, JSON_OPTION],
  examples: ["openrath runs show 01a2…"],
  async run(ctx, { positionals, options }) {
    const run = await withStore(ctx, options, (store) =>
      findRun(store, positionals[0]!, tenant(ctx, options)),
    );
    if (options.json) {
      ctx.stdout.write(`${JSON.stringify(run, null, 2)}\n`);
      return 0;
    }
    const lines = [
      `Run ${run.id} (${run.status})`,
      `  workflow   ${run.workflow}`,
      `  session    ${run.sessionId}`,
      `  steps      ${run.checkpointSeq} done${run.nextStep ? `, next ${run.nextStep}` : ""}`,
      `  attempt    ${run.attempt}`,
      `  created    ${when(run.createdAt)}`,
      `  updated    ${when(run.updatedAt)}`,
      ...(run.leaseHolder ? [`  lease      ${run.leaseHolder} until ${when(run.leaseExpiresAt ?? 0)}`] : []),
      ...(run.error ? [`  error      ${run.error.code}: ${run.error.message}`] : []),
    ];
    ctx.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  },
};

const eventsCommand: Command = {
  name: "runs events",
  summary: "Print a run's events in order.",
  args: [{ name: "<run id>", description: "The run's id." }],
  options: [
    ...STORE_OPTIONS,
    { name: "after", value: "<seq>", description: "Only events after this sequence number." },
    JSON_OPTION,
  ],
  examples: ["openrath runs events 01a2… --json"],
  async run(ctx, { positionals, options }) {
    const after = options.after === undefined ? 0 : Number(options.after);
    if (!Number.isInteger(after) || after < 0) throw new UsageError("--after must be a whole number ≥ 0");
    const events: RunEvent[] = await withStore(ctx, options, async (store) => {
      const run = await findRun(store, positionals[0]!, tenant(ctx, options));
      const out: RunEvent[] = [];
      for (let from = after; ; ) {
        const page = await store.readEvents(run.id, { after: from, limit: 500 });
        out.push(...page);
        if (page.length < 500) return out;
        from = page.at(-1)!.seq;
      }
    });
    for (const event of events) {
      ctx.stdout.write(
        options.json
          ? `${JSON.stringify(event)}\n`
          : `${String(event.seq).padStart(4)}  ${when(event.at)}  ${event.type}  ${JSON.stringify(event.data)}\n`,
      );
    }
    return 0;
  },
};

const cancelCommand: Command = {
  name: "runs cancel",
  summary: "Cancel a run that has not ended; a step in flight is told to stop.",
  args: [{ name: "<run id>", description: "The run's id." }],
  options: [
    ...STORE_OPTIONS,
    { name: "reason", value: "<text>", description: "Recorded with the cancellation." },
    JSON_OPTION,
  ],
  examples: ['openrath runs cancel 01a2… --reason "wrong input"'],
  async run(ctx, { positionals, options }) {
    const run = await withStore(ctx, options, async (store) => {
      const found = await findRun(store, positionals[0]!, tenant(ctx, options));
      return store.cancel(found.id, {
        actor: "openrath-cli",
        ...(typeof options.reason === "string" ? { reason: options.reason } : {}),
      });
    });
    ctx.stdout.write(options.json ? `${JSON.stringify(run)}\n` : `Run ${run.id}: ${run.status}\n`);
    return 0;
  },
};

/** `openrath runs`: list, show, follow the events of and cancel durable runs, straight from the store. */
export const runsCommand: CommandGroup = {
  name: "runs",
  summary: "List, show and cancel durable runs and print their events (from the store).",
  commands: [listCommand, showCommand, eventsCommand, cancelCommand],
};
