import type {
  DecodedMessage,
  DecodedRequest,
  ProviderWireFixture,
  WireErrorKind,
  WireScript,
  WireTurn,
} from "@openrath/testing/provider";
import {
  type AnthropicWireServer,
  errorBody,
  type SseEvent,
  startAnthropicWireServer,
  streamEvents,
  type WireMessage,
  type WireReply,
  wireMessage,
} from "./anthropic-wire-server.js";

/** The provider conformance fixture over {@link startAnthropicWireServer}, plus the server's URL. */
export interface AnthropicConformanceFixture extends ProviderWireFixture {
  /** The base URL to hand to the provider. */
  readonly url: string;
  readonly server: AnthropicWireServer;
}

const ERRORS: Record<WireErrorKind, { status: number; type: string }> = {
  rate_limited: { status: 429, type: "rate_limit_error" },
  unavailable: { status: 529, type: "overloaded_error" },
  bad_request: { status: 400, type: "invalid_request_error" },
  auth: { status: 401, type: "authentication_error" },
};

const STOP = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens" } as const;

/** The Messages API message for a neutral turn, and the delta pieces of each of its blocks. */
function toMessage(turn: WireTurn): { message: WireMessage; pieces: Record<number, readonly string[]> } {
  const content: Record<string, unknown>[] = [];
  const pieces: Record<number, readonly string[]> = {};
  if (turn.reasoning !== undefined) {
    content.push({ type: "thinking", thinking: turn.reasoning, signature: `sig-${turn.reasoning.length}` });
  }
  if (turn.text !== undefined && turn.text.length > 0) {
    pieces[content.length] = turn.text;
    content.push({ type: "text", text: turn.text.join("") });
  }
  for (const call of turn.toolCalls ?? []) {
    pieces[content.length] = call.arguments;
    content.push({
      type: "tool_use",
      id: call.id,
      name: call.name,
      input: JSON.parse(call.arguments.join("")),
    });
  }
  const finish = turn.finish ?? ((turn.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop");
  const usage = turn.usage === undefined ? { input: 10, output: 5 } : turn.usage;
  return {
    message: {
      ...(turn.model !== undefined ? { model: turn.model } : {}),
      content,
      stop_reason: STOP[finish],
      usage: usage === null ? null : { input_tokens: usage.input, output_tokens: usage.output },
    },
    pieces,
  };
}

/** Where a fault after `afterText` text deltas goes in `events`: the index of the first event not sent. */
function faultPosition(events: readonly SseEvent[], afterText: number): number {
  let seen = 0;
  for (let i = 0; i < events.length; i++) {
    const data = "data" in events[i]! ? ((events[i] as { data: Record<string, unknown> }).data ?? {}) : {};
    if (afterText === 0 && data.type === "content_block_start") return i;
    const delta = data.delta as { type?: string } | undefined;
    if (data.type === "content_block_delta" && delta?.type === "text_delta" && ++seen === afterText)
      return i + 1;
  }
  return events.length;
}

function toReply(script: WireScript): WireReply {
  switch (script.type) {
    case "reply":
      return { type: "json", body: wireMessage(toMessage(script.turn).message) };
    case "error": {
      const { status, type } = ERRORS[script.error];
      return {
        type: "error",
        status,
        errorType: type,
        message: script.message,
        ...(script.retryAfterSeconds !== undefined
          ? { headers: { "retry-after": String(script.retryAfterSeconds) } }
          : {}),
      };
    }
    case "hang":
      return { type: "hang" };
    case "stream": {
      const { message, pieces } = toMessage(script.turn);
      const events = streamEvents(message, { pieces });
      const fault = script.fault;
      if (fault === undefined) return { type: "stream", events };
      const at = faultPosition(events, fault.afterText);
      switch (fault.kind) {
        case "cut":
          return { type: "stream", events, cutAfter: at };
        case "end":
          return { type: "stream", events, endAfter: at };
        case "hold":
          return { type: "stream", events, holdAfter: at };
        case "error": {
          const { type } = ERRORS[fault.error];
          const error: SseEvent = { event: "error", data: errorBody(type, `conformance ${fault.error}`) };
          return { type: "stream", events: [...events.slice(0, at), error] };
        }
      }
    }
  }
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b?.type === "text")
    .map((b) => String(b.text))
    .join("");
}

function decodeMessages(messages: readonly { role: string; content: unknown }[]): DecodedMessage[] {
  const out: DecodedMessage[] = [];
  for (const message of messages) {
    const blocks: Record<string, unknown>[] =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : (message.content as never);
    if (message.role === "assistant") {
      out.push({
        role: "assistant",
        text: text(blocks),
        toolCalls: blocks
          .filter((b) => b.type === "tool_use")
          .map((b) => ({ id: String(b.id), name: String(b.name), arguments: b.input })),
        reasoning: blocks.flatMap((b) =>
          b.type === "thinking" ? [String(b.thinking)] : b.type === "redacted_thinking" ? ["(redacted)"] : [],
        ),
      });
      continue;
    }
    for (const block of blocks) {
      if (block.type === "tool_result")
        out.push({ role: "tool", toolCallId: String(block.tool_use_id), content: text(block.content) });
      else if (block.type === "text") out.push({ role: "user", text: String(block.text) });
    }
  }
  return out;
}

function decodeChoice(choice: unknown): DecodedRequest["toolChoice"] {
  const c = choice as { type?: string; name?: string } | undefined;
  if (c === undefined) return undefined;
  if (c.type === "any") return "required";
  if (c.type === "tool") return { name: String(c.name) };
  return c.type as "auto" | "none";
}

// biome-ignore lint/suspicious/noExplicitAny: decodes an arbitrary recorded JSON body.
function decode(body: any): DecodedRequest {
  return {
    stream: body.stream === true,
    model: body.model,
    system: body.system === undefined ? undefined : text(body.system),
    messages: decodeMessages(body.messages ?? []),
    tools: (body.tools ?? []).map((t: Record<string, unknown>) => ({
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.input_schema,
    })),
    toolChoice: decodeChoice(body.tool_choice),
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    stop: body.stop_sequences,
    body,
  };
}

/**
 * Starts an Anthropic wire server and wraps it as a provider conformance fixture: neutral turns
 * become Messages API replies and event streams (text and tool input streamed in exactly the
 * scripted pieces, reasoning as a signed `thinking` block), failures become the API's statuses
 * and error bodies, and recorded requests decode back into neutral terms.
 */
export async function startAnthropicConformanceFixture(): Promise<AnthropicConformanceFixture> {
  const server = await startAnthropicWireServer();
  return {
    url: server.url,
    server,
    enqueue: (...scripts) => server.enqueue(...scripts.map(toReply)),
    requests: () =>
      server.requests.filter((r) => r.path.startsWith("/v1/messages")).map((r) => decode(r.body)),
    closed: async (index) => {
      await server.clientClosed(index);
      return server.requests[index]!.closedEarly;
    },
    close: () => server.close(),
  };
}
