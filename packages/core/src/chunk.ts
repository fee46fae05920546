import { OpenRathError } from "./errors.js";
import { newId } from "./internal/id.js";
import { frozenCopy, MAX_JSON_DEPTH } from "./internal/json-checks.js";
import type { JsonValue } from "./json.js";
import { TRUST_LABELS, type TrustLabel } from "./trust.js";
import type { Usage } from "./usage.js";

/** The five kinds of chunk. `event` chunks are runtime records the model never sees. */
export type ChunkKind = "system" | "user" | "assistant" | "tool_result" | "event";

/** The chunk kinds, in a stable order. */
export const CHUNK_KINDS: readonly ChunkKind[] = Object.freeze([
  "system",
  "user",
  "assistant",
  "tool_result",
  "event",
]);

/** A tool call in OpenAI wire shape; `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  readonly id: string;
  readonly type: "function";
  readonly function: { readonly name: string; readonly arguments: string };
}

/**
 * Provider state that came with a model turn and must go back to the same provider with that
 * turn on later requests: Anthropic `thinking` / `redacted_thinking` blocks (the API rejects a
 * tool loop without them), OpenAI Responses reasoning items. Opaque to everyone else: a provider
 * skips items another provider wrote, and none of it is model-visible text.
 */
export interface ReasoningItem {
  /** The provider that wrote it (its `ProviderV1.name`, such as `anthropic` or `openai`); only it reads `data`. */
  readonly provider: string;
  /** The provider's kind of item, such as `thinking`, `redacted_thinking` or `reasoning`. */
  readonly type: string;
  /** Readable reasoning (thinking text, a summary) for display, when the provider gave any. */
  readonly text?: string;
  /** What the provider needs back, as JSON it alone interprets. */
  readonly data: JsonValue;
}

/** Fields every chunk has. */
export interface ChunkBase {
  /** Unique id (a UUID v7). A chunk keeps its id wherever it is copied, merged or serialized. */
  readonly id: string;
  readonly kind: ChunkKind;
  /** Who wrote it: an agent name or a workflow path such as `"planner/coder"`. */
  readonly author?: string;
  /** When it was made, in Unix epoch milliseconds. */
  readonly createdAt: number;
  /** The session (branch) that first appended the chunk; `provenance()` starts here. */
  readonly sessionId: string;
}

/** Instructions for the model. */
export interface SystemChunk extends ChunkBase {
  readonly kind: "system";
  readonly content: string;
}

/** A user turn. Text from outside the conversation (such as recalled memory) is marked `untrusted`. */
export interface UserChunk extends ChunkBase {
  readonly kind: "user";
  readonly content: string;
  /** True when the text did not come from the user (recalled memory, fetched pages). */
  readonly untrusted?: boolean;
  /** Where untrusted text came from, such as a memory entry id or a URL. */
  readonly source?: string;
  /**
   * Where the text came from, when it is not simply the user's (`memory_recall`, `external`,
   * `tool_output`, `model`); see `trustOf`, which derives the label of every chunk.
   */
  readonly trust?: TrustLabel;
  /** For a summary written by a model (a compressor): the usage of that call. */
  readonly usage?: Usage;
  /** For a model-written summary: the model. */
  readonly model?: string;
  /** For a model-written summary: the fingerprint of the request, for replay. */
  readonly requestHash?: string;
  /** For a summary: the usage of the chunks it replaced, by model, author and branch. */
  readonly carriedUsage?: readonly CarriedUsage[];
}

/** Usage a summary chunk carries for the chunks it replaced, kept apart by model, author and branch. */
export interface CarriedUsage {
  readonly model?: string;
  readonly author?: string;
  /** The branch (session id) of the replaced chunks. */
  readonly sessionId: string;
  readonly usage: Usage;
  /** Model calls folded into this entry. */
  readonly calls: number;
}

/** A model turn: text, tool calls, or both, with the usage of the call that produced it. */
export interface AssistantChunk extends ChunkBase {
  readonly kind: "assistant";
  /** Text of the turn, or `null` for a turn that only calls tools. */
  readonly content: string | null;
  readonly toolCalls?: readonly ToolCall[];
  /** Opaque provider state of the turn (thinking blocks, reasoning items), sent back to that provider only. */
  readonly reasoning?: readonly ReasoningItem[];
  /**
   * Usage of the model call that produced this chunk. Absent when the provider reported none (an
   * OpenAI-compatible stream without a usage chunk): the call's tokens are unknown, not zero.
   */
  readonly usage?: Usage;
  /** The model that produced it, as the provider named it. */
  readonly model?: string;
  /** Why the model stopped, as normalized by the provider (`stop`, `tool_calls`, `length`, …). */
  readonly finishReason?: string;
  /** Fingerprint of the request that produced this turn; `ReplayProvider` answers by it. */
  readonly requestHash?: string;
}

