import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { JsonObject } from "@openrath/core";
import { backoffDelay } from "@openrath/core/backend";
import { DurableError } from "../contract/durable-error.js";
import type { PlanRecord } from "../contract/run-records.js";
import { canonicalJson, sha256 } from "../internal/canonical.js";
import type {
  NodeDeclaration,
  RetryPolicy,
  RouterHandler,
  StepHandler,
  WorkflowDefinition,
} from "./types.js";

/** A compiled node: its declaration normalized, and its implementation's hash. */
export type PlanNode =
  | {
      readonly kind: "step";
      readonly id: string;
      readonly next: string | null;
      readonly retry: Required<RetryPolicy>;
      readonly timeoutMs: number | null;
      readonly isolated: { readonly module: string; readonly export: string } | null;
      readonly implementationHash: string;
      readonly handler: StepHandler;
    }
  | {
      readonly kind: "router";
      readonly id: string;
      readonly successors: readonly string[];
      readonly implementationHash: string;
      readonly handler: RouterHandler;
    };

/**
 * An immutable, content-addressed plan: what a run is pinned to. Two plans with the same hash have
 * the same graph, policies and handler implementations.
 */
export interface CompiledPlan {
  /** SHA-256 over the canonical definition (handler implementations included). */
  readonly hash: string;
  readonly name: string;
  readonly version: string;
  /** The entry node's id. */
  readonly entry: string;
  readonly nodes: ReadonlyMap<string, PlanNode>;
  /** What the store keeps: hash, name, version and the canonical definition. */
  readonly record: PlanRecord;
}

const ID = /^[A-Za-z_$][\w$-]{0,127}$/;

/**
 * Compiles a definition into a plan: checks the graph (exactly one entry, unique ids, known
 * successors, routers with successors, every node reachable from the entry, valid policies) and
 * hashes the canonical definition together with each handler's source text (and an isolated
 * step's module file), so any change to the code gives a new plan.
 *
 * @throws {DurableError} code `invalid_definition` listing every problem found.
 */
