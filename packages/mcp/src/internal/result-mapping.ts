import type { JsonValue } from "@openrath/core";

/** Most characters of an embedded text resource kept in the transcript. */
export const MAX_INLINE_TEXT = 4000;

/** A non-text content block as it appears in the transcript: what it is, never its bytes. */
export interface McpContentEntry {
  /** `image`, `audio`, `resource`, `resource_link`, or whatever else the server sent. */
  readonly type: string;
  readonly mimeType?: string;
  /** Size in bytes of the data the server sent (decoded base64, or UTF-8 text). */
  readonly size?: number;
  readonly uri?: string;
  readonly name?: string;
  readonly description?: string;
  /** An embedded text resource's text, cut to 4000 characters. */
  readonly text?: string;
  /** Why data is missing or cut. */
  readonly note?: string;
}

/**
 * The value an MCP tool returns to the agent loop (which stores it as JSON in the tool result):
 * `text` joins the text blocks with newlines, `structured` is the server's structured content,
 * `content` describes the other blocks. A result with none of them is `{ ok: true }`.
 */
export type McpToolResult =
  | {
      readonly text?: string;
      readonly structured?: JsonValue;
      readonly content?: readonly McpContentEntry[];
    }
  | { readonly ok: true };

/** The parts of a CallToolResult this package reads (the SDK's type, loosened). */
export interface RawCallToolResult {
  readonly content?: readonly unknown[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  /** Results of servers on the 2024-10-07 protocol. */
  readonly toolResult?: unknown;
}

/** Bytes encoded by a base64 string, without decoding it. */
export function base64Size(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

function utf8Size(text: string): number {
  return new TextEncoder().encode(text).length;
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function describeBlock(block: Record<string, unknown>): McpContentEntry {
  const type = str(block.type) ?? "unknown";
  const mimeType = str(block.mimeType);
  const base = { type, ...(mimeType !== undefined ? { mimeType } : {}) };
  switch (type) {
    case "image":
    case "audio": {
      const data = str(block.data) ?? "";
      return { ...base, size: base64Size(data), note: `${type} data omitted from the transcript` };
    }
    case "resource_link": {
      const size = typeof block.size === "number" ? block.size : undefined;
      return {
        ...base,
        ...(str(block.uri) !== undefined ? { uri: str(block.uri) } : {}),
        ...(str(block.name) !== undefined ? { name: str(block.name) } : {}),
        ...(str(block.description) !== undefined ? { description: str(block.description) } : {}),
        ...(size !== undefined ? { size } : {}),
      };
    }
    case "resource": {
      const resource = (
        typeof block.resource === "object" && block.resource !== null ? block.resource : {}
      ) as Record<string, unknown>;
      const uri = str(resource.uri);
      const mime = str(resource.mimeType);
      const head = {
        type,
        ...(uri !== undefined ? { uri } : {}),
        ...(mime !== undefined ? { mimeType: mime } : {}),
      };
      const text = str(resource.text);
      if (text !== undefined) {
        if (text.length <= MAX_INLINE_TEXT) return { ...head, size: utf8Size(text), text };
        return {
          ...head,
          size: utf8Size(text),
          text: text.slice(0, MAX_INLINE_TEXT),
          note: `text cut to ${MAX_INLINE_TEXT} of ${text.length} characters`,
        };
      }
      const blob = str(resource.blob);
      return {
        ...head,
        ...(blob !== undefined ? { size: base64Size(blob) } : {}),
        note: "binary data omitted from the transcript",
      };
    }
    default:
      return { ...base, note: "content of an unknown type omitted from the transcript" };
  }
}

/**
 * Maps a successful CallToolResult to the tool's return value. Text blocks are joined with
 * newlines into `text` (the Python original's shape), structured content is kept as `structured`,
 * and every other block becomes a descriptive entry in `content` without its base64 data.
 */
export function mapToolResult(result: RawCallToolResult): McpToolResult {
  const texts: string[] = [];
  const entries: McpContentEntry[] = [];
  for (const raw of result.content ?? []) {
    if (typeof raw !== "object" || raw === null) continue;
    const block = raw as Record<string, unknown>;
    if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
    else entries.push(describeBlock(block));
  }
  const structured = result.structuredContent ?? result.toolResult;
  const out = {
    ...(texts.length > 0 ? { text: texts.join("\n") } : {}),
    ...(structured !== undefined ? { structured: structured as JsonValue } : {}),
    ...(entries.length > 0 ? { content: entries } : {}),
  };
  return Object.keys(out).length > 0 ? out : { ok: true };
}

/** The text of an error result: its text blocks joined, or a fallback naming the tool. */
export function errorText(result: RawCallToolResult, tool: string): string {
  const texts = (result.content ?? [])
    .filter(
      (b): b is { type: "text"; text: string } =>
        typeof b === "object" && b !== null && (b as { type?: unknown }).type === "text",
    )
    .map((b) => b.text)
    .filter((t) => typeof t === "string");
  return texts.length > 0 ? texts.join("\n") : `The MCP tool "${tool}" reported an error without a message.`;
}
