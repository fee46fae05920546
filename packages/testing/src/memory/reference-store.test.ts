/**
 * The suite's self-check: a naive in-memory MemoryV1 over an array with BM25-style term scoring,
 * run through describeMemoryConformance so the suite itself is exercised in this package's tests.
 * It is not a backend; the real ones live in @openrath/memory-*.
 */
import { type MemoryEntry, MemoryError, type MemoryScope, type MemoryV1 } from "@openrath/core";
import {
  parseCommitArgs,
  parseForgetArgs,
  parseMemoryInputs,
  parseRecallArgs,
  scopeContains,
  scopePath,
  scopeVisible,
} from "@openrath/core/backend";
import { describeMemoryConformance } from "./index.js";

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** Words, with CJK runs split into characters; `synonyms` stands in for an embedder. */
function terms(text: string, synonyms: Record<string, string>): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.flatMap((w) => (CJK.test(w) ? [...w] : [w])).map((w) => synonyms[w] ?? w);
}

function referenceMemory(entries: MemoryEntry[], synonyms: Record<string, string> = {}): MemoryV1 {
  let closed = false;
  const open = () => {
    if (closed) throw new MemoryError("memory_closed", "The reference store is closed.");
  };
  const DEFAULT = { tenant: "default" };
  const same = (a: MemoryEntry, scope: MemoryScope, id: string) =>
    a.id === id && scopePath(a.scope) === scopePath(scope);
  const store = (entry: MemoryEntry): MemoryEntry => {
    const at = entries.findIndex((e) => same(e, entry.scope, entry.id));
    if (at >= 0) entries[at] = entry;
    else entries.push(entry);
    return entry;
  };
  return {
    async remember(input) {
      open();
      return parseMemoryInputs(input, DEFAULT, Date.now()).map(store);
    },
    async recall(query, options) {
      open();
      const { topK, scope: ask, minScore } = parseRecallArgs(query, options, DEFAULT);
      const q = new Set(terms(query, synonyms));
      const docs = entries
        .filter((e) => scopeVisible(e.scope, ask))
        .map((entry) => ({ entry, t: terms(entry.text, synonyms) }));
      const avg = docs.reduce((n, d) => n + d.t.length, 0) / Math.max(docs.length, 1);
      const hits = docs.map(({ entry, t }) => {
        let score = 0;
        for (const term of q) {
          const tf = t.filter((x) => x === term).length;
          const df = docs.filter((d) => d.t.includes(term)).length;
          if (tf > 0)
            score +=
              (Math.log(1 + docs.length / df) * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * t.length) / avg));
        }
        return { entry, score };
      });
      return hits
        .filter((h) => h.score > 0 && h.score >= minScore)
        .sort((a, b) => b.score - a.score)
        .slice(0, topK);
    },
    async commit(session, options) {
      open();
      const { entries: extracted } = parseCommitArgs(session, options, DEFAULT, Date.now());
      return extracted.filter((m) => !entries.some((e) => same(e, m.scope, m.id))).map(store);
    },
    async forget(selector) {
      open();
      const parsed = parseForgetArgs(selector, DEFAULT);
      const gone = (e: MemoryEntry) =>
        parsed.kind === "scope"
          ? scopeContains(parsed.scope, e.scope)
          : parsed.ids.some((id) => same(e, parsed.scope, id));
      const before = entries.length;
      entries.splice(0, entries.length, ...entries.filter((e) => !gone(e)));
      return before - entries.length;
    },
    async close() {
      closed = true;
    },
  };
}

describeMemoryConformance({
  name: "reference (in-memory, suite self-check)",
  create: async () => referenceMemory([]),
  capabilities: { vectorSearch: false, persistence: false, sharedWriters: false },
});

// The same store with its array kept as the "location", so reopen and a second handle see it, and
// one synonym standing in for an embedder, so the persistence, sharedWriters and vectorSearch checks run too.
let location: MemoryEntry[] = [];
const synonyms: Record<string, string> = { automobile: "car" };
describeMemoryConformance({
  name: "reference (shared location, suite self-check)",
  create: async () => {
    location = [];
    return referenceMemory(location, synonyms);
  },
  reopen: async () => referenceMemory(location, synonyms),
  capabilities: { vectorSearch: true, persistence: true, sharedWriters: true },
  paraphrase: { text: "My car needs new brakes.", query: "automobile" },
  skip: {
    "unicode > text with emoji is stored and returned intact": "exercises the skip list",
    "crash survival": "an array in this process cannot be written by a child process",
  },
});
