import type { EffectClass } from "@openrath/core";

/** The behaviour hints of an MCP tool (`annotations` in `tools/list`), as far as effects go. */
export interface ToolAnnotations {
  readonly readOnlyHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly openWorldHint?: boolean;
}

/**
 * What a durable runtime is told about an MCP tool's calls, from the server's annotations:
 * `readOnlyHint` makes it `read_only`; otherwise `idempotentHint` makes it `idempotent` with a key
 * per call (repeating the same call with the same arguments has no further effect, so a call a
 * crash left unfinished may be sent again); anything else is the conservative `non_idempotent`
 * (the MCP defaults: not read-only, not idempotent). Hints come from the server and are trusted
 * as far as the server is.
 */
export function effectOfAnnotations(annotations: ToolAnnotations | undefined): {
  readonly effect: EffectClass;
  readonly idempotencyKey?: true;
} {
  if (annotations?.readOnlyHint === true) return { effect: "read_only" };
  if (annotations?.idempotentHint === true) return { effect: "idempotent", idempotencyKey: true };
  return { effect: "non_idempotent" };
}