export function compilePlan(definition: WorkflowDefinition): CompiledPlan {
  const problems: string[] = [];
  if (typeof definition.name !== "string" || definition.name.trim() === "") {
    problems.push("the workflow needs a non-empty name");
  }
  const byId = new Map<string, NodeDeclaration>();
  for (const node of definition.nodes) {
    if (!ID.test(node.id)) problems.push(`node id ${JSON.stringify(node.id)} is not a valid identifier`);
    if (byId.has(node.id)) problems.push(`node "${node.id}" is declared twice`);
    byId.set(node.id, node);
    if (typeof node.handler !== "function") problems.push(`node "${node.id}" has no handler function`);
  }
  if (byId.size === 0) problems.push("it declares no step (mark methods with @step or use builder.step)");
  const entries = [...byId.values()].filter((n) => n.options.entry === true);
  if (byId.size > 0 && entries.length === 0) problems.push("no node is marked { entry: true }");
  if (entries.length > 1) {
    problems.push(`only one node may be the entry; ${entries.map((n) => `"${n.id}"`).join(", ")} all are`);
  }
  for (const node of byId.values()) {
    if (node.kind === "step") {
      const next = node.options.next;
      if (next !== undefined && !byId.has(next)) {
        problems.push(`step "${node.id}" names an unknown successor "${next}"`);
      }
      if (Array.isArray((node.options as { next?: unknown }).next)) {
        problems.push(`step "${node.id}" lists several successors; branch with a router`);
      }
      const retry = node.options.retry ?? {};
      if (
        retry.maxAttempts !== undefined &&
        (!Number.isInteger(retry.maxAttempts) || retry.maxAttempts < 1)
      ) {
        problems.push(`step "${node.id}": retry.maxAttempts must be an integer ≥ 1`);
      }
      if (retry.baseMs !== undefined && !(retry.baseMs > 0))
        problems.push(`step "${node.id}": retry.baseMs must be > 0`);
      if (retry.maxMs !== undefined && !(retry.maxMs >= (retry.baseMs ?? 250))) {
        problems.push(`step "${node.id}": retry.maxMs must be ≥ retry.baseMs`);
      }
      const t = node.options.timeoutMs;
      if (t !== undefined && !(Number.isFinite(t) && t > 0))
        problems.push(`step "${node.id}": timeoutMs must be > 0`);
      if (node.options.isolated && t === undefined) {
        problems.push(`step "${node.id}" is isolated but declares no timeoutMs to stop it at`);
      }
    } else {
      const successors = node.options.successors;
      if (!Array.isArray(successors) || successors.length === 0) {
        problems.push(`router "${node.id}" must declare at least one successor`);
      } else {
        for (const s of successors)
          if (!byId.has(s)) problems.push(`router "${node.id}" names an unknown successor "${s}"`);
      }
    }
  }
  if (entries.length === 1) {
    const seen = new Set<string>();
    const stack = [entries[0]!.id];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      const node = byId.get(id);
      if (!node) continue;
      if (node.kind === "step" && node.options.next) stack.push(node.options.next);
      if (node.kind === "router" && Array.isArray(node.options.successors))
        stack.push(...node.options.successors);
    }
    for (const id of byId.keys()) {
      if (!seen.has(id)) problems.push(`node "${id}" is not reachable from the entry "${entries[0]!.id}"`);
    }
  }
  if (problems.length > 0) {
    throw new DurableError(
      "invalid_definition",
      `Workflow ${JSON.stringify(definition.name)} does not compile: ${problems.join("; ")}.`,
      { details: { workflow: definition.name, problems } },
    );
  }

  const nodes = new Map<string, PlanNode>();
  const canonicalNodes: JsonObject[] = [];
  for (const node of [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (node.kind === "step") {
      const isolated = node.options.isolated
        ? {
            module: moduleHref(node.options.isolated.module),
            export: node.options.isolated.export ?? "default",
          }
        : null;
      const implementationHash = isolated
        ? sha256(`${isolated.export}\n${readModule(isolated.module, node.id)}`)
        : sha256(node.handler.toString());
      const compiled: PlanNode = {
        kind: "step",
        id: node.id,
        next: node.options.next ?? null,
        retry: {
          maxAttempts: node.options.retry?.maxAttempts ?? 1,
          baseMs: node.options.retry?.baseMs ?? 250,
          maxMs: node.options.retry?.maxMs ?? 30_000,
        },
        timeoutMs: node.options.timeoutMs ?? null,
        isolated,
        implementationHash,
        handler: node.handler,
      };
      nodes.set(node.id, compiled);
      canonicalNodes.push({
        id: compiled.id,
        kind: "step",
        next: compiled.next,
        retry: compiled.retry,
        timeoutMs: compiled.timeoutMs,
        isolated: isolated ? { export: isolated.export } : null,
        implementationHash,
      });
    } else {
      const implementationHash = sha256(node.handler.toString());
      nodes.set(node.id, {
        kind: "router",
        id: node.id,
        successors: [...node.options.successors],
        implementationHash,
        handler: node.handler,
      });
      canonicalNodes.push({
        id: node.id,
        kind: "router",
        successors: [...node.options.successors],
        implementationHash,
      });
    }
  }
  const entry = entries[0]!.id;
  const canonical: JsonObject = {
    format: "openrath.plan",
    formatVersion: 1,
    name: definition.name,
    version: definition.version,
    entry,
    nodes: canonicalNodes,
  };
  const hash = sha256(canonicalJson(canonical));
  return Object.freeze({
    hash,
    name: definition.name,
    version: definition.version,
    entry,
    nodes,
    record: Object.freeze({
      hash,
      name: definition.name,
      version: definition.version,
      definition: canonical,
    }),
  });
}

function moduleHref(module: URL | string): string {
  if (module instanceof URL) return module.href;
  return module.startsWith("file:") ? module : pathToFileURL(module).href;
}

function readModule(href: string, id: string): string {
  try {
    return readFileSync(fileURLToPath(href), "utf8");
  } catch (cause) {
    throw new DurableError(
      "invalid_definition",
      `Isolated step "${id}": cannot read its module ${href}: ${(cause as Error).message}.`,
      { cause, details: { step: id, module: href } },
    );
  }
}

/** The delay before attempt `attempt + 1` after attempt `attempt` failed. */
export function retryDelayMs(retry: Required<RetryPolicy>, attempt: number): number {
  return backoffDelay(attempt, { baseMs: retry.baseMs, maxMs: retry.maxMs });
}