/** The result of one tool call, as the JSON text sent back to the model. */
export interface ToolResultChunk extends ChunkBase {
  readonly kind: "tool_result";
  readonly toolCallId: string;
  /** Name of the tool that was called. */
  readonly name: string;
  /** The result as a JSON document (a string). */
  readonly content: string;
  /** True when the tool failed; `content` then holds a structured error. */
  readonly isError?: boolean;
}

/**
 * A runtime record the model never sees: memory recall and commit, selector decisions,
 * compression, sandbox placement, budgets, errors.
 */
export interface EventChunk extends ChunkBase {
  readonly kind: "event";
  /** Dotted event name such as `memory.recall` or `selector.decision`. */
  readonly name: string;
  /**
   * The record's data: JSON, at most 512 levels deep. Every key is kept as data, `__proto__` and
   * `constructor` included.
   */
  readonly data?: JsonValue;
  /** Usage this event accounts for (a compression carries the usage it folded away). */
  readonly usage?: Usage;
  readonly model?: string;
}

/** Any chunk. */
export type Chunk = SystemChunk | UserChunk | AssistantChunk | ToolResultChunk | EventChunk;

type Input<C extends Chunk> = Omit<C, "id" | "createdAt" | "sessionId"> &
  Partial<Pick<C, "id" | "createdAt" | "sessionId">>;

/**
 * A chunk to append. `id`, `createdAt` and `sessionId` are filled in when absent; a chunk that
 * already has them (copied from another session) keeps them.
 */
export type ChunkInput =
  | Input<SystemChunk>
  | Input<UserChunk>
  | Input<AssistantChunk>
  | Input<ToolResultChunk>
  | Input<EventChunk>;

/** A model-visible message in OpenAI Chat Completions shape. */
export type Message =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[]; reasoning?: ReasoningItem[] }
  | { role: "tool"; content: string; tool_call_id: string };

function invalid(message: string, value: unknown): never {
  throw new OpenRathError("invalid_chunk", message, { details: { value } });
}

function isUsage(value: unknown): value is Usage {
  if (typeof value !== "object" || value === null) return false;
  const u = value as Record<string, unknown>;
  for (const key of ["promptTokens", "completionTokens", "totalTokens"]) {
    if (typeof u[key] !== "number" || !Number.isFinite(u[key]) || (u[key] as number) < 0) return false;
  }
  for (const key of ["cachedPromptTokens", "cacheWriteTokens", "reasoningTokens"]) {
    if (
      u[key] !== undefined &&
      (typeof u[key] !== "number" || !Number.isFinite(u[key]) || (u[key] as number) < 0)
    ) {
      return false;
    }
  }
  return true;
}

function isToolCall(value: unknown): value is ToolCall {
  if (typeof value !== "object" || value === null) return false;
  const c = value as Record<string, unknown>;
  const f = c.function as Record<string, unknown> | undefined;
  return (
    typeof c.id === "string" &&
    c.type === "function" &&
    typeof f === "object" &&
    f !== null &&
    typeof f.name === "string" &&
    typeof f.arguments === "string"
  );
}

const optionalString = (v: unknown) => v === undefined || typeof v === "string";

function isReasoningItem(value: unknown): value is ReasoningItem {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.provider === "string" &&
    r.provider !== "" &&
    typeof r.type === "string" &&
    optionalString(r.text) &&
    r.data !== undefined
  );
}

/**
 * Checks `input` and returns a frozen chunk with id, timestamp and branch filled in.
 *
 * @throws {OpenRathError} code `invalid_chunk` naming the field that is wrong.
 */
