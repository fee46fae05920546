import { readFile } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { MemoryScope } from "@openrath/core";
import { normalizeScope, scopeVisible } from "@openrath/core/backend";
import { openStore, STORE_NAMES, type StoreName } from "./internal/memory-stores.js";
import { emit, progressFor, round } from "./internal/report.js";

// Recall quality of memory stores on a judged JSONL set: every entry is loaded into a fresh store,
// every query is run (top 10), and recall@1, recall@5, recall@10 and MRR are printed as one JSON
// line per store. By default both the bm25 store and the anchor (MiniSearch) run, side by side.

const USAGE = `Usage: pnpm -s bench:memory-quality [--data <file.jsonl>] [--store <name>|all] [--split dev|test|all] [--verbose]

  --data      a JSONL set (default: data/memory-quality.jsonl); a relative path is read from the
              directory pnpm was started in
  --store     which store to evaluate (default: all, one JSON line each): ${STORE_NAMES.join(", ")}
  --split     which queries to run (default: all; tune on dev, report test as held out)
  --verbose   print every query's rank and top hits on stderr

Lines of the set:
  {"type":"entry","id":"e1","text":"...","scope":{"tenant":"default","user":"ada"}}   scope optional
  {"type":"query","id":"q1","text":"...","relevant":["e1"],"scope":{...},"tag":"...","split":"dev"}
                                                            scope, tag, split (dev|test) optional
A query asks at its scope (default: the tenant level) and sees entries at that scope or an
enclosing one; every relevant entry must be visible to it.`;

const TOP_K = 10;
const CUTOFFS = [1, 5, 10] as const;
const progress = progressFor("memory-quality");

interface Entry {
  readonly id: string;
  readonly text: string;
  readonly scope?: MemoryScope;
}

interface Query {
  readonly id: string;
  readonly text: string;
  readonly relevant: readonly string[];
  readonly scope?: MemoryScope;
  readonly tag?: string;
  readonly split?: "dev" | "test";
}

interface QualitySet {
  readonly entries: readonly Entry[];
  readonly queries: readonly Query[];
}

class DataError extends Error {}

function parseSet(text: string, file: string): QualitySet {
  const entries: Entry[] = [];
  const queries: Query[] = [];
  const entryIds = new Set<string>();
  const queryIds = new Set<string>();
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const at = `${file}:${i + 1}`;
    const fail = (problem: string): never => {
      throw new DataError(`${at}: ${problem}`);
    };
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch (error) {
      throw new DataError(`${at}: not valid JSON (${(error as Error).message})`);
    }
    if (typeof record !== "object" || record === null || Array.isArray(record))
      fail("a line must be a JSON object");
    const { type, id, text: body, scope, relevant, tag, split } = record;
    if (typeof id !== "string" || id === "")
      fail(`"id" must be a non-empty string, got ${JSON.stringify(id)}`);
    if (typeof body !== "string" || body.trim() === "") fail(`"text" must be a non-blank string`);
    let normalized: MemoryScope | undefined;
    if (scope !== undefined) {
      if (typeof scope !== "object" || scope === null || Array.isArray(scope)) {
        fail(
          `"scope" must be an object such as {"tenant":"default","user":"ada"}, got ${JSON.stringify(scope)}`,
        );
      }
      try {
        normalized = normalizeScope(scope as MemoryScope);
      } catch (error) {
        fail((error as Error).message);
      }
    }
    const withScope = normalized ? { scope: normalized } : {};
    if (type === "entry") {
      if (entryIds.has(id as string)) fail(`duplicate entry id ${JSON.stringify(id)}`);
      entryIds.add(id as string);
      entries.push({ id: id as string, text: body as string, ...withScope });
    } else if (type === "query") {
      if (queryIds.has(id as string)) fail(`duplicate query id ${JSON.stringify(id)}`);
      queryIds.add(id as string);
      if (!Array.isArray(relevant) || relevant.length === 0 || relevant.some((r) => typeof r !== "string")) {
        fail(`"relevant" must be a non-empty array of entry ids, got ${JSON.stringify(relevant)}`);
      }
      if (tag !== undefined && typeof tag !== "string") fail(`"tag" must be a string when given`);
      if (split !== undefined && split !== "dev" && split !== "test")
        fail(`"split" must be "dev" or "test" when given`);
      queries.push({
        id: id as string,
        text: body as string,
        relevant: [...new Set(relevant as string[])],
        ...withScope,
        ...(tag === undefined ? {} : { tag: tag as string }),
        ...(split === undefined ? {} : { split: split as "dev" | "test" }),
      });
    } else {
      fail(`"type" must be "entry" or "query", got ${JSON.stringify(type)}`);
    }
  }
  const byId = new Map(entries.map((e) => [e.id, e]));
  for (const query of queries) {
    for (const id of query.relevant) {
      const entry = byId.get(id);
      if (!entry)
        throw new DataError(
          `${file}: query ${query.id} names relevant entry ${id}, which the set does not define`,
        );
      if (!scopeVisible(entry.scope ?? {}, query.scope ?? {})) {
        throw new DataError(
          `${file}: query ${query.id} names relevant entry ${id}, which its scope cannot see (entry scope ${JSON.stringify(entry.scope)}, query scope ${JSON.stringify(query.scope ?? { tenant: "default" })})`,
        );
      }
    }
  }
  if (entries.length === 0 || queries.length === 0) {
    throw new DataError(
      `${file}: a set needs at least one entry and one query (found ${entries.length} and ${queries.length})`,
    );
  }
  return { entries, queries };
}

