import type { CallPosition, JsonValue, ToolCall } from "@openrath/core";
import { canonicalJson, sha256 } from "../internal/canonical.js";

/**
 * Journal positions: where a call sits in its step, as a key that is the same in every attempt of
 * the same code. Model calls and tool calls take their place from core's {@link CallPosition}
 * (branch key and call number; a tool call adds its order among the reply's calls), so parallel
 * branches of one step never share a position whatever order they run in. Interrupts and
 * journaled functions called by the step itself are numbered in call order.
 */

/** The position of a model call. */
export function modelPosition(position: CallPosition): string {
  return `m/${position.branch}/${position.index}`;
}

/** The position of tool call number `order` of the reply of model call `position`. */
export function toolPosition(position: CallPosition, order: number): string {
  return `t/${position.branch}/${position.index}/${order}`;
}

/** The position of the approval a tool call asks for before it runs. */
export function approvalPosition(tool: string): string {
  return `${tool}/approval`;
}

/** The position of the `n`-th interrupt a tool raises from inside its call. */
export function toolInterruptPosition(tool: string, n: number): string {
  return `${tool}/i/${n}`;
}

/** The position of the `n`-th interrupt the step raises itself. */
export function stepInterruptPosition(n: number): string {
  return `i/${n}`;
}

/** The position of the `n`-th function the step journals itself (`journal.run`). */
export function stepCallPosition(n: number): string {
  return `c/${n}`;
}

/** A model call in words: its branch and number. */
export function modelLabel(position: CallPosition): string {
  return `model call ${position.index + 1} on branch "${position.label}"`;
}

/** A tool call in words: its tool, its place in the reply and the model call on its branch. */
export function toolLabel(position: CallPosition, order: number, tool: string): string {
  return `tool call ${order + 1} (${tool}) of model call ${position.index + 1} on branch "${position.label}"`;
}

/** The fingerprint of a tool call: the tool and its raw arguments, as the model sent them. */
export function toolFingerprint(call: ToolCall): string {
  return sha256(canonicalJson(["tool", call.function.name, call.function.arguments]));
}

/** The fingerprint of an interrupt: what it asks and how its answer is checked. */
export function interruptFingerprint(kind: string, request: JsonValue, schema: JsonValue | null): string {
  return sha256(canonicalJson(["interrupt", kind, request, schema]));
}

/** The fingerprint of a journaled function of the step: its name. */
export function callFingerprint(name: string): string {
  return sha256(canonicalJson(["call", name]));
}

/** SHA-256 of the canonical JSON of a tool call's validated arguments (the ledger's digest). */
export function argumentsDigest(args: unknown): string {
  return sha256(canonicalJson(args ?? null));
}
