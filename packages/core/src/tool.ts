import { OpenRathError } from "./errors.js";
import { validateJsonSchema } from "./internal/json-schema.js";
import type { JsonObject, JsonValue } from "./json.js";
import type { ToolSpec } from "./provider.js";
import type { SandboxV1 } from "./sandbox.js";
import type { Session } from "./session.js";

/**
 * The parts of a Standard Schema v1 (zod 4, valibot, arktype…) that tools use: validation, and the
 * optional Standard JSON Schema converter for the schema sent to the model.
 */
export interface StandardSchemaLike<Output = unknown> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    validate(
      value: unknown,
    ):
      | { readonly value: Output; readonly issues?: undefined }
      | { readonly issues: readonly { readonly message: string; readonly path?: readonly unknown[] }[] }
      | Promise<
          | { readonly value: Output; readonly issues?: undefined }
          | { readonly issues: readonly { readonly message: string; readonly path?: readonly unknown[] }[] }
        >;
    readonly jsonSchema?: { input(options: { readonly target: string }): Record<string, unknown> };
    readonly types?: { readonly input: unknown; readonly output: Output };
  };
}

/**
 * What calling a tool does to the world outside the run, which decides what a durable runtime may
 * do when a crash leaves a call's outcome unknown:
 *
 * - `none`: nothing outside the process (pure computation); never ledgered, always safe to repeat.
 * - `read_only`: reads the world, changes nothing; safe to repeat.
 * - `idempotent`: changes the world, and repeating the same call has no further effect *when it
 *   carries its idempotency key* (see {@link ToolDefinition.idempotencyKey}); without a key a repeat
 *   is not known to be safe.
 * - `non_idempotent`: a repeat may act twice (send a message, charge a card). The default for
 *   user tools.
 */
export type EffectClass = "none" | "read_only" | "idempotent" | "non_idempotent";

/** Every {@link EffectClass}, in a stable order. */
export const EFFECT_CLASSES: readonly EffectClass[] = Object.freeze([
  "none",
  "read_only",
  "idempotent",
  "non_idempotent",
]);

/**
 * A request for a human decision raised from inside a tool (see {@link ToolContext.interrupt});
 * the same shape as the durable runtime's step-level `InterruptRequest`.
 */
export interface ToolInterruptRequest {
  readonly kind: "approval" | "input" | "review";
  /** What the operator is shown (JSON). */
  readonly request: JsonValue;
  /** A Standard Schema or JSON Schema the decision's payload must satisfy. */
  readonly schema?: unknown;
  /** How long to wait for a decision, in milliseconds (default: no limit). */
  readonly timeoutMs?: number;
  /** The decision taken when `timeoutMs` passes; without one the run ends `timed_out`. */
  readonly onTimeout?: ToolInterruptDecision;
}

/** A human decision on a {@link ToolInterruptRequest}. */
export interface ToolInterruptDecision {
  readonly kind: "approve" | "edit" | "reject" | "respond";
  readonly actor?: string;
  readonly reason?: string;
  readonly payload?: JsonValue;
}

/** What a `needsApproval` function gets besides the arguments. */
export interface ApprovalContext {
  /** The session as of the turn that called the tool. */
  readonly session: Session;
  /** Name of the agent that called the tool. */
  readonly agent: string;
  /** The model's id for this call. */
  readonly callId: string;
}

// Method shorthand keeps these bivariant in `Args`, like `execute`, so any `Tool<Args>` fits a `Tool<never>[]`.
/** A function of a call's arguments giving its idempotency key. */
export type KeyRule<Args> = { rule(args: Args): string }["rule"];
/** A function of a call's arguments deciding whether it needs approval. */
export type ApprovalRule<Args> = {
  rule(args: Args, context: ApprovalContext): boolean | Promise<boolean>;
}["rule"];

