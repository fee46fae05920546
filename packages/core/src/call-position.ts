import { hashString } from "./internal/hash.js";
import type { LineageNode } from "./lineage.js";

/** The lineage extra where a step records the key of the branch it ran on (agents, compressors). */
export const BRANCH_EXTRA = "replay.branch";

/** The lineage extra where an agent run records its request digest (for replay divergence reports). */
export const REQUEST_EXTRA = "replay.request";

/**
 * Where a model or tool call sits in a run: its branch and its number on that branch. A replay
 * answers by it (with the request fingerprint), and a journal can key entries by it: two parallel
 * branches that send the same request are told apart by their branch, whatever order they ran in.
 */
export interface CallPosition {
  /** Stable key of the branch: a hash of its lineage path (operations, operators, sibling numbers). */
  readonly branch: string;
  /** The branch in words, for messages (`leaf_user › fork#1 › loop:critic`, the last steps). */
  readonly label: string;
  /** The call's 0-based number among the model calls of its branch (an agent's turn minus one). */
  readonly index: number;
}

/** A branch as a {@link RunScope} knows it. */
export interface Branch {
  readonly key: string;
  /** The last few steps of the path, oldest first. */
  readonly steps: readonly string[];
}

const LABEL_STEPS = 4;

/** The branch in words, as {@link CallPosition.label} shows it. */
export function branchLabel(branch: Branch): string {
  return branch.steps.join(" › ");
}

function step(op: string, operator: string, ordinal: number): string {
  const who = operator === "" || operator.startsWith("Session.") ? "" : `:${operator}`;
  return `${op}${who}${ordinal > 0 ? `#${ordinal}` : ""}`;
}

/**
 * The numbering of branches in one run. Siblings — sessions made from the same parent by the same
 * operation and operator, such as two forks of one draft — are numbered in the order the run first
 * hands them to an agent, workflow, selector or compressor (deterministic for deterministic code,
 * unlike the order their model calls arrive in). A branch's key hashes its whole path, so it is
 * the same in a recording and in a replay of the same code, and different for every sibling.
 *
 * Each top-level `run()` or `stream()` makes a scope and passes it down in `RunOptions.scope`;
 * pass `options` on to children so they share it.
 */
export class RunScope {
  private readonly known = new Map<string, Branch>();
  private readonly next = new Map<string, number>();

  /** The branch of a lineage node (and so of its session), numbering unseen siblings as it goes. */
  branchOf(node: LineageNode): Branch {
    const hit = this.known.get(node.id);
    if (hit) return hit;
    // Iterative: lineage chains can be far deeper than the call stack.
    const stack: LineageNode[] = [node];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (this.known.has(top.id)) {
        stack.pop();
        continue;
      }
      let missing = false;
      for (let i = 0; i < top.parentCount; i++) {
        const parent = top.parentAt(i)!;
        if (!this.known.has(parent.id)) {
          stack.push(parent);
          missing = true;
        }
      }
      if (missing) continue;
      stack.pop();
      this.known.set(top.id, this.compute(top));
    }
    return this.known.get(node.id)!;
  }

  /**
   * The branch of step `op:operator` taken on `parent` (an agent run on its input, a selector's
   * decision): numbered among the same steps on the same parent in this scope.
   */
  child(parent: Branch, op: string, operator: string): Branch {
    return this.make([parent], op, operator, parent.key);
  }

  private compute(node: LineageNode): Branch {
    const recorded = node.extras[BRANCH_EXTRA];
    const parents: Branch[] = [];
    for (let i = 0; i < node.parentCount; i++) parents.push(this.known.get(node.parentAt(i)!.id)!);
    if (typeof recorded === "string") {
      // A step that recorded its branch (an agent's loop node) keeps it: the same key on replay.
      return {
        key: recorded,
        steps: [...(parents[0]?.steps ?? []), step(node.op, node.operator, 0)].slice(-LABEL_STEPS),
      };
    }
    // Roots are not numbered: a replay starts from a new root, and every root is "the start".
    return parents.length === 0
      ? {
          key: hashString(JSON.stringify([node.op, node.operator])),
          steps: [step(node.op, node.operator, 0)],
        }
      : this.make(parents, node.op, node.operator, parents.map((p) => p.key).join(","));
  }

  private make(parents: readonly Branch[], op: string, operator: string, group: string): Branch {
    const slot = JSON.stringify([group, op, operator]);
    const ordinal = this.next.get(slot) ?? 0;
    this.next.set(slot, ordinal + 1);
    const key = hashString(JSON.stringify([parents.map((p) => p.key), op, operator, ordinal]));
    const label =
      parents.length > 1
        ? `${step(op, operator, ordinal)}(${parents.length} parents)`
        : step(op, operator, ordinal);
    return { key, steps: [...(parents[0]?.steps ?? []), label].slice(-LABEL_STEPS) };
  }
}

/** A new {@link RunScope}, for a runtime that starts runs itself (a durable step, say). */
export function createRunScope(): RunScope {
  return new RunScope();
}

/** `options` with a run scope: the caller's, or a new one for a top-level run. */
export function withScope<T extends { readonly scope?: RunScope }>(
  options: T,
): T & { readonly scope: RunScope } {
  return options.scope ? (options as T & { scope: RunScope }) : { ...options, scope: new RunScope() };
}
