import {
  type ProviderCallOptions,
  type ProviderDelta,
  ProviderError,
  type ProviderRequest,
  type ProviderResponse,
  type Usage,
} from "@openrath/core";
import { DeltaAccumulator } from "@openrath/core/backend";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import { type CallSettings, completeCall, type StreamFold, streamCall } from "./call-driver.js";
import { finalResponse, LEGACY_FUNCTION_CALL_ID } from "./final-response.js";
import { fromWireResponse } from "./from-wire-response.js";
import { toUsage } from "./to-usage.js";
import { type RequestDefaults, toWireRequest } from "./to-wire-request.js";
import { ToolCallDeltas } from "./tool-call-deltas.js";

/** The fold of a Chat Completions stream: content, refusal and tool-call pieces of choice 0. */
function chatFold(requested: string, baseURL: string): StreamFold<ChatCompletionChunk> {
  const accumulator = new DeltaAccumulator();
  const toolCalls = new ToolCallDeltas();
  let refused = false;
  let finishReason: string | undefined;
  let usage: Usage | undefined;
  let answeredModel: string | undefined;
  return {
    add(chunk) {
      if (typeof chunk?.model === "string" && chunk.model !== "") answeredModel = chunk.model;
      usage = toUsage(chunk?.usage) ?? usage;
      const choices = Array.isArray(chunk?.choices) ? chunk.choices : [];
      const choice = choices.find((c) => c?.index === 0) ?? choices[0];
      if (!choice) return [];
      if (choice.finish_reason) finishReason = choice.finish_reason;
      const delta = choice.delta ?? {};
      const out: ProviderDelta[] = [];
      if (typeof delta.content === "string" && delta.content !== "")
        out.push({ type: "text", text: delta.content });
      if (typeof delta.refusal === "string" && delta.refusal !== "") {
        refused = true;
        out.push({ type: "text", text: delta.refusal });
      }
      for (const piece of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        const d = toolCalls.next(piece);
        if (d) out.push(d);
      }
      if (delta.function_call && !delta.tool_calls?.length) {
        const d = toolCalls.next({ index: 0, id: LEGACY_FUNCTION_CALL_ID, function: delta.function_call });
        if (d) out.push(d);
      }
      for (const d of out) accumulator.add(d);
      return out;
    },
    finish(started) {
      if (finishReason === undefined) {
        throw new ProviderError(
          "provider_stream",
          `The stream from model "${requested}" ended before the model finished (no finish_reason and no [DONE]).${started ? " Its partial output was already delivered, so it is not retried." : " Retry the call."}`,
          { retryable: !started, details: { model: requested, baseURL } },
        );
      }
      const model = answeredModel ?? requested;
      const folded = accumulator.response({ model });
      return finalResponse({
        text: folded.content ?? "",
        refused,
        toolCalls: folded.toolCalls,
        finishReason,
        usage,
        model,
      });
    },
  };
}

/**
 * `complete` and `stream` over Chat Completions (`POST /chat/completions`). Streams ask for
 * `stream_options: { include_usage: true }` and end with one `response` equal to what `complete`
 * returns.
 */
export function chatApi(settings: CallSettings, defaults: RequestDefaults, model: string) {
  return {
    complete(request: ProviderRequest, call: ProviderCallOptions = {}): Promise<ProviderResponse> {
      const body = toWireRequest(request, defaults, model, false);
      const requested = body.model as string;
      return completeCall(settings, requested, call.signal, async (options) => {
        const completion: ChatCompletion = await settings.client.chat.completions.create(
          body as unknown as ChatCompletionCreateParamsNonStreaming,
          options,
        );
        return fromWireResponse(completion, requested);
      });
    },

    stream(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): AsyncGenerator<ProviderDelta, void, undefined> {
      const body = toWireRequest(request, defaults, model, true);
      const requested = body.model as string;
      return streamCall(
        settings,
        requested,
        call.signal,
        (options) =>
          settings.client.chat.completions.create(
            body as unknown as ChatCompletionCreateParamsStreaming,
            options,
          ) as Promise<AsyncIterable<ChatCompletionChunk>>,
        chatFold(requested, settings.baseURL),
      );
    },
  };
}
