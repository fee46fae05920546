import { type Chunk, type ChunkInput, createChunk } from "../chunk.js";
import { OpenRathError } from "../errors.js";
import { type LineageExtras, LineageNode, type LineageOp } from "../lineage.js";
import { isSessionId, previewString, SESSION_ID_FORMAT } from "./id.js";
import { exceedsDepth, MAX_JSON_DEPTH } from "./json-checks.js";

/** A lineage node in JSON: parents by id. */
export interface LineageNodeJSON {
  readonly id: string;
  readonly op: LineageOp;
  readonly operator: string;
  readonly parents: readonly string[];
  readonly extras: LineageExtras;
  readonly length: number;
  readonly createdAt: number;
}

/** The lineage DAG behind `node` in JSON: `node` first, each node once (iterative, any depth). */
export function lineageToJSON(node: LineageNode): LineageNodeJSON[] {
  const lineage: LineageNodeJSON[] = [];
  const seen = new Set<string>();
  const stack: LineageNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (seen.has(n.id)) continue;
    seen.add(n.id);
    lineage.push({
      id: n.id,
      op: n.op,
      operator: n.operator,
      parents: n.parents.map((p) => p.id),
      extras: n.extras,
      length: n.length,
      createdAt: n.createdAt,
    });
    for (let i = n.parentCount - 1; i >= 0; i--) stack.push(n.parentAt(i)!);
  }
  return lineage;
}

