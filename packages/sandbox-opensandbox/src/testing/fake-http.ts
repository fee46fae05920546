import type { IncomingMessage, ServerResponse } from "node:http";

/** Reads a request body (up to `limit` bytes; more destroys the request). */
export function readBody(req: IncomingMessage, limit = 256 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.destroy();
        reject(new Error("request body too large"));
        return;
      }
      parts.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}

/** Writes a JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Writes a response without a body (execd's "200 with an empty body", the lifecycle's 204). */
export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Length": "0", ...headers });
  res.end();
}

/** Writes a plain-text response (gin's default 404 is `404 page not found`). */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** One part of a `multipart/form-data` body. */
export interface MultipartPart {
  readonly name: string;
  /** Present for file parts only (gin puts parts without a filename in `form.Value`, not `form.File`). */
  readonly filename?: string;
  readonly contentType?: string;
  readonly data: Buffer;
}

/** Parses `multipart/form-data`; `undefined` when the body or the boundary is malformed. */
export function parseMultipart(body: Buffer, contentType: string | undefined): MultipartPart[] | undefined {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? "");
  if (!match || !/^multipart\/form-data/i.test(contentType ?? "")) return undefined;
  const boundary = Buffer.from(`--${match[1] ?? match[2]}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(boundary);
  if (at < 0) return undefined;
  for (;;) {
    at += boundary.length;
    if (body.subarray(at, at + 2).toString() === "--") return parts;
    if (body.subarray(at, at + 2).toString() !== "\r\n") return undefined;
    at += 2;
    const headerEnd = body.indexOf("\r\n\r\n", at);
    if (headerEnd < 0) return undefined;
    const headers = body.subarray(at, headerEnd).toString("utf8").split("\r\n");
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), boundary]), headerEnd + 4);
    if (next < 0) return undefined;
    const data = body.subarray(headerEnd + 4, next);
    let name: string | undefined;
    let filename: string | undefined;
    let type: string | undefined;
    for (const line of headers) {
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const key = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (key === "content-disposition") {
        name = /(?:^|;)\s*name="([^"]*)"/i.exec(value)?.[1];
        filename = /(?:^|;)\s*filename="([^"]*)"/i.exec(value)?.[1];
      } else if (key === "content-type") {
        type = value;
      }
    }
    if (name === undefined) return undefined;
    parts.push({
      name,
      data: Buffer.from(data),
      ...(filename !== undefined ? { filename } : {}),
      ...(type !== undefined ? { contentType: type } : {}),
    });
    at = next + 2;
  }
}

/**
 * Compiles a doublestar-style glob (as execd's `glob.PathMatch` understands it: `*`, `**`, `?`,
 * `[...]`, `{a,b}`, `\` escapes) to a regular expression over a whole name.
 */
export function globToRegExp(pattern: string): RegExp {
  let out = "";
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) {
      out += escapeRegExp(pattern[++i]!);
    } else if (c === "*") {
      if (pattern[i + 1] === "*") {
        out += ".*";
        i++;
      } else {
        out += "[^/]*";
      }
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) {
        out += "\\[";
      } else {
        let body = pattern.slice(i + 1, end);
        if (body.startsWith("!") || body.startsWith("^")) body = `^${body.slice(1)}`;
        out += `[${body.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else if (c === "{") {
      out += "(?:";
      depth++;
    } else if (c === "}" && depth > 0) {
      out += ")";
      depth--;
    } else if (c === "," && depth > 0) {
      out += "|";
    } else {
      out += escapeRegExp(c);
    }
  }
  return new RegExp(`^${out}$`, "s");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
