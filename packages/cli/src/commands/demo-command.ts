import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { OpenRathError, type ProviderV1, ReplayProvider } from "@openrath/core";
import { readConfig, stateDir } from "../config.js";
import { demoReport, runDemo } from "../demo/demo.js";
import { UsageError } from "../internal/args.js";
import type { Command, CommandContext } from "../internal/command.js";
import { renderLineageHtml } from "../viewer/render-lineage-html.js";

/** `openrath demo`: runs the MAMS demo and prints its report. */
export const demoCommand: Command = {
  name: "demo",
  summary: "Run the MAMS demo: a planner, three specialists on a shared sandbox, merge, compress, route.",
  description: [
    "A planner plans; three specialists work on forks of the planned session, all on one `local`",
    "sandbox where they write and run small programs; their branches are merged three-way and",
    "compressed; a selector routes the summary to a writer, who answers. The report shows the",
    "lineage, the usage per agent and model, and the answer.",
    "",
    "By default the team runs as one durable run on the embedded store under --state: stop it at",
    "any point (Ctrl-C, kill -9), run the same command again, and it continues after the last",
    "finished step. --in-memory (implied by --record, --replay and --lineage) runs it as a plain",
    "workflow in memory instead.",
    "",
    "Without an API key it runs on a deterministic scripted model. With OPENAI_API_KEY (or",
    "OPENAI_BASE_URL for any OpenAI-compatible server) it uses that model (OPENAI_MODEL, default",
    "gpt-4o-mini); --scripted keeps the scripted model anyway.",
  ].join("\n"),
  args: [],
  options: [
    {
      name: "record",
      value: "<dir>",
      description: "Keep every session of the run as a session log in <dir>, with a recording.json.",
    },
    {
      name: "replay",
      value: "<dir>",
      description: "Answer every model call from a recording; no model is called.",
    },
    {
      name: "lineage",
      value: "<file.html>",
      description: "Also write the run's lineage viewer to this file.",
    },
    { name: "scripted", description: "Use the scripted model even when OPENAI_API_KEY is set." },
    {
      name: "durable",
      description: "Run the team as a durable run on the embedded store (the default; says so explicitly).",
    },
    {
      name: "in-memory",
      description:
        "Run the team as a plain workflow in memory, with no store (implied by --record, --replay, --lineage).",
    },
    {
      name: "state",
      value: "<dir>",
      description: "Where the durable run keeps its database and workspace (default ./.openrath).",
    },
  ],
  examples: [
    "openrath demo",
    "openrath demo --record ./recording --lineage lineage.html",
    "openrath demo --replay ./recording",
    "openrath demo --state /tmp/demo-state",
    "openrath demo --in-memory",
  ],
  async run(ctx, { options }) {
    const record = typeof options.record === "string" ? ctx.resolve(options.record) : undefined;
    const replay = typeof options.replay === "string" ? ctx.resolve(options.replay) : undefined;
    const lineage = typeof options.lineage === "string" ? ctx.resolve(options.lineage) : undefined;
    let provider: ProviderV1 | undefined;
    if (!replay && !options.scripted && (ctx.env.OPENAI_API_KEY || ctx.env.OPENAI_BASE_URL)) {
      const { openaiProvider } = await import("@openrath/provider-openai");
      provider = openaiProvider({
        model: ctx.env.OPENAI_MODEL || "gpt-4o-mini",
        ...(ctx.env.OPENAI_API_KEY ? { apiKey: ctx.env.OPENAI_API_KEY } : {}),
        ...(ctx.env.OPENAI_BASE_URL ? { baseURL: ctx.env.OPENAI_BASE_URL } : {}),
      });
      ctx.stderr.write(`Using ${provider.model} through ${ctx.env.OPENAI_BASE_URL || "the OpenAI API"}.\n`);
    }
    const inMemory =
      options["in-memory"] === true || record !== undefined || replay !== undefined || lineage !== undefined;
    if (options.durable && inMemory)
      throw new UsageError("--durable runs without --in-memory, --record, --replay or --lineage");
    if (options.state !== undefined && inMemory)
      throw new UsageError(
        "--state goes with the durable run, not with --in-memory, --record, --replay or --lineage",
      );
    if (!inMemory) {
      return runDurable(ctx, stateDir(ctx, readConfig(ctx.env), options), provider);
    }
    const progress = ctx.progress();
    const stop = new AbortController();
    const onSignal = () => {
      if (stop.signal.aborted) process.exit(130);
      progress.done();
      ctx.stderr.write(
        "Stopping the demo: cancelling the model call in flight and closing its sandboxes (press Ctrl-C again to quit at once)\n",
      );
      stop.abort();
    };
    process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
    let result: Awaited<ReturnType<typeof runDemo>>;
    try {
      result = await runDemo({
        ...(provider ? { provider } : {}),
        ...(record ? { record } : {}),
        ...(replay ? { replay } : {}),
        log: (line) => progress.update(line),
        signal: stop.signal,
      });
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      ctx.stderr.write("Stopped.\n");
      return 130;
    } finally {
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      progress.done();
    }
    ctx.stdout.write(result.output);
    if (record) {
      ctx.stderr.write(
        `Recorded ${result.logs.length} sessions to ${record}; replay with: ${openrathCommand(ctx.env)} replay ${record}\n`,
      );
    }
    if (result.provider instanceof ReplayProvider) {
      ctx.stderr.write(
        `Replayed ${result.provider.servedCount} model calls from the recording; no model was called.\n`,
      );
    }
    if (lineage) {
      await mkdir(dirname(lineage), { recursive: true });
      await writeFile(
        lineage,
        renderLineageHtml(result.sessions, { finalSessionId: result.session.id, subtitle: "MAMS demo" }),
      );
      ctx.stderr.write(`Wrote the lineage viewer to ${lineage}\n`);
    }
    if (result.session.text() === undefined) {
      throw new OpenRathError(
        "no_answer",
        `The run ended without an answer from ${result.provider.model}: the model's replies had no text (see the lineage above)`,
        { details: { provider: result.provider.name, model: result.provider.model } },
      );
    }
    return 0;
  },
};

