import type { Chunk } from "./chunk.js";
import type { Session } from "./session.js";

/**
 * Where a chunk's text came from, which says how far to trust it (see ADR 0029):
 *
 * - `system`: instructions and runtime records (system chunks, event chunks).
 * - `user_input`: what the user wrote.
 * - `model`: what a model wrote (assistant turns, a compressor's summary).
 * - `tool_output`: what a tool returned (tool results).
 * - `memory_recall`: text recalled from a memory store.
 * - `external`: other text from outside the conversation (a fetched page, a file, a message
 *   from another system) put in as a user chunk.
 *
 * Only `system` and `user_input` are text the session's owner vouches for; the rest can carry
 * instructions planted by someone else (prompt injection), which is what a call policy checks.
 */
export type TrustLabel = "system" | "user_input" | "model" | "tool_output" | "memory_recall" | "external";

/** Every {@link TrustLabel}, in a stable order. */
export const TRUST_LABELS: readonly TrustLabel[] = Object.freeze([
  "system",
  "user_input",
  "model",
  "tool_output",
  "memory_recall",
  "external",
]);

/**
 * The trust label of `chunk`: a user chunk's own `trust` when it has one; else by kind (system
 * and event → `system`, assistant → `model`, tool_result → `tool_output`); a user chunk without
 * a label is `model` when a model wrote it (a summary), `memory_recall` when it is untrusted
 * with a `memory:` source (written before labels existed), `external` when otherwise untrusted,
 * and `user_input` otherwise.
 */
export function trustOf(chunk: Chunk): TrustLabel {
  switch (chunk.kind) {
    case "system":
    case "event":
      return "system";
    case "assistant":
      return "model";
    case "tool_result":
      return "tool_output";
    case "user":
      if (chunk.trust !== undefined) return chunk.trust;
      if (chunk.untrusted) return chunk.source?.startsWith("memory:") ? "memory_recall" : "external";
      if (chunk.model !== undefined) return "model";
      return "user_input";
  }
}

/** Whether text with this label is vouched for by the session's owner (`system`, `user_input`). */
export function isTrustedLabel(label: TrustLabel): boolean {
  return label === "system" || label === "user_input";
}

/**
 * The trust labels of the model-visible chunks of `session` (event chunks, which the model
 * never sees, are left out): what a call policy sees as "what the model has read so far".
 */
export function trustLabels(session: Session): ReadonlySet<TrustLabel> {
  const labels = new Set<TrustLabel>();
  for (const chunk of session.chunks) {
    if (chunk.kind === "event") continue;
    labels.add(trustOf(chunk));
    if (labels.size === TRUST_LABELS.length) break;
  }
  return labels;
}
