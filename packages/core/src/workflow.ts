import { Agent } from "./agent.js";
import type { RunEvent, RunOptions } from "./agent-options.js";
import { withScope } from "./call-position.js";
import { streamRun } from "./internal/stream-run.js";
import { observed, traceExtras } from "./observer.js";
import type { Session } from "./session.js";

/** Anything a workflow or selector can run: agents and workflows. */
export interface Runnable {
  readonly name: string;
  /** What it is for; selectors show it to the router. */
  readonly description: string;
  run(session: Session, options?: RunOptions): Promise<Session>;
}

/**
 * A composition of agents and other workflows, like `nn.Module`: write `forward`, call `run`.
 * `run` wraps `forward` with lineage (the result gets a `workflow` node whose operator is the
 * workflow's name) and tracing (start and end events, and the workflow path in chunk authors).
 * Fork, merge, loops and branches inside `forward` are plain code.
 *
 * Children are found by walking the instance's own properties: agents and workflows assigned to
 * fields (or held in arrays or plain objects there) are children, in property-name order.
 *
 * @example
 * ```ts
 * class Review extends Workflow {
 *   writer = new Agent({ name: "writer", provider, instructions: "Draft." });
 *   critic = new Agent({ name: "critic", provider, instructions: "Critique." });
 *   async forward(session: Session, options: RunOptions) {
 *     const draft = await this.writer.run(session, options);
 *     const [a, b] = [draft.fork(), draft.fork()];
 *     const reviews = await Promise.all([this.critic.run(a, options), this.critic.run(b, options)]);
 *     return reviews[0].merge(reviews[1]);
 *   }
 * }
 * const out = await new Review().run(Session.fromUserMessage("Write a haiku"));
 * ```
 */
export abstract class Workflow implements Runnable {
  /** Defaults to the class name. */
  name: string;
  description = "";

  constructor(options: { name?: string; description?: string } = {}) {
    this.name = options.name ?? new.target.name;
    if (options.description !== undefined) this.description = options.description;
  }

  /** The workflow's logic. Pass `options` on to child runs so budgets, aborts and tracing reach them. */
  abstract forward(session: Session, options: RunOptions): Promise<Session>;

  /** Runs `forward` with lineage and tracing around it. */
  async run(session: Session, options: RunOptions = {}): Promise<Session> {
    const path = options.path ? `${options.path}/${this.name}` : this.name;
    // The scope numbers sibling branches in the order runs start: register the input now, before any await.
    const scoped = withScope(options);
    scoped.scope.branchOf(session.lineage);
    options.onEvent?.({ type: "workflow_start", workflow: this.name, path });
    const out = await observed(
      options.observer,
      { kind: "workflow", name: this.name, path, session },
      async (span) => {
        const result = await this.forward(session, { ...scoped, path });
        return result === session
          ? result
          : result.derive({
              op: "workflow",
              operator: this.name,
              extras: { "workflow.path": path, ...traceExtras(span?.link) },
            });
      },
    );
    options.onEvent?.({ type: "produced", by: this.name, path, session: out });
    options.onEvent?.({ type: "workflow_end", workflow: this.name, path, sessionId: out.id });
    return out;
  }

  /**
   * Runs the workflow, yielding every event of its agents and workflows, then `{ type: "session" }`.
   * Leaving the loop early aborts the run (through the signal passed to every child).
   */
  stream(session: Session, options: RunOptions = {}): AsyncIterable<RunEvent> {
    return streamRun<RunEvent>(options, (run) => this.run(session, run));
  }

  /** Direct children (agents, workflows, compressors, selectors), as `[propertyName, child]`, sorted by name. */
  children(): [string, Module][] {
    const out: [string, Module][] = [];
    for (const key of Object.keys(this).sort()) {
      const value = (this as Record<string, unknown>)[key];
      if (isChild(value)) out.push([key, value]);
      else if (Array.isArray(value)) {
        for (const [i, v] of value.entries()) if (isChild(v)) out.push([`${key}[${i}]`, v]);
      } else if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
        for (const k of Object.keys(value).sort()) {
          const v = (value as Record<string, unknown>)[k];
          if (isChild(v)) out.push([`${key}.${k}`, v]);
        }
      }
    }
    return out;
  }

  /** This workflow and every descendant, depth first; a child reachable twice appears once. */
  modules(): Module[] {
    const out: Module[] = [];
    const seen = new Set<unknown>();
    const visit = (node: Module) => {
      if (seen.has(node)) return;
      seen.add(node);
      out.push(node);
      if (node instanceof Workflow) for (const [, child] of node.children()) visit(child);
    };
    visit(this);
    return out;
  }

  /** A readable tree of the workflow and its children, like a PyTorch module's repr. */
  describe(): string {
    const lines: string[] = [];
    const visit = (node: Module, label: string, depth: number, seen: Set<unknown>) => {
      const pad = "  ".repeat(depth);
      const head = `${pad}${label ? `(${label}): ` : ""}`;
      if (!(node instanceof Workflow) && !(node instanceof Agent)) {
        lines.push(`${head}${node.constructor.name}(name=${node.name})`);
        return;
      }
      if (node instanceof Agent) {
        const tools = node.tools.map((t) => t.name).join(", ");
        lines.push(
          `${head}Agent(name=${node.name}, provider=${node.provider.name}:${node.provider.model}${tools ? `, tools=[${tools}]` : ""})`,
        );
        return;
      }
      const children = seen.has(node) ? [] : node.children();
      seen.add(node);
      if (children.length === 0) {
        lines.push(`${head}${node.constructor.name}(name=${node.name})`);
        return;
      }
      lines.push(`${head}${node.constructor.name}(name=${node.name}`);
      for (const [key, child] of children) visit(child, key, depth + 1, seen);
      lines.push(`${pad})`);
    };
    visit(this, "", 0, new Set());
    return lines.join("\n");
  }
}

/** A child module: an agent, a workflow, or anything else runnable with a name (compressors, selectors). */
export type Module = Workflow | Agent | { readonly name: string; run(...args: never[]): Promise<unknown> };

function isChild(value: unknown): value is Module {
  if (value instanceof Workflow || value instanceof Agent) return true;
  const v = value as { name?: unknown; run?: unknown } | null;
  return typeof v === "object" && v !== null && typeof v.name === "string" && typeof v.run === "function";
}

/** A workflow that returns its input unchanged: what a selector routes to when nothing fits. */
export class PassThrough extends Workflow {
  constructor() {
    super({ name: "pass-through", description: "Returns the session unchanged." });
  }

  async forward(session: Session): Promise<Session> {
    return session;
  }
}
