import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { OpenRathError, type ProviderV1, ReplayProvider } from "@openrath/core";
import { runDemo } from "../demo/demo.js";
import type { Command } from "../internal/command.js";
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
  ],
  examples: [
    "openrath demo",
    "openrath demo --record ./recording --lineage lineage.html",
    "openrath demo --replay ./recording",
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

/** How the user can run `openrath` again: through the workspace script when the demo ran through pnpm. */
function openrathCommand(env: Readonly<Record<string, string | undefined>>): string {
  return env.npm_lifecycle_event ? "pnpm openrath" : "openrath";
}
