import { type MemoryScope, type MemoryV1, Session } from "@openrath/core";
import { expect } from "vitest";
import { showHits } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import { expectMemoryError } from "./internal/expect-memory-error.js";
import type { MemorySuiteContext } from "./suite-context.js";

const TENANTS = ["acme", "globex"];
const USERS = ["ann", "bob"];
const AGENTS = ["planner", "coder"];
const SESSIONS = ["s1", "s2"];

/**
 * Every scope of the tree two tenants × two users × two agents × two sessions, outermost first, as
 * paths such as `acme/ann/planner/s1`. The same user, agent and session names occur under every
 * parent, so a store that compares only the last level leaks.
 */
function scopeTree(): string[] {
  const paths: string[] = [];
  const grow = (prefix: string[], levels: string[][]) => {
    if (prefix.length > 0) paths.push(prefix.join("/"));
    const [names, ...rest] = levels;
    if (names) for (const name of names) grow([...prefix, name], rest);
  };
  grow([], [TENANTS, USERS, AGENTS, SESSIONS]);
  return paths;
}

function toScope(path: string): MemoryScope {
  const [tenant, user, agent, session] = path.split("/");
  return { tenant, user, agent, session } as MemoryScope;
}

function stripUndefined(scope: MemoryScope): MemoryScope {
  return Object.fromEntries(Object.entries(scope).filter(([, v]) => v !== undefined)) as MemoryScope;
}

/** The paths a recall asking at `path` must see: `path` and each enclosing level, among `stored`. */
function visibleFrom(path: string, stored: ReadonlySet<string>): string[] {
  const parts = path.split("/");
  return parts.map((_, i) => parts.slice(0, i + 1).join("/")).filter((p) => stored.has(p));
}

const textOf = (path: string) => `kiwi note stored at ${path}`;
const pathOf = (text: string) => text.replace(/^kiwi note stored at /, "");

async function rememberTree(memory: MemoryV1): Promise<Set<string>> {
  const paths = scopeTree();
  await memory.remember(paths.map((path) => ({ text: textOf(path), scope: stripUndefined(toScope(path)) })));
  return new Set(paths);
}

/** Asks at every scope of the tree (and a few without entries of their own) and checks exactly what is seen. */
async function expectVisibility(memory: MemoryV1, stored: ReadonlySet<string>): Promise<void> {
  const asking = [...scopeTree(), "acme/carol", "acme/ann/reviewer", "globex/bob/coder/s3", "initech"];
  for (const path of asking) {
    const hits = await memory.recall("kiwi", { scope: stripUndefined(toScope(path)), topK: 100 });
    const seen = hits.map((hit) => pathOf(hit.entry.text)).sort();
    expect(seen, `recall asking at ${path} saw ${showHits(hits)}`).toEqual(visibleFrom(path, stored).sort());
  }
  const defaults = await memory.recall("kiwi", { scope: {}, topK: 100 });
  expect(defaults, `recall at the default tenant saw ${showHits(defaults)}`).toEqual([]);
}

/**
 * Scope isolation: with an entry at every level of two tenants, users, agents and sessions, a
 * recall sees exactly its own scope and the enclosing levels, never a sibling's; `forget({ scope })`
 * removes a subtree only; invalid scopes are refused with `invalid_scope`.
 */
export function scopesSuite(context: MemorySuiteContext): void {
  defineGroup(context, "scope isolation", (group) => {
    group.test("a recall sees its own scope and the enclosing levels, never a sibling's", async () => {
      const memory = await group.open();
      const stored = await rememberTree(memory);
      await expectVisibility(memory, stored);
    });

    group.test("the same text at two scopes is two entries", async () => {
      const memory = await group.open();
      const [atAnn] = await memory.remember({
        text: "Lunch is at noon.",
        scope: { tenant: "acme", user: "ann" },
      });
      const [atBob] = await memory.remember({
        text: "Lunch is at noon.",
        scope: { tenant: "acme", user: "bob" },
      });
      expect(atAnn!.id).not.toBe(atBob!.id);
      const annHits = await memory.recall("lunch noon", { scope: { tenant: "acme", user: "ann" }, topK: 10 });
      expect(annHits.map((h) => h.entry.id)).toEqual([atAnn!.id]);
      const bobHits = await memory.recall("lunch noon", { scope: { tenant: "acme", user: "bob" }, topK: 10 });
      expect(bobHits.map((h) => h.entry.id)).toEqual([atBob!.id]);
    });

    group.test("forget({ scope }) removes that scope's subtree only", async () => {
      const memory = await group.open();
      const stored = await rememberTree(memory);
      const removeSubtree = (prefix: string) => {
        let removed = 0;
        for (const path of [...stored]) {
          if (path === prefix || path.startsWith(`${prefix}/`)) {
            stored.delete(path);
            removed++;
          }
        }
        return removed;
      };

      expect(await memory.forget({ scope: { tenant: "acme", user: "ann" } }), "forget acme/ann").toBe(
        removeSubtree("acme/ann"),
      );
      await expectVisibility(memory, stored);

      expect(
        await memory.forget({ scope: { tenant: "globex", user: "bob", agent: "coder", session: "s2" } }),
        "forget globex/bob/coder/s2",
      ).toBe(removeSubtree("globex/bob/coder/s2"));
      await expectVisibility(memory, stored);

      expect(await memory.forget({ scope: { tenant: "globex" } }), "forget globex").toBe(
        removeSubtree("globex"),
      );
      await expectVisibility(memory, stored);
      expect([...stored].every((path) => path.startsWith("acme"))).toBe(true);
    });

    group.test("invalid scopes are refused with invalid_scope", async () => {
      const memory = await group.open();
      const session = Session.fromUserMessage("scoped request").append({
        kind: "assistant",
        content: "scoped answer",
      });
      const invalid: unknown[] = [
        { tenant: "" },
        { tenant: "a/b" },
        { tenant: "acme", user: "" },
        { tenant: "acme", user: "ann", agent: "x/y" },
        { agent: "planner", session: "s/1" },
        { tenant: 42 },
      ];
      for (const bad of invalid) {
        const scope = bad as MemoryScope;
        const shown = JSON.stringify(bad);
        await expectMemoryError(
          () => memory.remember({ text: "scope probe", scope }),
          "invalid_scope",
          `remember({ text, scope: ${shown} })`,
        );
        await expectMemoryError(
          () => memory.recall("scope probe", { scope }),
          "invalid_scope",
          `recall(q, { scope: ${shown} })`,
        );
        await expectMemoryError(
          () => memory.forget({ scope }),
          "invalid_scope",
          `forget({ scope: ${shown} })`,
        );
        await expectMemoryError(
          () => memory.commit(session, { scope }),
          "invalid_scope",
          `commit(session, { scope: ${shown} })`,
        );
      }
      for (const scope of [{ tenant: "default" }, { tenant: "acme", user: "ann", agent: "x" }]) {
        const leaked = await memory.recall("scope probe scoped request answer", { scope, topK: 10 });
        expect(leaked, `a refused call stored something: ${showHits(leaked)}`).toEqual([]);
      }
    });
  });
}