/** The `invalid_session_json` error for `what`. */
export function invalidSessionJson(what: string, details: Record<string, unknown> = {}, cause?: unknown) {
  return new OpenRathError("invalid_session_json", `Invalid session JSON: ${what}.`, {
    details,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The `invalid_session_json` error for an id (`what`) that is not a session id; the value is shown bounded. */
function badId(what: string, id: string): never {
  throw invalidSessionJson(
    `${what} is ${previewString(id)}, which is not a session id: ${SESSION_ID_FORMAT}`,
    {
      field: what,
      value: previewString(id),
      length: id.length,
    },
  );
}

/** What {@link readSessionJSON} found in a session's JSON. */
export interface SessionParts {
  readonly node: LineageNode;
  readonly chunks: Chunk[];
  readonly placement?: { readonly key: string; readonly spec: unknown };
}

/**
 * Validates session JSON (an object or its text) and rebuilds its lineage node and chunks. With
 * `truncated`, fewer chunks than the session's lineage node records are accepted.
 *
 * @throws {OpenRathError} code `invalid_session_json` naming what is wrong.
 */
export function readSessionJSON(json: unknown, truncated = false): SessionParts {
  let data: unknown = json;
  if (typeof json === "string") {
    try {
      data = JSON.parse(json);
    } catch (cause) {
      throw new OpenRathError(
        "invalid_session_json",
        `Session JSON does not parse: ${(cause as Error).message}`,
        { cause },
      );
    }
  }
  const bad = (what: string, value?: unknown): never => {
    throw invalidSessionJson(what, { value });
  };
  if (typeof data !== "object" || data === null) bad("expected an object", data);
  const d = data as Record<string, unknown>;
  if (d.format !== "openrath.session") bad(`"format" must be "openrath.session"`, d.format);
  if (d.version !== 1)
    bad(`unsupported "version" ${JSON.stringify(d.version)}; this core reads version 1`, d.version);
  if (typeof d.id !== "string" || d.id === "") bad(`"id" must be a non-empty string`, d.id);
  if (!isSessionId(d.id)) badId(`"id"`, d.id as string);
  if (!Array.isArray(d.chunks)) bad(`"chunks" must be an array`, d.chunks);
  if (!Array.isArray(d.lineage)) bad(`"lineage" must be an array of nodes`, d.lineage);
  const id = d.id as string;
  const nodes = restoreLineage(d.lineage as unknown[]);
  const node = nodes.get(id) ?? bad(`no lineage node for the session id ${id}`, id);
  const raw = d.chunks as unknown[];
  if (node.length > raw.length && !truncated) {
    bad(
      `the lineage node of session ${id} says it had ${node.length} chunks when it was made, but the JSON holds ${raw.length}; a session never loses chunks`,
      { lineageLength: node.length, chunks: raw.length },
    );
  }
  const chunks = raw.map((c, i) => {
    const chunk = c as Partial<Chunk> | null;
    if (
      typeof chunk?.id !== "string" ||
      typeof chunk.sessionId !== "string" ||
      typeof chunk.createdAt !== "number"
    ) {
      bad(`chunk ${i} lacks "id", "sessionId" or "createdAt"`, c);
    }
    try {
      return createChunk(chunk as ChunkInput, id);
    } catch (cause) {
      throw invalidSessionJson(`chunk ${i}: ${(cause as Error).message}`, { index: i, value: c }, cause);
    }
  });
  if (d.placement === undefined) return { node, chunks };
  const p = d.placement as Record<string, unknown> | null;
  if (typeof p?.key !== "string") bad(`"placement.key" must be a string`, d.placement);
  if (exceedsDepth(p!.spec, MAX_JSON_DEPTH))
    bad(`"placement.spec" nests deeper than ${MAX_JSON_DEPTH} levels`, p!.key);
  return { node, chunks, placement: { key: p!.key as string, spec: p!.spec } };
}

/** Rebuilds lineage nodes from JSON, parents before children, rejecting dangling parents and cycles. */
export function restoreLineage(raw: readonly unknown[]): Map<string, LineageNode> {
  const bad = (what: string, value?: unknown): never => {
    throw invalidSessionJson(`lineage ${what}`, { value });
  };
  const byId = new Map<string, LineageNodeJSON>();
  for (const r of raw) {
    const n = r as Partial<LineageNodeJSON> | null;
    if (
      typeof n?.id !== "string" ||
      typeof n.op !== "string" ||
      typeof n.operator !== "string" ||
      !Array.isArray(n.parents) ||
      !n.parents.every((p) => typeof p === "string") ||
      typeof n.length !== "number" ||
      typeof n.createdAt !== "number" ||
      (n.extras !== undefined &&
        (typeof n.extras !== "object" || n.extras === null || Array.isArray(n.extras)))
    ) {
      bad("node is missing id, op, operator, parents, length or createdAt", r);
    }
    if (!isSessionId(n!.id)) badId("a lineage node id", n!.id!);
    for (const parent of n!.parents!) if (!isSessionId(parent)) badId(`node ${n!.id}'s parent id`, parent);
    if (!Number.isSafeInteger(n!.length) || n!.length! < 0)
      bad(`node ${n!.id} has length ${n!.length}; a length is a whole number of chunks`, r);
    if (!Number.isFinite(n!.createdAt)) bad(`node ${n!.id} has a createdAt that is not a finite number`, r);
    if (exceedsDepth(n!.extras, MAX_JSON_DEPTH))
      bad(`node ${n!.id} has extras nested deeper than ${MAX_JSON_DEPTH} levels`, n!.id);
    if (byId.has(n!.id!)) bad(`node ${n!.id} appears twice`, n!.id);
    byId.set(n!.id!, n as LineageNodeJSON);
  }
  const built = new Map<string, LineageNode>();
  const visiting = new Set<string>();
  const build = (id: string): LineageNode => {
    const done = built.get(id);
    if (done) return done;
    // Explicit stack instead of recursion: lineage chains can be thousands of nodes deep.
    const stack: string[] = [id];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (built.has(top)) {
        stack.pop();
        continue;
      }
      const json = byId.get(top) ?? bad(`references parent ${top}, which is not in the lineage list`, top);
      const missing = json.parents.filter((p) => !built.has(p));
      if (missing.length === 0) {
        built.set(
          top,
          new LineageNode(
            json.id,
            json.op,
            json.operator,
            json.parents.map((p) => built.get(p)!),
            json.extras ?? {},
            json.length,
            json.createdAt,
          ),
        );
        visiting.delete(top);
        stack.pop();
        continue;
      }
      if (visiting.has(top)) bad(`has a cycle through ${top}`, top);
      visiting.add(top);
      for (const p of missing) {
        if (visiting.has(p)) bad(`has a cycle through ${p}`, p);
        stack.push(p);
      }
    }
    return built.get(id)!;
  };
  for (const id of byId.keys()) build(id);
  return built;
}
