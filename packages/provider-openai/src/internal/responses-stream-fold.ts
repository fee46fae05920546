import { type ProviderDelta, ProviderError } from "@openrath/core";
import type { StreamFold } from "./call-driver.js";
import { fromResponse, responseFailure } from "./responses-response.js";

type Event = Record<string, unknown> & { readonly type?: unknown };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The fold of a Responses API event stream. Text comes from `response.output_text.delta` (and
 * `response.refusal.delta`); a function call opens with `response.output_item.added` (its
 * `call_id` and name, numbered among the turn's calls) and grows by
 * `response.function_call_arguments.delta`; reasoning summaries stream too but are not deltas:
 * they reach the caller as the response's reasoning items. The response is the one in
 * `response.completed` (or `response.incomplete`), mapped exactly as `complete` maps a body, with
 * the items of `response.output_item.done` standing in when a server sends it without `output`.
 * `response.failed` and `error` events fail by their code; other events carry nothing needed.
 */
export function responsesFold(requested: string, baseURL: string): StreamFold<Event> {
  const calls = new Map<number, number>();
  const done = new Map<number, Record<string, unknown>>();
  let final: Record<string, unknown> | undefined;
  return {
    add(event, started): ProviderDelta[] {
      switch (event.type) {
        case "response.output_text.delta":
        case "response.refusal.delta":
          return typeof event.delta === "string" && event.delta !== ""
            ? [{ type: "text", text: event.delta }]
            : [];
        case "response.output_item.added": {
          const item = isObject(event.item) ? event.item : {};
          if (item.type !== "function_call" || typeof event.output_index !== "number") return [];
          const index = calls.size;
          calls.set(event.output_index, index);
          const delta: ProviderDelta = {
            type: "tool_call",
            index,
            ...(typeof item.call_id === "string" && item.call_id !== "" ? { id: item.call_id } : {}),
            ...(typeof item.name === "string" && item.name !== "" ? { name: item.name } : {}),
            ...(typeof item.arguments === "string" && item.arguments !== ""
              ? { arguments: item.arguments }
              : {}),
          };
          return [delta];
        }
        case "response.function_call_arguments.delta": {
          const index = typeof event.output_index === "number" ? calls.get(event.output_index) : undefined;
          if (index === undefined || typeof event.delta !== "string" || event.delta === "") return [];
          return [{ type: "tool_call", index, arguments: event.delta }];
        }
        case "response.output_item.done":
          if (typeof event.output_index === "number" && isObject(event.item))
            done.set(event.output_index, event.item);
          return [];
        case "response.completed":
        case "response.incomplete":
          if (isObject(event.response)) final = event.response;
          return [];
        case "response.failed": {
          const response = isObject(event.response) ? event.response : {};
          throw responseFailure(isObject(response.error) ? response.error : {}, requested, started);
        }
        case "error":
          throw responseFailure({ code: event.code, message: event.message }, requested, started);
        default:
          return [];
      }
    },
    finish(started) {
      if (final === undefined) {
        throw new ProviderError(
          "provider_stream",
          `The Responses stream from model "${requested}" ended before response.completed.${started ? " Its partial output was already delivered, so it is not retried." : " Retry the call."}`,
          { retryable: !started, details: { model: requested, baseURL } },
        );
      }
      const output =
        Array.isArray(final.output) && final.output.length > 0
          ? final.output
          : [...done.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
      return fromResponse({ ...final, output }, requested);
    },
  };
}
