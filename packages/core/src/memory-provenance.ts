import type { Chunk } from "./chunk.js";
import type { LineageNode } from "./lineage.js";

/** The memory recall a chunk was written after: see {@link creditedRecall}. */
export interface RecallCredit {
  readonly query: string;
  readonly hits: readonly { readonly id: string; readonly score: number; readonly source?: string }[];
  /** The `memory.recall` event chunk. */
  readonly eventId: string;
}

function isRecall(chunk: Chunk): boolean {
  return chunk.kind === "event" && chunk.name === "memory.recall";
}

function credit(event: Chunk): RecallCredit {
  const data = (event.kind === "event" ? event.data : undefined) as
    | { query?: string; hits?: RecallCredit["hits"] }
    | undefined;
  return { query: data?.query ?? "", hits: data?.hits ?? [], eventId: event.id };
}

/**
 * The recall that the agent run which wrote `chunks[index]` used, if any. An agent run that
 * recalls is a `memory` lineage node (`<agent>.recall`) holding the hits and the `memory.recall`
 * event, directly followed by the run's own node (op `loop`, operator `<agent>`) whose chunks are
 * the run's output. So a chunk is credited with a recall only when its branch is such a run and
 * the recall is that run's own: a later run of another agent, or of the same agent with recall
 * off, is not credited with an earlier recall that merely precedes it in the transcript.
 *
 * `branch` is the lineage node of the chunk's `sessionId` when the session's lineage reaches it.
 * When it does not (the chunk arrived through a detach), the chunks alone decide: the run's chunks
 * must directly follow the recall event, by the same author.
 */
export function creditedRecall(
  chunks: readonly Chunk[],
  index: number,
  branch: LineageNode | undefined,
): RecallCredit | undefined {
  const chunk = chunks[index]!;
  if (branch !== undefined && branch.id === chunk.sessionId) {
    const parent = branch.parentAt(0);
    if (
      parent === undefined ||
      parent.op !== "memory" ||
      parent.extras["memory.op"] !== "recall" ||
      parent.operator !== `${branch.operator}.recall`
    ) {
      return undefined;
    }
    for (let i = index - 1; i >= 0; i--) {
      const c = chunks[i]!;
      if (isRecall(c) && c.sessionId === parent.id) return credit(c);
    }
    return undefined;
  }
  let i = index - 1;
  while (i >= 0 && chunks[i]!.sessionId === chunk.sessionId) i--;
  const before = chunks[i];
  if (before === undefined || !isRecall(before)) return undefined;
  if (chunk.author !== undefined && before.author !== `${chunk.author}/memory`) return undefined;
  return credit(before);
}
