import { pathToFileURL } from "node:url";
import {
  type Chunk,
  closeAllSandboxes,
  lineageToText,
  type PriceTable,
  type ProviderV1,
  ReplayProvider,
  type RunEvent,
  Session,
  usageReport,
} from "@openrath/core";
import { readSessionLog, writeSessionLog } from "@openrath/core/node";
import "@openrath/sandbox-local/register";
import { formatUsageTable } from "../format.js";
import { MamsWorkflow } from "./mams-workflow.js";
import { scriptedBrain } from "./scripted-brain.js";

/** The task the demo gives its team. */
export const TASK =
  'Analyse the sentence "The quick brown fox jumps over the lazy dog": count its words, find its longest word and tally its letters.';

/** Illustrative prices (USD per million tokens) for the real-model run. */
const PRICES: PriceTable = { "gpt-4o-mini": { input: 0.15, output: 0.6, cachedInput: 0.075 } };

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** The model; default: the scripted brain (no API key needed). */
  readonly provider?: ProviderV1;
  /** Write every recorded model call to this session log, for `replay`. */
  readonly record?: string;
  /** Answer every model call from this recording instead of a model. */
  readonly replay?: string;
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

/** What one demo run produced. */
export interface DemoResult {
  readonly output: string;
  readonly session: Session;
  /** Every chunk that records a model call, in the order made. */
  readonly recorded: readonly Chunk[];
  readonly provider: ProviderV1;
}

/** Runs the MAMS demo and returns its printed report (deterministic for the scripted brain and for replays). */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const provider = options.replay
    ? ReplayProvider.from((await readSessionLog(options.replay)).session)
    : (options.provider ?? scriptedBrain());
  const flow = new MamsWorkflow(provider);
  const recorded: Chunk[] = [];
  const onEvent = (event: RunEvent) => {
    if (event.type === "assistant") recorded.push(event.chunk);
    if (event.type === "tool_start") options.log?.(`  ${event.agent} → ${event.name}`);
    if (event.type === "workflow_start") options.log?.(`▶ ${event.path}`);
  };
  let session: Session;
  try {
    session = await flow.run(Session.fromUserMessage(TASK, { author: "user" }), { onEvent });
  } finally {
    await closeAllSandboxes();
  }
  // The final session holds the compressor's summary and the router's decision; agents' turns came as events.
  for (const chunk of session.chunks) if (!recorded.some((c) => c.id === chunk.id)) recorded.push(chunk);
  if (options.record) {
    const log = Session.empty().append(...recorded);
    await writeSessionLog(log, { path: options.record });
  }
  const report = usageReport(session.chunks, provider.name === "openai" ? { prices: PRICES } : {});
  const output = [
    "OpenRath MAMS demo: a planner, three specialists on one local sandbox, a three-way merge, compression and a router",
    "",
    `Task: ${TASK}`,
    "",
    "Lineage:",
    lineageToText(session).trimEnd(),
    "",
    "Usage by agent and model:",
    formatUsageTable(report).trimEnd(),
    "",
    `Answer: ${session.text() ?? "(no answer)"}`,
  ].join("\n");
  return { output: `${output}\n`, session, recorded, provider };
}

async function main() {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  let provider: ProviderV1 | undefined;
  if (!args.includes("--replay") && (process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL)) {
    const { openaiProvider } = await import("@openrath/provider-openai");
    provider = openaiProvider({ model: process.env.OPENAI_MODEL ?? "gpt-4o-mini" });
  }
  const record = flag("--record");
  const replay = flag("--replay");
  const result = await runDemo({
    ...(provider ? { provider } : {}),
    ...(record ? { record } : {}),
    ...(replay ? { replay } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(result.output);
  if (record)
    process.stderr.write(
      `Recorded ${result.recorded.length} chunks to ${record}; replay with --replay ${record}\n`,
    );
  if (result.provider instanceof ReplayProvider) {
    process.stderr.write(
      `Replayed ${result.provider.servedCount} model calls from the recording; no model was called.\n`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().catch((error) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
