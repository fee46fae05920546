import { type Chunk, chunkToMessage, type Message } from "./chunk.js";
import {
  absorb,
  chainStart,
  type HashLanes,
  hashString,
  lanesToHex,
  mixLanes,
  recordStart,
} from "./internal/hash.js";
import type { JsonValue } from "./json.js";
import type { ProviderRequest } from "./provider.js";

/**
 * The hash lanes of one message: its fields absorbed one by one (role, content, each tool call's
 * id, type, name and arguments, reasoning items, the answered call id), without serializing the
 * message first. The same for a chunk's projection and for a request's message on replay.
 */
export function messageLanes(message: Message): HashLanes {
  const lanes = recordStart();
  absorb(lanes, message.role);
  switch (message.role) {
    case "assistant": {
      absorb(lanes, message.content === null ? "\u0000" : `\u0001${message.content}`);
      const calls = message.tool_calls ?? [];
      absorb(lanes, String(calls.length));
      for (const call of calls) {
        absorb(lanes, call.id);
        absorb(lanes, call.type);
        absorb(lanes, call.function.name);
        absorb(lanes, call.function.arguments);
      }
      absorb(
        lanes,
        message.reasoning && message.reasoning.length > 0 ? JSON.stringify(message.reasoning) : "",
      );
      break;
    }
    case "tool":
      absorb(lanes, message.content);
      absorb(lanes, message.tool_call_id);
      break;
    default:
      absorb(lanes, message.content);
  }
  return lanes;
}

/** The hash of one message (28 hex digits), as the request digest and divergence reports compare them. */
export function messageHash(message: Message): string {
  return lanesToHex(messageLanes(message));
}

/** Characters a message takes, about: what a budget's prompt estimate adds up (four to a token). */
function messageChars(message: Message): number {
  let n = 16 + (message.content?.length ?? 0);
  if (message.role === "assistant") {
    for (const call of message.tool_calls ?? [])
      n += 48 + call.id.length + call.function.name.length + call.function.arguments.length;
  } else if (message.role === "tool") n += 16 + message.tool_call_id.length;
  return n;
}

const toolHashes = new WeakMap<readonly unknown[], string>();

/** The hash of a tool list, cached per array (an agent sends the same array every turn). */
function toolsHash(tools: ProviderRequest["tools"]): string | null {
  if (!tools) return null;
  let hash = toolHashes.get(tools);
  if (hash === undefined) {
    hash = hashString(JSON.stringify(tools));
    toolHashes.set(tools, hash);
  }
  return hash;
}

/** The digest of a message chain so far (28 hex digits). */
export function chainDigest(chain: HashLanes): string {
  return lanesToHex(chain);
}

/** The digest of a whole message list, as an agent builds it one message at a time with {@link mixLanes}. */
export function messagesDigest(messages: readonly Message[]): string {
  const chain = chainStart();
  for (const message of messages) mixLanes(chain, messageLanes(message));
  return lanesToHex(chain);
}

/**
 * The fingerprint of a request: what `ReplayProvider` matches a recorded turn by. Built from a
 * digest of the messages — a chain folding in each message's hash, so an agent adds each message
 * once instead of rehashing the transcript every turn — and the model, tools, tool choice and
 * response format. Pass the messages' `digest` when it is known.
 */
export function requestFingerprint(request: ProviderRequest, digest?: string): string {
  return hashString(
    JSON.stringify([
      request.model ?? null,
      digest ?? messagesDigest(request.messages),
      toolsHash(request.tools),
      request.toolChoice ?? null,
      request.responseFormat ?? null,
    ]),
  );
}

/** A chunk's message, its hash and its JSON length, computed once per chunk (chunks are immutable). */
export interface ProjectedChunk {
  readonly message: Message;
  /** The message's hash lanes, for the request's message chain. */
  readonly lanes: HashLanes;
  /** Characters the message takes, about: what a budget's prompt estimate adds up. */
  readonly chars: number;
}

const projected = new WeakMap<Chunk, ProjectedChunk | null>();

/** The model-visible projection of `chunk` (cached), or `null` for an event chunk. */
export function projectChunk(chunk: Chunk): ProjectedChunk | null {
  let p = projected.get(chunk);
  if (p === undefined) {
    const message = chunkToMessage(chunk);
    if (message) {
      // Shared by every request that sends it, so frozen: a provider cannot change a later turn's copy.
      if (message.role === "assistant" && message.tool_calls) {
        for (const call of message.tool_calls) {
          Object.freeze(call.function);
          Object.freeze(call);
        }
        Object.freeze(message.tool_calls);
      }
      p = { message: Object.freeze(message), lanes: messageLanes(message), chars: messageChars(message) };
    } else p = null;
    projected.set(chunk, p);
  }
  return p;
}