/** What a running tool gets besides its arguments. */
export interface ToolContext {
  /** The session the agent is working on, as of the turn that called the tool. */
  readonly session: Session;
  /** Name of the agent that called the tool. */
  readonly agent: string;
  /** The model's id for this call. */
  readonly callId: string;
  /** Fires when the run is aborted; long tools should stop. */
  readonly signal: AbortSignal;
  /** The session's sandbox, opened on first use. Rejects with `not_placed` for an unplaced session. */
  sandbox(): Promise<SandboxV1>;
  /** Reports progress to `agent.stream()` consumers as a `tool_progress` event. */
  emit(data: JsonValue): void;
  /**
   * The call's idempotency key when the tool declares one and a durable runtime journals the call:
   * send it to the service the tool calls (an `Idempotency-Key` header), so a retried call after a
   * crash is not applied twice. `undefined` outside a durable step.
   */
  readonly idempotencyKey?: string;
  /**
   * Pauses the run for a human decision and resolves with it (inside a durable step only; absent
   * otherwise). The tool is called again from its start once the decision arrives, and this call
   * then returns the decision at once: ask before acting, not after.
   */
  readonly interrupt?: (request: ToolInterruptRequest) => Promise<ToolInterruptDecision>;
  /** What the runtime running the call adds (a durable runtime's journal, say), keyed by name. */
  readonly extensions?: Readonly<Record<string, unknown>>;
  /**
   * The value of secret `name`, read now from the run's secret provider (`RunOptions.secrets`,
   * else the process-wide one, which reads the environment by default). The value is replaced
   * by `[secret NAME]` wherever it appears in what the tool returns or throws, so it never
   * enters the transcript. Always set when an agent runs the tool; absent only in a context
   * built by hand.
   *
   * @throws {OpenRathError} `secret_not_found` naming the secret (never a value).
   */
  readonly secret?: (name: string) => Promise<string>;
}

/** A model-callable function with a JSON Schema for its arguments. Make one with {@link defineTool}. */
export interface Tool<Args = unknown, Result = unknown> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object, as sent to the model. */
  readonly parameters: JsonObject;
  /** Offered to the model only when the session is placed on a sandbox (the built-in sandbox tools). */
  readonly needsSandbox: boolean;
  /** Most characters of JSON the result may take in the transcript (default 48 000). */
  readonly maxResultChars: number;
  /**
   * What a call does outside the run; see {@link EffectClass}. `defineTool` always sets it (default
   * `non_idempotent`); absent on a hand-made tool means `non_idempotent`.
   */
  readonly effect?: EffectClass;
  /**
   * How a call's idempotency key is made, when the tool has one: `true` for a key unique to the
   * call and stable across resumes, or a function of the arguments. See {@link ToolDefinition.idempotencyKey}.
   */
  readonly idempotencyKey?: true | KeyRule<Args>;
  /**
   * Whether a call needs a human's approval before it runs: `true`, or a function of the arguments.
   * See {@link ToolDefinition.needsApproval}.
   */
  readonly needsApproval?: boolean | ApprovalRule<Args>;
  /**
   * The lane a call runs in: calls of one turn with the same key run one after another in call
   * order, calls with different keys run at the same time.
   */
  resourceKey(args: Args): string;
  /**
   * Checks raw arguments; returns the parsed value (an `Args`, typed `unknown` so any tool fits a
   * `Tool<never>[]` list) or the problems, one per line.
   */
  validate(raw: unknown): Promise<{ ok: true; value: unknown } | { ok: false; problems: string[] }>;
  execute(args: Args, context: ToolContext): Promise<Result> | Result;
}

