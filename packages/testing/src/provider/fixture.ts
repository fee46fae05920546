/**
 * The wire-level side of the provider conformance suite: a local server that speaks a vendor's
 * HTTP API closely enough for the vendor's own SDK, scripted in vendor-neutral terms. A provider
 * package writes one fixture over its wire fake; the suite scripts replies through it and reads
 * back what the provider sent.
 */

/** A tool call to script: its id, name and the raw JSON of its arguments, in the pieces to stream. */
export interface WireToolCall {
  readonly id: string;
  readonly name: string;
  /** Pieces of the arguments' JSON text; joined they are one JSON object. A reply sends them joined. */
  readonly arguments: readonly string[];
}

/** Token counts a server reports for a turn. */
export interface WireUsage {
  /** Input (prompt) tokens, none of them cached. */
  readonly input: number;
  readonly output: number;
}

/** One model turn to script, in neutral terms; the fixture writes it in its vendor's wire format. */
export interface WireTurn {
  /** The model the server names in its answer (default: whatever the fixture chooses). */
  readonly model?: string;
  /** Text pieces; a reply sends them joined, a stream sends each as its own delta event. */
  readonly text?: readonly string[];
  readonly toolCalls?: readonly WireToolCall[];
  /**
   * Reasoning the model did before answering, which the provider must hand back as reasoning
   * items (a thinking block, a reasoning item with this summary). Only scripted when the
   * provider claims `capabilities.reasoning`.
   */
  readonly reasoning?: string;
  /** Why the model stopped; default `tool_calls` with tool calls, else `stop`. */
  readonly finish?: "stop" | "tool_calls" | "length";
  /** Usage the server reports; `null`: it reports none at all. Default `{ input: 10, output: 5 }`. */
  readonly usage?: WireUsage | null;
}

/** A kind of HTTP failure, which the fixture answers with its vendor's status and error body. */
export type WireErrorKind =
  /** 429 with the vendor's rate-limit error. */
  | "rate_limited"
  /** 503 or the vendor's overload status (Anthropic's 529). */
  | "unavailable"
  /** 400 invalid request. */
  | "bad_request"
  /** 401 authentication failure. */
  | "auth";

/**
 * How a streamed reply breaks. `afterText` counts the turn's text pieces whose delta events were
 * sent before the fault (0: right after the stream opened, before any delta).
 */
export type StreamFault =
  /** The connection is destroyed (a cut). */
  | { readonly kind: "cut"; readonly afterText: number }
  /** The stream ends cleanly without the events that finish the turn. */
  | { readonly kind: "end"; readonly afterText: number }
  /** The server sends its vendor's in-stream error event for `error`. */
  | { readonly kind: "error"; readonly afterText: number; readonly error: "rate_limited" | "unavailable" }
  /** The server keeps the stream open, sending nothing more, until the client goes away. */
  | { readonly kind: "hold"; readonly afterText: number };

/** One scripted answer; the fixture answers requests with them in order. */
export type WireScript =
  /** A complete (non-streamed) reply. */
  | { readonly type: "reply"; readonly turn: WireTurn }
  /** A streamed reply, optionally breaking on the way. */
  | { readonly type: "stream"; readonly turn: WireTurn; readonly fault?: StreamFault }
  /** An HTTP error, with `Retry-After: <retryAfterSeconds>` when given. */
  | {
      readonly type: "error";
      readonly error: WireErrorKind;
      /** The server's human-readable message, which the provider's error must carry. */
      readonly message: string;
      readonly retryAfterSeconds?: number;
    }
  /** The request is accepted and never answered, until the client gives up. */
  | { readonly type: "hang" };

/** A message as the provider sent it, decoded from the wire into neutral terms. */
export type DecodedMessage =
  | { readonly role: "user"; readonly text: string }
  | {
      readonly role: "assistant";
      readonly text: string;
      /** `arguments` parsed from the wire (a JSON object). */
      readonly toolCalls: readonly {
        readonly id: string;
        readonly name: string;
        readonly arguments: unknown;
      }[];
      /** The readable text of the reasoning the provider sent back with this turn (thinking, summaries). */
      readonly reasoning: readonly string[];
    }
  | { readonly role: "tool"; readonly toolCallId: string; readonly content: string };

/** A request as the fixture's server received it, decoded into neutral terms. */
export interface DecodedRequest {
  /** Whether the provider asked for a stream. */
  readonly stream: boolean;
  readonly model: string;
  /** The system instructions, joined with blank lines, or `undefined` when none were sent. */
  readonly system: string | undefined;
  /** The transcript without system messages. */
  readonly messages: readonly DecodedMessage[];
  readonly tools: readonly {
    readonly name: string;
    readonly description?: string;
    readonly parameters: unknown;
  }[];
  readonly toolChoice: "auto" | "none" | "required" | { readonly name: string } | undefined;
  readonly maxTokens: number | undefined;
  readonly temperature: number | undefined;
  readonly topP: number | undefined;
  readonly stop: readonly string[] | undefined;
  /** The body as sent, for messages that show it. */
  readonly body: unknown;
}

/**
 * A running wire-level server for the suite. Each test starts its own and the suite closes it
 * afterwards.
 */
export interface ProviderWireFixture {
  /** Queues answers; each request the server receives takes the next one. */
  enqueue(...scripts: WireScript[]): void;
  /** Every request received so far, in order. */
  requests(): readonly DecodedRequest[];
  /**
   * Resolves once the connection of request `index` (0-based) has closed: `true` when the client
   * closed it before the server finished its answer (an abort, a consumer that stopped reading),
   * `false` when the answer completed.
   */
  closed(index: number): Promise<boolean>;
  /** Stops the server and drops its connections. Called once per test. */
  close(): Promise<void>;
}