export function createChunk(input: ChunkInput, sessionId: string, now: number = Date.now()): Chunk {
  if (typeof input !== "object" || input === null)
    invalid(`A chunk must be an object, got ${typeof input}.`, input);
  const c = input as unknown as Record<string, unknown>;
  if (!optionalString(c.id) || c.id === "")
    invalid("Chunk `id` must be a non-empty string when given.", input);
  if (!optionalString(c.author)) invalid("Chunk `author` must be a string when given.", input);
  if (!optionalString(c.sessionId)) invalid("Chunk `sessionId` must be a string when given.", input);
  if (c.createdAt !== undefined && (typeof c.createdAt !== "number" || !Number.isFinite(c.createdAt))) {
    invalid("Chunk `createdAt` must be a number of epoch milliseconds when given.", input);
  }
  if (c.usage !== undefined && !isUsage(c.usage)) {
    invalid(
      "Chunk `usage` must have non-negative numeric promptTokens, completionTokens and totalTokens.",
      input,
    );
  }
  for (const key of ["model", "finishReason", "source", "requestHash"] as const) {
    if (!optionalString(c[key])) invalid(`Chunk \`${key}\` must be a string when given.`, input);
  }
  if (c.trust !== undefined && !TRUST_LABELS.includes(c.trust as TrustLabel)) {
    invalid(`Chunk \`trust\` must be one of ${TRUST_LABELS.join(", ")} when given.`, input);
  }
  for (const key of ["untrusted", "isError"] as const) {
    if (c[key] !== undefined && typeof c[key] !== "boolean")
      invalid(`Chunk \`${key}\` must be a boolean when given.`, input);
  }
  switch (c.kind) {
    case "system":
    case "user":
      if (typeof c.content !== "string") invalid(`A ${c.kind} chunk needs string \`content\`.`, input);
      break;
    case "assistant":
      if (c.content !== null && typeof c.content !== "string") {
        invalid("An assistant chunk needs `content` as a string or null.", input);
      }
      if (c.toolCalls !== undefined && (!Array.isArray(c.toolCalls) || !c.toolCalls.every(isToolCall))) {
        invalid(
          "Assistant `toolCalls` must be an array of { id, type: 'function', function: { name, arguments } } with string arguments.",
          input,
        );
      }
      if (c.reasoning !== undefined && (!Array.isArray(c.reasoning) || !c.reasoning.every(isReasoningItem))) {
        invalid(
          "Assistant `reasoning` must be an array of { provider, type, text?, data } with a non-empty provider and JSON data.",
          input,
        );
      }
      if (c.content === null && (c.toolCalls === undefined || (c.toolCalls as unknown[]).length === 0)) {
        invalid("An assistant chunk needs text content, tool calls, or both.", input);
      }
      break;
    case "tool_result":
      if (typeof c.toolCallId !== "string" || typeof c.name !== "string" || typeof c.content !== "string") {
        invalid("A tool_result chunk needs string `toolCallId`, `name` and `content`.", input);
      }
      break;
    case "event":
      if (typeof c.name !== "string" || c.name === "")
        invalid("An event chunk needs a non-empty string `name`.", input);
      break;
    default:
      invalid(
        `Unknown chunk kind ${JSON.stringify(c.kind)}; valid kinds are ${CHUNK_KINDS.join(", ")}.`,
        input,
      );
  }
  // Built field by field: object spread is far slower than a literal in V8, and this runs per append.
  const out: Record<string, unknown> = {
    id: (c.id as string | undefined) ?? newId(now),
    kind: c.kind,
    createdAt: (c.createdAt as number | undefined) ?? now,
    sessionId: (c.sessionId as string | undefined) ?? sessionId,
  };
  if (c.author !== undefined) out.author = c.author;
  for (const key of FIELDS[c.kind as ChunkKind]) {
    const value = c[key];
    if (value === undefined) continue;
    // Nested values are copied and frozen, so a caller mutating what it appended cannot change
    // a chunk inside an immutable session; event data is also checked to be JSON.
    if (key === "toolCalls") {
      out[key] = Object.freeze(
        (value as ToolCall[]).map((t) =>
          Object.freeze({
            id: t.id,
            type: t.type,
            function: Object.freeze({ name: t.function.name, arguments: t.function.arguments }),
          }),
        ),
      );
    } else if (key === "usage") {
      out[key] = frozenCopy(value as Usage);
    } else if (key === "reasoning") {
      out[key] = frozenJson(value, "reasoning", input);
    } else if (key === "carriedUsage") {
      out[key] = frozenJson(value, "carriedUsage", input);
    } else if (key === "data") {
      out[key] = frozenJson(value, "data", input);
    } else {
      out[key] = value;
    }
  }
  return Object.freeze(out) as unknown as Chunk;
}

