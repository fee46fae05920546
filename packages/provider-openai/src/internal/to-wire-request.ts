import type { Message, ProviderRequest, ResponseFormat, ToolChoice, ToolSpec } from "@openrath/core";
import { setSharedFields } from "./shared-fields.js";

/** Provider-level defaults that a request's own fields override. */
export interface RequestDefaults {
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxTokens?: number;
  readonly stop?: readonly string[];
  readonly seed?: number;
  readonly parallelToolCalls?: boolean;
  /** The body field that carries `maxTokens` (default `max_completion_tokens`). */
  readonly maxTokensField?: "max_completion_tokens" | "max_tokens";
  readonly extra?: Readonly<Record<string, unknown>>;
}

/**
 * The messages as Chat Completions takes them: OpenRath's own `reasoning` items (opaque state for
 * the provider that wrote them) are left out, since Chat Completions has no place for them and
 * OpenAI rejects unknown message fields.
 */
function wireMessages(messages: readonly Message[]): readonly Message[] {
  if (!messages.some((m) => m.role === "assistant" && m.reasoning !== undefined)) return messages;
  return messages.map((m) => {
    if (m.role !== "assistant" || m.reasoning === undefined) return m;
    const { reasoning: _, ...rest } = m;
    return rest;
  });
}

function wireTool(tool: ToolSpec) {
  const fn = tool.function;
  return {
    type: "function" as const,
    function: {
      name: fn.name,
      ...(fn.description !== undefined ? { description: fn.description } : {}),
      parameters: fn.parameters,
      ...(fn.strict !== undefined ? { strict: fn.strict } : {}),
    },
  };
}

function wireToolChoice(choice: ToolChoice) {
  return typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } };
}

function wireResponseFormat(format: ResponseFormat) {
  if (format.type !== "json_schema") return { type: format.type };
  return {
    type: "json_schema",
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.strict !== undefined ? { strict: format.strict } : {}),
    },
  };
}

/**
 * The Chat Completions body for `request`: messages as they are (they are already OpenAI-shaped;
 * `reasoning` items left out), `maxTokens` as `max_completion_tokens` or, for servers that only
 * read the older name, `max_tokens`,
 * function tools, tool choice, sampling fields (the request's, else the provider's defaults),
 * structured output, then `extra` (defaults', then the request's) merged last. `tool_choice` and
 * `parallel_tool_calls` are sent only with tools, since OpenAI rejects them without. `stream` and
 * `stream_options` are set for a streamed call (`stream_options` may be overridden through
 * `extra`) and removed for a complete one.
 */
export function toWireRequest(
  request: ProviderRequest,
  defaults: RequestDefaults,
  model: string,
  stream: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model ?? model,
    messages: wireMessages(request.messages),
  };
  setSharedFields(body, request, defaults, {
    tool: wireTool,
    toolChoice: wireToolChoice,
    maxTokensField: defaults.maxTokensField ?? "max_completion_tokens",
  });
  const stop = request.stop ?? defaults.stop;
  if (stop !== undefined && stop.length > 0) body.stop = [...stop];
  const seed = request.seed ?? defaults.seed;
  if (seed !== undefined) body.seed = seed;
  if (request.responseFormat !== undefined) body.response_format = wireResponseFormat(request.responseFormat);
  if (stream) body.stream_options = { include_usage: true };
  Object.assign(body, defaults.extra, request.extra);
  if (stream) body.stream = true;
  else {
    delete body.stream;
    delete body.stream_options;
  }
  return body;
}
