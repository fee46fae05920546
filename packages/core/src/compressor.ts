import type { RunOptions } from "./agent-options.js";
import { BRANCH_EXTRA, branchLabel, REQUEST_EXTRA, withScope } from "./call-position.js";
import { OpenRathError } from "./errors.js";
import type { JsonValue } from "./json.js";
import { callModel } from "./model-call.js";
import type { ProviderRequest, ProviderV1, RetryPolicy } from "./provider.js";
import { requestDigest } from "./request-fingerprint.js";
import type { Session } from "./session.js";
import { carryUsage } from "./usage.js";

/** Options of {@link Compressor}. */
export interface CompressorOptions {
  readonly name?: string;
  readonly provider: ProviderV1;
  /** Instructions for the summarizing model. */
  readonly instructions?: string;
  /** The closing request appended after the transcript (a default asks to keep facts, goals and open tasks). */
  readonly request?: string;
  readonly retry?: RetryPolicy;
}

const DEFAULT_REQUEST =
  "Summarize the conversation above as a shorter plain-text narrative. Keep every fact, decision, goal and open task; drop repetition and chatter.";

/**
 * Folds a session into a summary session: one model call without tools, and the result is a new
 * session (lineage op `compress`) whose only chunk is the summary, as a user chunk. That chunk
 * carries the usage of the chunks it replaced, by model, author and branch, so usage roll-ups of
 * the compressed session still add up.
 *
 * @throws {OpenRathError} `compression_failed` when the model answers with tool calls, is cut off
 *   (`length`), or returns no text.
 */
export class Compressor {
  readonly name: string;
  readonly description = "Summarizes the conversation so far into one chunk.";

  constructor(private readonly options: CompressorOptions) {
    if (!options?.provider) throw new OpenRathError("invalid_argument", "A Compressor needs a provider.");
    this.name = options.name ?? "compressor";
  }

  /** The summary session. */
  async run(session: Session, options: RunOptions = {}): Promise<Session> {
    const run = withScope(options);
    const branch = run.scope.child(run.scope.branchOf(session.lineage), "compress", this.name);
    const author = run.path ? `${run.path}/${this.name}` : this.name;
    const request: ProviderRequest = {
      messages: [
        ...(this.options.instructions
          ? [{ role: "system" as const, content: this.options.instructions }]
          : []),
        ...session.messages(),
        { role: "user", content: this.options.request ?? DEFAULT_REQUEST },
      ],
      toolChoice: "none",
    };
    const { response, fingerprint } = await callModel({
      kind: "Compressor",
      by: this.name,
      author,
      provider: this.options.provider,
      request,
      position: { branch: branch.key, label: branchLabel(branch), index: 0 },
      streaming: false,
      ...(this.options.retry ? { retry: this.options.retry } : {}),
      run,
      signal: run.signal,
      session,
    });
    const summary = response.content?.trim() ?? "";
    const problem =
      response.toolCalls.length > 0
        ? "the model called tools"
        : response.finishReason === "length"
          ? "the summary was cut off at the token limit (a partial summary would silently drop history)"
          : response.finishReason === "content_filter"
            ? "the summary was blocked by a content filter"
            : summary === ""
              ? "the model returned no text"
              : undefined;
    if (problem) {
      throw new OpenRathError(
        "compression_failed",
        `Compressor "${this.name}" could not summarize session ${session.id}: ${problem}.`,
        {
          details: { sessionId: session.id, finishReason: response.finishReason },
        },
      );
    }
    const out = session.derive({
      op: "compress",
      operator: this.name,
      extras: {
        "compression.lossy": true,
        "compression.chunks_in": session.length,
        "compression.rows_out": 1,
        [BRANCH_EXTRA]: branch.key,
        [REQUEST_EXTRA]: requestDigest(request, this.options.instructions ? 1 : 0) as unknown as JsonValue,
      },
      chunks: [
        {
          kind: "user",
          author,
          content: summary,
          ...(response.usage ? { usage: response.usage } : {}),
          model: response.model,
          requestHash: fingerprint,
          carriedUsage: carryUsage(session.chunks),
        },
      ],
    });
    run.onEvent?.({ type: "produced", by: this.name, path: author, session: out });
    return out;
  }
}