/**
 * What a recording keeps of a request besides its transcript, so a replay that misses can say
 * which part differs: the hashes of the head messages (instructions), a hash per tool by name,
 * and the fingerprinted parameters. Small and JSON, kept once per agent run.
 */
export interface RequestDigest {
  /** Hashes of the messages sent before the transcript (the instructions). */
  readonly head: readonly string[];
  /** A hash of each tool's spec, by tool name. */
  readonly tools: Readonly<Record<string, string>>;
  /** The fingerprinted parameters that were set: `model`, `toolChoice`, `responseFormat`. */
  readonly params: Readonly<Record<string, JsonValue>>;
}

/** The digest of `request`'s constant parts; `head` is the number of messages before the transcript. */
export function requestDigest(request: ProviderRequest, head: number): RequestDigest {
  const tools: Record<string, string> = {};
  for (const tool of request.tools ?? []) tools[tool.function.name] = hashString(JSON.stringify(tool));
  const params: Record<string, JsonValue> = {};
  if (request.model !== undefined) params.model = request.model;
  if (request.toolChoice !== undefined) params.toolChoice = request.toolChoice as JsonValue;
  if (request.responseFormat !== undefined) params.responseFormat = request.responseFormat as JsonValue;
  return { head: request.messages.slice(0, head).map(messageHash), tools, params };
}

/** A recorded request as far as a recording can rebuild it. */
export interface RecordedRequest {
  readonly digest?: RequestDigest;
  /** The transcript part (after the head), when the recording holds the session that made the call. */
  readonly transcript?: readonly Message[];
}

const preview = (message: Message | undefined): string => {
  if (!message) return "nothing";
  const content =
    message.role === "assistant" && message.tool_calls?.length
      ? `calls ${message.tool_calls.map((c) => `${c.function.name}(${c.function.arguments.slice(0, 60)})`).join(", ")}`
      : JSON.stringify(String(message.content ?? "").slice(0, 100));
  return `${message.role}: ${content}`;
};

/**
 * What differs between a live request and a recorded one, in words: the first differing message
 * (by index, with both sides shown), tools added, removed or changed (by name), and parameters
 * that differ (by name). Empty when nothing the recording kept differs.
 */
export function requestDifferences(live: ProviderRequest, recorded: RecordedRequest): string[] {
  const out: string[] = [];
  const digest = recorded.digest;
  if (digest) {
    const liveParams = requestDigest(live, 0).params;
    for (const key of new Set([...Object.keys(digest.params), ...Object.keys(liveParams)])) {
      const was = JSON.stringify(digest.params[key] ?? null);
      const now = JSON.stringify(liveParams[key] ?? null);
      if (was !== now) out.push(`parameter ${key} was ${was}, now ${now}`);
    }
    const liveTools = requestDigest(live, 0).tools;
    for (const name of Object.keys(digest.tools)) {
      if (!(name in liveTools)) out.push(`tool ${name} was offered, now it is not`);
      else if (liveTools[name] !== digest.tools[name])
        out.push(`tool ${name} changed (description or schema)`);
    }
    for (const name of Object.keys(liveTools)) {
      if (!(name in digest.tools)) out.push(`tool ${name} is new`);
    }
    const head = digest.head.length;
    for (let i = 0; i < head; i++) {
      const message = live.messages[i];
      if (!message || messageHash(message) !== digest.head[i]) {
        out.push(`message ${i} (${message?.role ?? "missing"}, the instructions) changed`);
        break;
      }
    }
    if (recorded.transcript) {
      const was = recorded.transcript;
      const now = live.messages.slice(head);
      const n = Math.max(was.length, now.length);
      for (let i = 0; i < n; i++) {
        const a = was[i];
        const b = now[i];
        if (a && b && messageHash(a) === messageHash(b)) continue;
        out.push(`message ${head + i} was ${preview(a)}; now ${preview(b)}`);
        break;
      }
      if (was.length !== now.length) out.push(`the transcript had ${was.length} messages, now ${now.length}`);
    }
  }
  return out;
}
