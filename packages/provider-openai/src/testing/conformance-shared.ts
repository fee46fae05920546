import type { WireErrorKind, WireScript } from "@openrath/testing/provider";
import type { WireReply, WireStreamEvent } from "./openai-wire-server.js";

/** OpenAI's status, error type and code for each failure kind. */
export const OPENAI_ERRORS: Record<WireErrorKind, { status: number; type: string; code: string | null }> = {
  rate_limited: { status: 429, type: "requests", code: "rate_limit_exceeded" },
  unavailable: { status: 503, type: "server_error", code: null },
  bad_request: { status: 400, type: "invalid_request_error", code: null },
  auth: { status: 401, type: "invalid_request_error", code: "invalid_api_key" },
};

/** The error reply for a scripted HTTP failure, the same for both APIs. */
export function errorReply(script: Extract<WireScript, { type: "error" }>): WireReply {
  const { status, type, code } = OPENAI_ERRORS[script.error];
  return {
    type: "error",
    status,
    message: script.message,
    errorType: type,
    code,
    ...(script.retryAfterSeconds !== undefined
      ? { headers: { "retry-after": String(script.retryAfterSeconds) } }
      : {}),
  };
}

/** The stream reply for `events`, broken at `at` as `fault` says (the error event is the API's own). */
export function faultedStream(
  events: readonly WireStreamEvent[],
  at: number,
  fault: NonNullable<Extract<WireScript, { type: "stream" }>["fault"]>,
  errorEvent: (kind: "rate_limited" | "unavailable") => WireStreamEvent,
): WireReply {
  const sent = events.slice(0, at);
  switch (fault.kind) {
    case "cut":
      return { type: "stream", events: sent, cut: true, done: false };
    case "end":
      return { type: "stream", events: sent, done: false };
    case "hold":
      return { type: "stream", events: sent, hang: true };
    case "error":
      return { type: "stream", events: [...sent, errorEvent(fault.error)], done: false };
  }
}