/** Options of {@link defineTool}. */
export interface ToolDefinition<Args, Result> {
  /** Name the model calls: letters, digits, `_` and `-`, at most 64 characters. */
  readonly name: string;
  readonly description: string;
  /** A Standard Schema (zod 4 works) or a JSON Schema object for the arguments. */
  readonly parameters: StandardSchemaLike<Args> | JsonObject;
  execute(args: Args, context: ToolContext): Promise<Result> | Result;
  /**
   * Lane of a call (see {@link Tool.resourceKey}). Default: `"global"`, so tools without a key run
   * one at a time; give tools that may overlap a key, such as `(args) => \`fetch:${args.url}\``.
   */
  readonly resourceKey?: (args: Args) => string;
  /** Shorthand for a resource key unique per call: every call may run in parallel. */
  readonly parallel?: boolean;
  readonly needsSandbox?: boolean;
  readonly maxResultChars?: number;
  /**
   * What a call does outside the run (default `"non_idempotent"`, the conservative class). A durable
   * runtime records `idempotent` and `non_idempotent` calls in its effect ledger and uses the class
   * to decide what to do with a call a crash left unfinished: `none`, `read_only` and keyed
   * `idempotent` calls are made again; `non_idempotent` and unkeyed `idempotent` ones park the run
   * in `needs_review` for an operator to resolve.
   */
  readonly effect?: EffectClass;
  /**
   * The call's idempotency key, which the tool sends to the service it calls
   * ({@link ToolContext.idempotencyKey}). `true`: a key unique to this call, stable across resumes
   * (a retry of the same call). A function: a key of the arguments — within a run, a second call with
   * the same key and the same arguments returns the first one's result without calling the tool, and
   * the same key with other arguments is a conflict.
   */
  readonly idempotencyKey?: true | KeyRule<Args>;
  /**
   * Ask a human before each call (`true`), or before the calls for which the function says so. In a
   * durable step the run waits for an approval decision; a rejection goes back to the model as a
   * structured `tool_rejected` result. Outside a durable step nobody can approve, so such calls are
   * refused with `approval_required`.
   */
  readonly needsApproval?: boolean | ApprovalRule<Args>;
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const EMPTY_OBJECT_SCHEMA: JsonObject = Object.freeze({ type: "object", properties: {} });
let parallelCounter = 0;

function isStandardSchema(value: unknown): value is StandardSchemaLike {
  return typeof value === "object" && value !== null && "~standard" in value;
}

/** Drops the `$schema` key and other top-level noise some converters add. */
function cleanSchema(schema: Record<string, unknown>): JsonObject {
  const { $schema: _ignored, ...rest } = schema;
  return rest as JsonObject;
}

/**
 * Defines a tool. Arguments are validated before `execute` runs: invalid ones go back to the model
 * as an `invalid_tool_arguments` result, never into your code.
 *
 * Declare what a call does to the world with `effect` ({@link EffectClass}). A tool that declares
 * none is `non_idempotent`: under the durable runtime, a call whose outcome a crash left unknown
 * (its worker lost the lease mid-call) is not sent again, and the run parks in `needs_review` until
 * an operator resolves that call (succeeded with its result, failed, or retry). Declare `read_only`
 * or `none` for calls that are safe to repeat, and `idempotent` with an `idempotencyKey` for calls
 * the service deduplicates by key (they are sent again with the same key; an `idempotent` tool
 * without a key is reviewed like a `non_idempotent` one). Outside a durable run the class changes
 * nothing.
 *
 * @example
 * ```ts
 * const wordCount = defineTool({
 *   name: "word_count",
 *   description: "Count the words in a text",
 *   parameters: z.object({ text: z.string() }),
 *   parallel: true,
 *   effect: "none", // pure computation: safe to repeat after a crash
 *   execute: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length }),
 * });
 * const createInvoice = defineTool({
 *   name: "create_invoice",
 *   description: "Create the invoice of an order",
 *   parameters: z.object({ orderId: z.string(), cents: z.number().int() }),
 *   effect: "idempotent", // sent again after a crash, with the same key
 *   idempotencyKey: ({ orderId }) => `invoice:${orderId}`,
 *   execute: (args, { idempotencyKey }) => billing.createInvoice(args, { idempotencyKey }),
 * });
 * ```
 * @throws {OpenRathError} `invalid_argument` for a bad name or a schema that cannot give JSON Schema.
 */
export function defineTool<Args = Record<string, unknown>, Result = unknown>(
  definition: ToolDefinition<Args, Result>,
): Tool<Args, Result> {
  if (typeof definition?.name !== "string" || !NAME.test(definition.name)) {
    throw new OpenRathError(
      "invalid_argument",
      `Tool name ${JSON.stringify(definition?.name)} is not valid: use 1-64 letters, digits, "_" or "-".`,
      { details: { name: definition?.name } },
    );
  }
  if (typeof definition.execute !== "function") {
    throw new OpenRathError("invalid_argument", `Tool "${definition.name}" needs an execute function.`);
  }
  const schema = definition.parameters ?? EMPTY_OBJECT_SCHEMA;
  let parameters: JsonObject;
  let validate: Tool<Args, Result>["validate"];
  if (isStandardSchema(schema)) {
    const converter = schema["~standard"].jsonSchema;
    if (!converter) {
      throw new OpenRathError(
        "invalid_argument",
        `Tool "${definition.name}": its ${schema["~standard"].vendor} schema cannot produce JSON Schema (no Standard JSON Schema support). Upgrade the library (zod >= 4.2) or pass a JSON Schema object.`,
      );
    }
    parameters = cleanSchema(converter.input({ target: "draft-2020-12" }));
    validate = async (raw) => {
      const result = await schema["~standard"].validate(raw);
      if (result.issues === undefined) return { ok: true, value: result.value as Args };
      return {
        ok: false,
        problems: result.issues.map((issue) => {
          const path = (issue.path ?? []).map((p) =>
            typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p),
          );
          return `${path.length > 0 ? `$.${path.join(".")}` : "$"}: ${issue.message}`;
        }),
      };
    };
  } else {
    parameters = cleanSchema(schema as Record<string, unknown>);
    validate = async (raw) => {
      const problems = validateJsonSchema(schema, raw);
      return problems.length === 0 ? { ok: true, value: raw as Args } : { ok: false, problems };
    };
  }
  const effect = definition.effect ?? "non_idempotent";
  if (!EFFECT_CLASSES.includes(effect)) {
    throw new OpenRathError(
      "invalid_argument",
      `Tool "${definition.name}": effect ${JSON.stringify(effect)} is not one of ${EFFECT_CLASSES.join(", ")}.`,
      { details: { name: definition.name, effect } },
    );
  }
  const key = definition.idempotencyKey;
  if (key !== undefined && key !== true && typeof key !== "function") {
    throw new OpenRathError(
      "invalid_argument",
      `Tool "${definition.name}": idempotencyKey must be true or a function of the arguments, got ${JSON.stringify(key)}.`,
      { details: { name: definition.name } },
    );
  }
  const approval = definition.needsApproval;
  if (approval !== undefined && typeof approval !== "boolean" && typeof approval !== "function") {
    throw new OpenRathError(
      "invalid_argument",
      `Tool "${definition.name}": needsApproval must be a boolean or a function of the arguments, got ${JSON.stringify(approval)}.`,
      { details: { name: definition.name } },
    );
  }
  const keyOf =
    definition.resourceKey ?? (definition.parallel ? () => `parallel:${++parallelCounter}` : () => "global");
  return Object.freeze({
    name: definition.name,
    description: definition.description ?? "",
    parameters,
    needsSandbox: definition.needsSandbox ?? false,
    maxResultChars: definition.maxResultChars ?? 48_000,
    resourceKey: keyOf,
    validate,
    execute: definition.execute,
    effect,
    ...(key !== undefined ? { idempotencyKey: key } : {}),
    ...(approval !== undefined ? { needsApproval: approval } : {}),
  });
}

