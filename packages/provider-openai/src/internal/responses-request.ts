import {
  ProviderError,
  type ProviderRequest,
  type ResponseFormat,
  type ToolChoice,
  type ToolSpec,
} from "@openrath/core";
import { toInputItems } from "./responses-input.js";
import { setSharedFields } from "./shared-fields.js";
import type { RequestDefaults } from "./to-wire-request.js";

function wireTool(tool: ToolSpec) {
  const fn = tool.function;
  return {
    type: "function" as const,
    name: fn.name,
    ...(fn.description !== undefined ? { description: fn.description } : {}),
    parameters: fn.parameters,
    // The Responses API holds tools to their schema unless told otherwise; Chat Completions and
    // OpenRath do not, so say it.
    strict: fn.strict ?? false,
  };
}

function wireToolChoice(choice: ToolChoice) {
  return typeof choice === "string" ? choice : { type: "function", name: choice.name };
}

function wireFormat(format: ResponseFormat) {
  if (format.type !== "json_schema") return { type: format.type };
  return {
    type: "json_schema",
    name: format.name,
    schema: format.schema,
    ...(format.strict !== undefined ? { strict: format.strict } : {}),
  };
}

/**
 * The Responses API body (`POST /responses`) for `request`: `input` items from the messages (see
 * `toInputItems`), flat function tools (`strict` false unless the tool says true), tool choice,
 * `temperature`, `top_p`, `max_output_tokens` (from `maxTokens`), `parallel_tool_calls` (with
 * tools), structured output as `text.format`, then `extra` (the defaults', then the request's).
 * `seed` has no Responses field and is not sent; `stream` is set for a streamed call only.
 *
 * @throws ProviderError `provider_bad_request` for stop sequences, which the Responses API does
 * not have (dropping them would change the output silently).
 */
export function toResponsesRequest(
  request: ProviderRequest,
  defaults: RequestDefaults,
  model: string,
  stream: boolean,
): Record<string, unknown> {
  const requested = request.model ?? model;
  const stop = request.stop ?? defaults.stop;
  if (stop !== undefined && stop.length > 0) {
    throw new ProviderError(
      "provider_bad_request",
      `The Responses API has no stop sequences, so ${JSON.stringify(stop)} cannot be sent for model "${requested}". Remove \`stop\`, or use openaiProvider({ api: "chat" }).`,
      { retryable: false, details: { model: requested, stop } },
    );
  }
  const extra = { ...defaults.extra, ...request.extra };
  const body: Record<string, unknown> = {
    model: requested,
    input: toInputItems(request.messages, extra.store === false),
  };
  setSharedFields(body, request, defaults, {
    tool: wireTool,
    toolChoice: wireToolChoice,
    maxTokensField: "max_output_tokens",
  });
  if (request.responseFormat !== undefined) body.text = { format: wireFormat(request.responseFormat) };
  Object.assign(body, extra);
  if (stream) body.stream = true;
  else delete body.stream;
  return body;
}
