import type { ProviderDelta } from "@openrath/core";

type ToolCallDelta = Extract<ProviderDelta, { type: "tool_call" }>;

/** One `tool_calls[]` piece of a Chat Completions stream chunk, as far as it is read here. */
export interface WireToolCallPiece {
  readonly index?: number | null;
  readonly id?: string | null;
  readonly function?: { readonly name?: string | null; readonly arguments?: string | null } | null;
}

/**
 * Turns the `tool_calls` pieces of a Chat Completions stream into {@link ProviderDelta}s whose
 * `name` pieces concatenate to the tool's name and whose `id` appears once per call, whatever the
 * server repeats. OpenAI sends a call's id and name once, in its first piece; several
 * OpenAI-compatible servers (vLLM, LiteLLM and Mistral in some versions) send the whole name, and
 * the id, again in every piece, which a plain concatenation turns into `weatherweather`.
 *
 * - A name piece equal to the name gathered so far is a repeat and is dropped; any other piece is
 *   the next part of the name (servers that stream the name in fragments keep working).
 * - An id equal to the call's id is dropped; a piece without `index` (Gemini's compatibility
 *   layer) belongs to the call in progress, unless it names a new id, which starts the next call.
 */
export class ToolCallDeltas {
  private readonly calls = new Map<number, { id: string; name: string }>();
  private current = -1;

  /** The deltas for one piece, or `undefined` when the piece repeats only what was already sent. */
  next(piece: WireToolCallPiece): ToolCallDelta | undefined {
    const index = this.indexOf(piece);
    const call = this.calls.get(index) ?? { id: "", name: "" };
    this.calls.set(index, call);
    this.current = index;
    const delta: { type: "tool_call"; index: number; id?: string; name?: string; arguments?: string } = {
      type: "tool_call",
      index,
    };
    const id = piece.id;
    if (typeof id === "string" && id !== "" && id !== call.id) {
      call.id = id;
      delta.id = id;
    }
    const name = piece.function?.name;
    if (typeof name === "string" && name !== "" && name !== call.name) {
      call.name += name;
      delta.name = name;
    }
    const args = piece.function?.arguments;
    if (typeof args === "string" && args !== "") delta.arguments = args;
    return delta.id === undefined && delta.name === undefined && delta.arguments === undefined
      ? undefined
      : delta;
  }

  private indexOf(piece: WireToolCallPiece): number {
    if (typeof piece.index === "number" && Number.isInteger(piece.index) && piece.index >= 0)
      return piece.index;
    const open = this.calls.get(this.current);
    if (open === undefined) return 0;
    const id = piece.id;
    const startsAnother = typeof id === "string" && id !== "" && open.id !== "" && id !== open.id;
    return startsAnother ? Math.max(...this.calls.keys()) + 1 : this.current;
  }
}