/** The function specs of `tools` for a provider request, sorted by name (a stable prompt). */
export function toolSpecs(tools: readonly Tool<never>[]): ToolSpec[] {
  return [...tools]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
}

/** Kinds of failed tool results, as `error_kind` in the result JSON. */
export type ToolErrorKind =
  | "invalid_tool_arguments"
  | "unknown_tool"
  | "tool_execution_exception"
  | "tool_policy_denied"
  | (string & {});

/** The JSON text of a failed tool call: `{"ok":false,"error_kind","message","detail"?}`. */
export function toolErrorContent(kind: ToolErrorKind, message: string, detail?: string): string {
  return JSON.stringify({
    ok: false,
    error_kind: kind,
    message,
    ...(detail !== undefined ? { detail: detail.length > 4000 ? `${detail.slice(0, 4000)}…` : detail } : {}),
  });
}

/**
 * The JSON text a tool's return value becomes in the transcript. `undefined` is `{"ok":true}`;
 * values that JSON cannot hold (bigints, cycles) are described instead; results longer than
 * `maxChars` are replaced by a preview with the full length.
 */
export function projectToolResult(value: unknown, maxChars = 48_000): string {
  let text: string;
  if (value === undefined) return '{"ok":true}';
  try {
    text = JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v)) ?? '{"ok":true}';
  } catch (error) {
    text = JSON.stringify({ ok: true, unserializable: String(value), reason: (error as Error).message });
  }
  if (text.length <= maxChars) return text;
  // The preview is escaped again inside the envelope, so shrink it until the whole fits.
  let keep = Math.max(0, maxChars - 100);
  for (;;) {
    const out = JSON.stringify({
      ok: true,
      truncated: true,
      total_chars: text.length,
      preview: text.slice(0, keep),
    });
    if (out.length <= maxChars || keep === 0) return out;
    keep = Math.floor(keep * Math.min(0.95, maxChars / out.length));
  }
}

/**
 * Parses raw tool-call arguments. Empty text means no arguments (`{}`), which is valid: tools
 * without parameters are called that way.
 */
export function parseToolArguments(
  raw: string,
): { ok: true; value: unknown } | { ok: false; message: string } {
  if (raw.trim() === "") return { ok: true, value: {} };
  try {
    const value = JSON.parse(raw);
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return {
        ok: false,
        message: `Tool arguments must be a JSON object, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}.`,
      };
    }
    return { ok: true, value };
  } catch (error) {
    return { ok: false, message: `Tool arguments are not valid JSON: ${(error as Error).message}` };
  }
}
