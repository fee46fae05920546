import { pathToFileURL } from "node:url";
import {
  formatUsageTable,
  lineageToMermaid,
  type PriceTable,
  provenance,
  Session,
  shortId,
  type Usage,
  usageReport,
} from "@openrath/core";

/**
 * Illustrative list prices in US dollars per million tokens, for the models in the tour. Check
 * your provider's current prices before you rely on the cost column.
 */
export const EXAMPLE_PRICES: PriceTable = {
  "gpt-4o": { input: 2.5, output: 10, cachedInput: 1.25 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cachedInput: 0.075 },
  "claude-sonnet-4": { input: 3, output: 15, cachedInput: 0.3 },
};

/** What {@link lineageTour} builds and prints. */
export interface LineageTour {
  /** The final session: the merged branches plus the planner's answer. */
  readonly session: Session;
  /** The lineage of every branch, as a Mermaid flowchart. */
  readonly mermaid: string;
  /** Usage by author and by model, with cost. */
  readonly table: string;
  /** Everything above as one report for a terminal. */
  readonly output: string;
}

const usage = (promptTokens: number, completionTokens: number, cachedPromptTokens?: number): Usage => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
  ...(cachedPromptTokens === undefined ? {} : { cachedPromptTokens }),
});

/**
 * A multi-agent run without a model: a planner forks a question to a researcher, a coder (who runs
 * a tool) and a critic, merges the three branches and answers. The assistant turns are written by
 * hand, with the usage and model names a provider would have recorded, so the tour shows what core
 * does with them: shared prefixes, three-way merges, lineage, usage roll-ups and provenance.
 *
 * @example
 * ```ts
 * const { output } = await lineageTour();
 * console.log(output);
 * ```
 */
export async function lineageTour(options: { prices?: PriceTable } = {}): Promise<LineageTour> {
  const prices = options.prices ?? EXAMPLE_PRICES;

  const planned = Session.fromUserMessage(
    "Our nightly invoice export to S3 fails with 'socket hang up' about 40 minutes in. Why, and what should we change?",
    { author: "user" },
  ).append({
    kind: "assistant",
    author: "planner",
    model: "gpt-4o",
    content:
      "Three angles: the researcher checks how long uploads fail, the coder reproduces it with the export integration test, the critic checks what a fix could break.",
    usage: usage(212, 96),
    finishReason: "stop",
  });

  const researcher = planned.fork({ operator: "planner/researcher" }).append({
    kind: "assistant",
    author: "researcher",
    model: "claude-sonnet-4",
    content:
      "The export sends one PutObject with a stream body while it pages through two million rows. Between pages the socket sits idle and the HTTP agent drops it. For streams of unknown length the SDK's Upload helper sends multipart parts as data arrives, so no socket idles that long.",
    usage: usage(540, 310),
    finishReason: "stop",
  });

  const callId = "call_run_tests_1";
  const coder = planned.fork({ operator: "planner/coder" }).append(
    {
      kind: "assistant",
      author: "coder",
      model: "gpt-4o-mini",
      content: null,
      toolCalls: [
        {
          id: callId,
          type: "function",
          function: {
            name: "run_tests",
            arguments: JSON.stringify({ filter: "export.integration", env: { EXPORT_ROWS: "2000000" } }),
          },
        },
      ],
      usage: usage(684, 58),
      finishReason: "tool_calls",
    },
    {
      kind: "tool_result",
      author: "coder",
      toolCallId: callId,
      name: "run_tests",
      content: JSON.stringify({
        exitCode: 1,
        durationMs: 2_412_000,
        failed: ["export > streams 2M invoices to S3"],
        stderr: "Error: socket hang up\n    at PutObjectCommand (export.ts:88:11)",
      }),
    },
    {
      kind: "assistant",
      author: "coder",
      model: "gpt-4o-mini",
      content:
        "Reproduced against MinIO: fails after 40 minutes with the same error. Patch: replace PutObjectCommand in export.ts with new Upload({ client, params: { Bucket, Key, Body } }), partSize 8 MiB, queueSize 4.",
      usage: usage(1402, 174, 1024),
      finishReason: "stop",
    },
  );

  const critic = planned.fork({ operator: "planner/critic" }).append({
    kind: "assistant",
    author: "critic",
    model: "claude-sonnet-4",
    content:
      "Multipart uploads need s3:AbortMultipartUpload in the job's role, and a failed run leaves orphaned parts that are billed. Add a lifecycle rule that aborts incomplete uploads after one day.",
    usage: usage(655, 142),
    finishReason: "stop",
  });

  // Three-way merges: the question and the plan appear once, then each branch's own turns.
  const researchAndCode = researcher.merge(coder, { operator: "planner" });
  const merged = researchAndCode.merge(critic, { operator: "planner" });

  const session = merged.append({
    kind: "assistant",
    author: "planner",
    model: "gpt-4o",
    content:
      "Cause: one PutObject holds a socket open for the whole export, and it idles between pages until it is dropped. Fix: stream through Upload from @aws-sdk/lib-storage (8 MiB parts), grant s3:AbortMultipartUpload, and add a lifecycle rule that aborts incomplete uploads after a day. The integration test reproduces the failure and is the check for the fix.",
    usage: usage(1890, 260),
    finishReason: "stop",
  });

  // Every version is passed in: a lineage node records the length its session had when it was
  // made, so only the sessions themselves know how many chunks and tokens each branch ended with.
  const mermaid = lineageToMermaid([planned, researcher, coder, critic, researchAndCode, session]);
  const report = usageReport(session.chunks, { prices });
  const table = formatUsageTable(report);

  const prefix = planned.length;
  const added = (branch: Session) => branch.length - prefix;
  const concatLength = researcher.length + coder.length + critic.length + 1;
  const chunkLine =
    `Chunks: ${session.length} = ${prefix} shared (question, plan) + ${added(researcher)} researcher` +
    ` + ${added(coder)} coder + ${added(critic)} critic + 1 answer` +
    ` (a concat merge would hold ${concatLength})`;

  const toolResult = session.chunks.find((c) => c.kind === "tool_result")!;
  const origin = provenance(session, toolResult.id);
  const provenanceLine =
    `Provenance of the ${origin.tool?.name} result (chunk ${origin.index}):` +
    ` branch ${shortId(origin.branch)}, author ${origin.author ?? "unknown"},` +
    ` tool ${origin.tool?.name} (call ${origin.tool?.callId})`;

  const priceLine = Object.entries(prices)
    .map(([model, p]) => `${model} $${p.input.toFixed(2)}/$${p.output.toFixed(2)}`)
    .join(", ");

  const output = [
    "OpenRath lineage tour: one question, three branches, one merged answer",
    "",
    "Lineage (Mermaid; paste into https://mermaid.live to draw it):",
    "",
    mermaid.trimEnd(),
    "",
    `Usage (USD per million input/output tokens: ${priceLine}):`,
    "",
    table,
    "",
    chunkLine,
    provenanceLine,
    "",
  ].join("\n");

  return { session, mermaid, table, output };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { output } = await lineageTour();
  process.stdout.write(output);
}
