import type { ProviderRequest, ToolChoice, ToolSpec } from "@openrath/core";
import type { RequestDefaults } from "./to-wire-request.js";

/** How one OpenAI API spells the fields that {@link setSharedFields} sets. */
export interface SharedFieldShapes {
  /** One tool as the API takes it. */
  readonly tool: (tool: ToolSpec) => unknown;
  /** The tool choice as the API takes it. */
  readonly toolChoice: (choice: ToolChoice) => unknown;
  /** The body field that carries `maxTokens`. */
  readonly maxTokensField: string;
}

/**
 * Sets on `body` the fields Chat Completions and the Responses API take alike, each the request's
 * value, else the provider's default, and left out when neither has one: `tools`, with
 * `tool_choice` and `parallel_tool_calls` only beside tools (OpenAI rejects them without),
 * `temperature`, `top_p`, and `maxTokens` under `shapes.maxTokensField`.
 */
export function setSharedFields(
  body: Record<string, unknown>,
  request: ProviderRequest,
  defaults: RequestDefaults,
  shapes: SharedFieldShapes,
): void {
  const tools = request.tools ?? [];
  if (tools.length > 0) {
    body.tools = tools.map(shapes.tool);
    if (request.toolChoice !== undefined) body.tool_choice = shapes.toolChoice(request.toolChoice);
    const parallel = request.parallelToolCalls ?? defaults.parallelToolCalls;
    if (parallel !== undefined) body.parallel_tool_calls = parallel;
  }
  const temperature = request.temperature ?? defaults.temperature;
  if (temperature !== undefined) body.temperature = temperature;
  const topP = request.topP ?? defaults.topP;
  if (topP !== undefined) body.top_p = topP;
  const maxTokens = request.maxTokens ?? defaults.maxTokens;
  if (maxTokens !== undefined) body[shapes.maxTokensField] = maxTokens;
}