interface Scores {
  queries: number;
  recall: Record<(typeof CUTOFFS)[number], number>;
  reciprocalRank: number;
}

const emptyScores = (): Scores => ({ queries: 0, recall: { 1: 0, 5: 0, 10: 0 }, reciprocalRank: 0 });

function summarize(scores: Scores) {
  const n = scores.queries;
  return {
    queries: n,
    recall_at_1: round(scores.recall[1] / n),
    recall_at_5: round(scores.recall[5] / n),
    recall_at_10: round(scores.recall[10] / n),
    mrr: round(scores.reciprocalRank / n),
  };
}

async function evaluate(store: StoreName, set: QualitySet, data: string, verbose: boolean) {
  const memory = await openStore(store);
  const scopes = new Map(set.entries.map((e) => [e.id, e.scope ?? {}]));
  try {
    await memory.add(set.entries);
    const total = emptyScores();
    const byTag = new Map<string, Scores>();
    const bySplit = new Map<string, Scores>();
    let scopeViolations = 0;
    for (const query of set.queries) {
      const ids = await memory.search(query.text, {
        topK: TOP_K,
        ...(query.scope ? { scope: query.scope } : {}),
      });
      scopeViolations += ids.filter((id) => !scopeVisible(scopes.get(id) ?? {}, query.scope ?? {})).length;
      const relevant = new Set(query.relevant);
      const rank = ids.findIndex((id) => relevant.has(id)) + 1;
      const tagScores = byTag.get(query.tag ?? "untagged") ?? emptyScores();
      byTag.set(query.tag ?? "untagged", tagScores);
      const splitScores = bySplit.get(query.split ?? "unsplit") ?? emptyScores();
      bySplit.set(query.split ?? "unsplit", splitScores);
      for (const scores of [total, tagScores, splitScores]) {
        scores.queries++;
        for (const k of CUTOFFS)
          scores.recall[k] += ids.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size;
        scores.reciprocalRank += rank > 0 ? 1 / rank : 0;
      }
      if (verbose) {
        progress(
          `${store} ${query.id} ${JSON.stringify(query.text)}: ${rank > 0 ? `first relevant at ${rank}` : "no relevant hit in the top 10"}; top 3 ${JSON.stringify(ids.slice(0, 3))}`,
        );
      }
    }
    return {
      case: "memory_quality",
      store,
      data,
      entries: set.entries.length,
      top_k: TOP_K,
      ...summarize(total),
      scope_violations: scopeViolations,
      by_tag: Object.fromEntries([...byTag].map(([tag, scores]) => [tag, summarize(scores)])),
      by_split: Object.fromEntries([...bySplit].map(([split, scores]) => [split, summarize(scores)])),
    };
  } finally {
    await memory.close();
  }
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parse>;
  const parse = () =>
    parseArgs({
      options: {
        data: { type: "string" },
        store: { type: "string", default: "all" },
        split: { type: "string", default: "all" },
        verbose: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
    });
  try {
    args = parse();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (args.values.help) {
    process.stderr.write(`${USAGE}\n`);
    return 0;
  }
  const storeArg = args.values.store;
  const stores = storeArg === "all" ? [...STORE_NAMES] : STORE_NAMES.filter((s) => s === storeArg);
  if (stores.length === 0) {
    process.stderr.write(
      `Unknown --store ${JSON.stringify(storeArg)}; use one of ${[...STORE_NAMES, "all"].join(", ")}.\n`,
    );
    return 2;
  }
  const packageDir = fileURLToPath(new URL("..", import.meta.url));
  const file =
    args.values.data === undefined
      ? resolve(packageDir, "data/memory-quality.jsonl")
      : resolve(process.env.INIT_CWD ?? process.cwd(), args.values.data);
  const shown = relative(packageDir, file).startsWith("..") ? file : relative(packageDir, file);
  let set: QualitySet;
  try {
    set = parseSet(await readFile(file, "utf8"), shown);
  } catch (error) {
    const reason =
      error instanceof DataError ? error.message : `cannot read ${file}: ${(error as Error).message}`;
    process.stderr.write(`memory-quality: ${reason}\n`);
    return 1;
  }
  const splitArg = args.values.split;
  if (splitArg !== "all" && splitArg !== "dev" && splitArg !== "test") {
    process.stderr.write(`Unknown --split ${JSON.stringify(splitArg)}; use dev, test or all.\n`);
    return 2;
  }
  if (splitArg !== "all") set = { ...set, queries: set.queries.filter((q) => q.split === splitArg) };
  progress(
    `${shown}: ${set.entries.length} entries, ${set.queries.length} queries (split ${splitArg}); stores: ${stores.join(", ")}`,
  );
  const lines = [];
  for (const store of stores) {
    const line = await evaluate(store, set, shown, args.values.verbose);
    emit(line);
    lines.push(line);
  }
  const ours = lines.find((l) => l.store === "bm25");
  const anchor = lines.find((l) => l.store === "minisearch-fuzzy");
  if (lines.length > 1) {
    const metrics = ["recall_at_1", "recall_at_5", "recall_at_10", "mrr"] as const;
    progress(`by tag, ${metrics.join(" / ")}:`);
    for (const tag of Object.keys(lines[0]!.by_tag)) {
      progress(`  ${tag}`);
      for (const line of lines) {
        const s = line.by_tag[tag]!;
        progress(`    ${line.store.padEnd(20)} ${metrics.map((m) => s[m].toFixed(3)).join(" / ")}`);
      }
    }
  }
  if (ours && anchor) {
    // The targets: at least minisearch with prefix and fuzzy search in every group (by MRR and
    // recall@1), and recall@1 of 0.85 overall.
    const groups = Object.keys(ours.by_tag).map((tag) => {
      const a = ours.by_tag[tag]!;
      const b = anchor.by_tag[tag]!;
      return { tag, ok: a.recall_at_1 >= b.recall_at_1 && a.mrr >= b.mrr };
    });
    emit({
      case: "memory_quality_targets",
      data: shown,
      split: splitArg,
      store: "bm25",
      anchor: "minisearch-fuzzy",
      recall_at_1: ours.recall_at_1,
      anchor_recall_at_1: anchor.recall_at_1,
      target: "bm25 >= minisearch-fuzzy in recall@1 and MRR in every group; overall recall@1 >= 0.85",
      groups_below_anchor: groups.filter((g) => !g.ok).map((g) => g.tag),
      meets_target: ours.recall_at_1 >= 0.85 && groups.every((g) => g.ok),
    });
  }
  return 0;
}

process.exitCode = await main();
