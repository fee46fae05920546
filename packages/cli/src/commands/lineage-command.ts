import { mkdir, writeFile } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { lineageGraph, lineageToDot, lineageToJsonl, lineageToMermaid, lineageToText } from "@openrath/core";
import { UsageError } from "../internal/args.js";
import type { Command } from "../internal/command.js";
import { readRecording } from "../recording.js";
import { renderLineageHtml } from "../viewer/render-lineage-html.js";

const FORMATS = ["text", "mermaid", "dot", "json", "jsonl", "html"] as const;

/** `openrath lineage`: the lineage of one log or of every log in a directory, in several formats. */
export const lineageCommand: Command = {
  name: "lineage",
  summary: "Show the lineage graph of a session log or a directory of logs.",
  description: [
    "Reads one session log, or every log in a directory (a recording), and builds the lineage DAG",
    "from all of their sessions, so chunk counts and usage are known for each. Prints a tree by",
    "default. --format html writes the interactive viewer: one self-contained file that opens",
    "without a network, with the DAG, each session's chunks, usage and extras, and a search that",
    "traces a piece of text to the chunk that produced it.",
  ].join("\n"),
  args: [{ name: "<log | directory>", description: "A session log (.jsonl) or a directory of them." }],
  options: [
    {
      name: "format",
      short: "f",
      value: "<format>",
      choices: FORMATS,
      description: "Output format (default text).",
    },
    {
      name: "out",
      short: "o",
      value: "<file>",
      description: "Write to this file instead of stdout (required for html).",
    },
    { name: "ids", description: "Show short session ids in the text tree." },
    {
      name: "traces",
      description: "Show the trace and span id of each traced node in the text tree (@openrath/otel).",
    },
  ],
  examples: [
    "openrath lineage ./recording",
    "openrath lineage ./recording --format html --out lineage.html",
    "openrath lineage ~/.openrath/sessions/0199….jsonl --format mermaid",
  ],
  async run(ctx, { positionals, options }) {
    const format = (options.format as (typeof FORMATS)[number] | undefined) ?? "text";
    const out = typeof options.out === "string" ? ctx.resolve(options.out) : undefined;
    if (format === "html" && !out) {
      throw new UsageError(
        "--format html writes a file: pass --out <file.html>; see openrath lineage --help",
      );
    }
    const progress = ctx.progress({ plain: false });
    let recording: Awaited<ReturnType<typeof readRecording>>;
    try {
      progress.update(`reading ${positionals[0]}`);
      recording = await readRecording(ctx.resolve(positionals[0]!));
    } finally {
      progress.done();
    }
    const graph = lineageGraph(...recording.sessions);
    let text: string;
    switch (format) {
      case "text":
        text = lineageToText(graph, { ids: options.ids === true, traces: options.traces === true });
        break;
      case "mermaid":
        text = lineageToMermaid(graph);
        break;
      case "dot":
        text = lineageToDot(graph);
        break;
      case "jsonl":
        text = lineageToJsonl(graph);
        break;
      case "json":
        text = `${JSON.stringify({ format: "openrath.lineage", version: 1, ...graph }, null, 2)}\n`;
        break;
      case "html":
        text = renderLineageHtml(recording.sessions, {
          ...(recording.manifest ? { finalSessionId: recording.manifest.finalSessionId } : {}),
          subtitle: basename(ctx.resolve(positionals[0]!)),
        });
        break;
    }
    if (!out) {
      ctx.stdout.write(text);
      return 0;
    }
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, text);
    ctx.stderr.write(
      `Wrote ${format} lineage of ${graph.nodes.length} sessions (${recording.logs.length} logs) to ${out}\n`,
    );
    return 0;
  },
};