/** The durable demo: the same team as one durable run in the embedded store under `state`. */
async function runDurable(
  ctx: CommandContext,
  state: string,
  provider: ProviderV1 | undefined,
): Promise<number> {
  const { runDurableMams } = await import("@openrath/demo/durable");
  const { pgliteStore } = await import("@openrath/store-postgres");
  ctx.stderr.write(
    `Durable MAMS demo, state in ${state}: stop it at any point and run the same command again.\n`,
  );
  const store = await pgliteStore({ dataDir: join(state, "db") });
  try {
    const { run, session } = await runDurableMams({
      store,
      workspace: join(state, "demo-workspace"),
      pauseMs: 300,
      ...(provider ? { provider } : {}),
      log: (line) => ctx.stderr.write(`${line}\n`),
      // The worker's own lines (started, stopping) would crowd the demo's; warnings still show.
      workerLog: (level, message, data) => {
        if (level === "warn" || level === "error")
          ctx.stderr.write(`${level}: ${message} ${JSON.stringify(data ?? {})}\n`);
      },
    });
    ctx.stdout.write(demoReport(session, provider?.name ?? "scripted"));
    const openrath = openrathCommand(ctx.env);
    const stateArg = state === stateDir(ctx, readConfig(ctx.env), {}) ? "" : ` --state ${state}`;
    ctx.stdout.write(
      [
        "",
        `Run ${run.id}: ${run.status}, a durable run on the embedded store in ${state}.`,
        `  Inspect it:         ${openrath} runs show ${run.id}${stateArg}`,
        `  Open it in the API: ${openrath} serve${stateArg}   (then GET /v1/runs/${run.id})`,
        `  Start over:         remove ${state}`,
        "",
      ].join("\n"),
    );
    if (session.text() === undefined) {
      const model = provider?.model ?? "the scripted model";
      throw new OpenRathError(
        "no_answer",
        `The run ended without an answer from ${model}: the model's replies had no text (run ${run.id})`,
        { details: { runId: run.id } },
      );
    }
    return run.status === "succeeded" ? 0 : 1;
  } finally {
    await store.close();
  }
}

/** How the user can run `openrath` again: through the workspace script when the demo ran through pnpm. */
function openrathCommand(env: Readonly<Record<string, string | undefined>>): string {
  return env.npm_lifecycle_event ? "pnpm openrath" : "openrath";
}