/**
 * A deep-frozen copy of a JSON value. Keys are kept as plain data, `__proto__` and `constructor`
 * included (assigning `__proto__` would set the copy's prototype instead and lose the key).
 *
 * @throws `invalid_chunk` for anything JSON cannot hold, or data nested deeper than
 *   {@link MAX_JSON_DEPTH} levels (or cyclic), which could not be serialized later.
 */
function frozenJson(value: unknown, path: string, input: unknown, depth = 0): JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
    return invalid(`Chunk \`${path}\` holds ${value}, which JSON cannot represent.`, input);
  }
  if (typeof value === "object" && depth >= MAX_JSON_DEPTH) {
    return invalid(
      `Chunk \`${path.split(/[.[]/)[0]}\` nests deeper than ${MAX_JSON_DEPTH} levels (or refers to itself); flatten it or store it as a JSON string.`,
      "(too deep to show)",
    );
  }
  if (Array.isArray(value))
    return Object.freeze(value.map((v, i) => frozenJson(v, `${path}[${i}]`, input, depth + 1)));
  if (typeof value === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const copy = frozenJson(v, `${path}.${k}`, input, depth + 1);
      if (k === "__proto__") {
        Object.defineProperty(out, k, { value: copy, enumerable: true, writable: true, configurable: true });
      } else {
        out[k] = copy;
      }
    }
    return Object.freeze(out);
  }
  return invalid(
    `Chunk \`${path}\` holds a ${typeof value === "object" ? "non-plain object" : typeof value}; event data must be JSON.`,
    input,
  );
}

/** The kind-specific fields each chunk kind keeps, in serialization order. */
const FIELDS: Record<ChunkKind, readonly string[]> = {
  system: ["content"],
  user: ["content", "untrusted", "source", "trust", "usage", "model", "requestHash", "carriedUsage"],
  assistant: ["content", "toolCalls", "reasoning", "usage", "model", "finishReason", "requestHash"],
  tool_result: ["toolCallId", "name", "content", "isError"],
  event: ["name", "data", "usage", "model"],
};

/** The model-visible message of `chunk`, or `undefined` for an `event` chunk. */
export function chunkToMessage(chunk: Chunk): Message | undefined {
  switch (chunk.kind) {
    case "system":
      return { role: "system", content: chunk.content };
    case "user":
      return { role: "user", content: chunk.content };
    case "assistant": {
      const message: Extract<Message, { role: "assistant" }> =
        chunk.toolCalls && chunk.toolCalls.length > 0
          ? {
              role: "assistant",
              content: chunk.content,
              tool_calls: chunk.toolCalls.map((c) => ({ ...c, function: { ...c.function } })),
            }
          : { role: "assistant", content: chunk.content };
      if (chunk.reasoning && chunk.reasoning.length > 0) message.reasoning = [...chunk.reasoning];
      return message;
    }
    case "tool_result":
      return { role: "tool", content: chunk.content, tool_call_id: chunk.toolCallId };
    case "event":
      return undefined;
  }
}

/**
 * Chunk inputs for OpenAI-shaped `messages`. A tool message gets its tool name from the assistant
 * call it answers.
 *
 * @throws {OpenRathError} code `invalid_chunk` for an unknown role or a malformed message.
 */
export function messagesToChunkInputs(messages: readonly Message[]): ChunkInput[] {
  if (!Array.isArray(messages)) {
    throw new OpenRathError("invalid_argument", "Session.fromMessages expects an array of messages.", {
      details: { value: messages },
    });
  }
  const names = new Map<string, string>();
  return messages.map((m, i): ChunkInput => {
    switch (m?.role) {
      case "system":
      case "user":
        return { kind: m.role, content: m.content };
      case "assistant": {
        for (const call of m.tool_calls ?? []) names.set(call.id, call.function?.name);
        const reasoning = m.reasoning && m.reasoning.length > 0 ? { reasoning: m.reasoning } : {};
        return m.tool_calls && m.tool_calls.length > 0
          ? { kind: "assistant", content: m.content ?? null, toolCalls: m.tool_calls, ...reasoning }
          : { kind: "assistant", content: m.content ?? "", ...reasoning };
      }
      case "tool":
        return {
          kind: "tool_result",
          toolCallId: m.tool_call_id,
          name: names.get(m.tool_call_id) ?? "",
          content: m.content,
        };
      default:
        throw new OpenRathError(
          "invalid_chunk",
          `Message ${i} has role ${JSON.stringify((m as { role?: unknown })?.role)}; valid roles are system, user, assistant, tool.`,
          { details: { index: i, value: m } },
        );
    }
  });
}
