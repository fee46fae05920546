import { ProviderError, type ProviderResponse, type ToolCall } from "@openrath/core";
import type { ChatCompletion } from "openai/resources/chat/completions";
import { finalResponse, LEGACY_FUNCTION_CALL_ID } from "./final-response.js";
import { toUsage } from "./to-usage.js";

/**
 * The normalized response for a Chat Completions body: the first choice's text (its refusal
 * appended, if any), its function tool calls with raw `arguments`, the mapped finish reason, usage
 * and the model the server named (else `requestedModel`).
 *
 * @throws {ProviderError} `provider_response` when the body has no usable choice.
 */
export function fromWireResponse(completion: ChatCompletion, requestedModel: string): ProviderResponse {
  const choices = Array.isArray(completion?.choices) ? completion.choices : [];
  const choice = choices.find((c) => c?.index === 0) ?? choices[0];
  const message = choice?.message;
  if (!message || typeof message !== "object") {
    throw new ProviderError(
      "provider_response",
      `The server answered for model "${requestedModel}" with no choices[0].message, so there is no reply to use. Check that the base URL points at an OpenAI-compatible /chat/completions endpoint.`,
      { details: { model: requestedModel, body: completion as unknown } },
    );
  }
  const toolCalls: ToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    if (call.type !== "function" || !call.function) continue;
    toolCalls.push({
      id: call.id ?? "",
      type: "function",
      function: { name: call.function.name ?? "", arguments: call.function.arguments ?? "" },
    });
  }
  if (toolCalls.length === 0 && message.function_call) {
    toolCalls.push({
      id: LEGACY_FUNCTION_CALL_ID,
      type: "function",
      function: { name: message.function_call.name ?? "", arguments: message.function_call.arguments ?? "" },
    });
  }
  const refusal = typeof message.refusal === "string" ? message.refusal : "";
  return finalResponse({
    text: (typeof message.content === "string" ? message.content : "") + refusal,
    refused: refusal !== "",
    toolCalls,
    finishReason: choice.finish_reason,
    usage: toUsage(completion.usage),
    model:
      typeof completion.model === "string" && completion.model !== "" ? completion.model : requestedModel,
  });
}
