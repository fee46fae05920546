import type { JsonObject, MemoryEntry, MemoryScope } from "@openrath/core";

/**
 * How an entry is stored: its text as the file body (what OpenViking indexes and searches), then
 * one HTML comment carrying the rest as hex-encoded JSON. Hex is one opaque token to any
 * tokenizer, so ids, roles and sources never match a query; the comment is not OpenViking's own
 * `MEMORY_FIELDS` comment, which its read route strips.
 */
const MARK = "\n\n<!-- openrath-memory v1 ";
const TRAILER = /^\n\n<!-- openrath-memory v1 ([0-9a-f]+) -->\n?$/;

interface Fields {
  readonly id: string;
  readonly scope: MemoryScope;
  readonly metadata?: JsonObject;
  readonly source?: string;
  readonly createdAt: number;
}

/** The file content for an entry. */
export function serializeEntry(entry: MemoryEntry): string {
  const fields: Fields = {
    id: entry.id,
    scope: entry.scope,
    ...(entry.metadata !== undefined ? { metadata: entry.metadata } : {}),
    ...(entry.source !== undefined ? { source: entry.source } : {}),
    createdAt: entry.createdAt,
  };
  const hex = Buffer.from(JSON.stringify(fields), "utf8").toString("hex");
  return `${entry.text}${MARK}${hex} -->\n`;
}

/**
 * Reads an entry file back; `undefined` when it has no (valid) trailer, such as a file someone
 * else wrote into an entries directory.
 */
export function parseEntry(content: string): MemoryEntry | undefined {
  const at = content.lastIndexOf(MARK);
  if (at < 0) return undefined;
  const match = TRAILER.exec(content.slice(at));
  if (!match) return undefined;
  let fields: Fields;
  try {
    fields = JSON.parse(Buffer.from(match[1]!, "hex").toString("utf8")) as Fields;
  } catch {
    return undefined;
  }
  if (
    typeof fields !== "object" ||
    fields === null ||
    typeof fields.id !== "string" ||
    typeof fields.scope !== "object" ||
    fields.scope === null ||
    typeof fields.createdAt !== "number"
  ) {
    return undefined;
  }
  return {
    id: fields.id,
    text: content.slice(0, at),
    scope: fields.scope,
    ...(fields.metadata !== undefined ? { metadata: fields.metadata } : {}),
    ...(typeof fields.source === "string" ? { source: fields.source } : {}),
    createdAt: fields.createdAt,
  };
}
