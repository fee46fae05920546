import { DurableError } from "../contract/durable-error.js";
import type { TraceContext } from "../contract/run-records.js";

// version 00 as the W3C spec writes it; a later version may append fields after the flags.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const MAX_TRACESTATE = 512;

/**
 * Checks a W3C trace context: `traceparent` as the spec defines it (version `ff` and all-zero ids
 * are invalid; version 00 has nothing after the flags), `tracestate` printable ASCII of at most
 * 512 characters. Returns the context with only the fields it has.
 *
 * @throws {DurableError} `invalid_argument`.
 */
export function checkTraceContext(value: unknown): TraceContext {
  const bad = (why: string): never => {
    throw new DurableError("invalid_argument", `traceContext ${why}.`, {
      details: { option: "traceContext" },
    });
  };
  if (typeof value !== "object" || value === null)
    return bad("must be an object { traceparent, tracestate? }");
  const { traceparent, tracestate } = value as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== "string") return bad("needs a traceparent string");
  const match = TRACEPARENT.exec(traceparent);
  if (
    !match ||
    match[1] === "ff" ||
    (match[1] === "00" && match[5] !== undefined) ||
    /^0+$/.test(match[2]!) ||
    /^0+$/.test(match[3]!)
  ) {
    return bad(
      `traceparent ${JSON.stringify(traceparent.slice(0, 80))} is not a W3C traceparent (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, ids not all zero)`,
    );
  }
  if (tracestate === undefined || tracestate === "") return { traceparent };
  if (
    typeof tracestate !== "string" ||
    tracestate.length > MAX_TRACESTATE ||
    !/^[\x20-\x7e]*$/.test(tracestate)
  )
    return bad(`tracestate must be printable ASCII of at most ${MAX_TRACESTATE} characters`);
  return { traceparent, tracestate };
}

/**
 * The trace context of a `traceparent` header and its `tracestate`, or `undefined` when the
 * `traceparent` is absent or malformed: a receiver ignores a malformed one (W3C Trace Context
 * §4.3), and a malformed `tracestate` is dropped on its own.
 */
export function parseTraceContext(
  traceparent: string | undefined,
  tracestate?: string | undefined,
): TraceContext | undefined {
  if (traceparent === undefined) return undefined;
  try {
    return checkTraceContext({ traceparent: traceparent.trim(), tracestate });
  } catch {
    try {
      return checkTraceContext({ traceparent: traceparent.trim() });
    } catch {
      return undefined;
    }
  }
}
