import { existsSync } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { basename } from "node:path";
import {
  type Chunk,
  formatUsageTable,
  lineageToText,
  OpenRathError,
  shortId,
  usageReport,
} from "@openrath/core";
import {
  defaultSessionLogDir,
  listSessionLogs,
  readSessionLog,
  type SessionLog,
  type SessionLogEntry,
} from "@openrath/core/node";
import { UsageError } from "../internal/args.js";
import type { Command, CommandContext, CommandGroup } from "../internal/command.js";
import { parseDuration } from "../parse-duration.js";

const DIR_OPTION = {
  name: "dir",
  short: "d",
  value: "<dir>",
  description:
    "The log directory (default: $OPENRATH_HOME/sessions, ./.openrath/sessions or ~/.openrath/sessions).",
} as const;

const count = new Intl.NumberFormat("en-US");

function logDir(ctx: CommandContext, option: string | true | undefined): string {
  return typeof option === "string" ? ctx.resolve(option) : defaultSessionLogDir();
}

/** A directory the user named must exist: an empty listing of a mistyped path would mislead. */
async function mustBeDirectory(dir: string): Promise<void> {
  const found = await stat(dir).catch(() => undefined);
  if (!found) throw new OpenRathError("not_found", `No such directory: ${dir}`, { details: { dir } });
  if (!found.isDirectory()) {
    throw new OpenRathError("invalid_argument", `Not a directory: ${dir}`, { details: { dir } });
  }
}

/** One line of text: whitespace collapsed, cut to `max` characters. */
function preview(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function chunkText(c: Chunk): string {
  switch (c.kind) {
    case "assistant": {
      const calls = (c.toolCalls ?? []).map((t) => `→ ${t.function.name}(${t.function.arguments})`);
      return [c.content ?? "", ...calls].filter(Boolean).join(" ");
    }
    case "tool_result":
      return `${c.isError ? "[error] " : ""}${c.name}: ${c.content}`;
    case "event":
      return `${c.name} ${c.data === undefined ? "" : JSON.stringify(c.data)}`;
    default:
      return c.content;
  }
}

function table(rows: readonly (readonly string[])[], rightAligned: ReadonlySet<number>): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (rightAligned.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

const listCommand: Command = {
  name: "sessions list",
  summary: "List the session logs in a directory, oldest first.",
  args: [],
  options: [DIR_OPTION, { name: "json", description: "Print one JSON object per log instead of a table." }],
  examples: ["openrath sessions list", "openrath sessions list --dir ./recording"],
  async run(ctx, { options }) {
    const dir = logDir(ctx, options.dir);
    if (typeof options.dir === "string") await mustBeDirectory(dir);
    const entries = await listSessionLogs(dir);
    if (entries.length === 0) {
      if (options.json) return 0;
      ctx.stdout.write(`No session logs in ${dir}\n`);
      return 0;
    }
    const progress = ctx.progress({ plain: false });
    const rows: Record<string, unknown>[] = [];
    try {
      for (const [i, entry] of entries.entries()) {
        progress.update(`reading ${i + 1}/${entries.length} ${basename(entry.path)}`);
        try {
          const log = await readSessionLog(entry.path);
          rows.push({
            id: entry.id,
            createdAt: entry.createdAt,
            state: log.closed ? "closed" : log.torn ? "torn" : "partial",
            chunks: log.session.length,
            tokens: log.session.usage.totalTokens,
            op: log.session.lineage.op,
            operator: log.session.lineage.operator,
            path: entry.path,
          });
        } catch (error) {
          rows.push({
            id: entry.id,
            createdAt: entry.createdAt,
            state: "corrupt",
            error: (error as Error).message,
            path: entry.path,
          });
        }
      }
    } finally {
      progress.done();
    }
    if (options.json) {
      for (const row of rows) ctx.stdout.write(`${JSON.stringify(row)}\n`);
      return 0;
    }
    const cells = rows.map((r) => [
      String(r.createdAt)
        .replace("T", " ")
        .replace(/\.\d+Z$/, "Z"),
      String(r.state),
      r.chunks === undefined ? "" : count.format(r.chunks as number),
      r.tokens === undefined ? "" : count.format(r.tokens as number),
      r.op === undefined ? "" : `${r.op} ${r.operator}`,
      String(r.id),
    ]);
    ctx.stdout.write(`${entries.length} session log${entries.length === 1 ? "" : "s"} in ${dir}\n\n`);
    ctx.stdout.write(
      `${table([["created", "state", "chunks", "tokens", "lineage", "id"], ...cells], new Set([2, 3]))}\n`,
    );
    return 0;
  },
};

/** Finds the log `target` names: a path, a full id, an id prefix, or a short id (the last 8 hex digits). */
async function findLog(ctx: CommandContext, target: string, dir: string): Promise<SessionLog> {
  const asPath = ctx.resolve(target);
  if ((existsSync(asPath) && (await stat(asPath)).isFile()) || existsSync(`${asPath}.partial`)) {
    return readSessionLog(asPath);
  }
  const entries = await listSessionLogs(dir);
  const wanted = target.toLowerCase();
  const matches: SessionLogEntry[] = entries.filter(
    (e) => e.id === wanted || e.id.startsWith(wanted) || shortId(e.id) === wanted.replace(/-/g, ""),
  );
  const ids = [...new Set(matches.map((e) => e.id))];
  if (ids.length === 0) {
    throw new OpenRathError(
      "not_found",
      `No session log for ${JSON.stringify(target)}: it is not a file, and no log in ${dir} has that id; see openrath sessions list --dir ${dir}`,
      { details: { target, dir } },
    );
  }
  if (ids.length > 1) {
    throw new OpenRathError(
      "ambiguous",
      `${JSON.stringify(target)} matches ${ids.length} sessions in ${dir} (${ids.slice(0, 4).join(", ")}${ids.length > 4 ? ", …" : ""}); give more of the id.`,
      { details: { target, ids } },
    );
  }
  // A closed log wins over a partial one of the same session.
  const entry = matches.find((e) => e.closed) ?? matches[0]!;
  return readSessionLog(entry.path);
}

const showCommand: Command = {
  name: "sessions show",
  summary: "Show one session log: its chunks (role, author, preview), usage and lineage.",
  args: [
    { name: "<id | path>", description: "A log file, or a session id (full, a prefix, or the short id)." },
  ],
  options: [
    DIR_OPTION,
    {
      name: "json",
      description:
        "Print one JSON object: the log's path, state, times and usage, and the session as Session.toJSON() writes it.",
    },
  ],
  examples: [
    "openrath sessions show 3f2a9c1d",
    "openrath sessions show ./recording/0199….jsonl",
    "openrath sessions show 3f2a9c1d --json",
  ],
  async run(ctx, { positionals, options }) {
    const log = await findLog(ctx, positionals[0]!, logDir(ctx, options.dir));
    const s = log.session;
    if (options.json) {
      const document = {
        format: "openrath.session-log",
        version: 1,
        path: log.path,
        state: log.closed ? "closed" : log.torn ? "torn" : "partial",
        createdAt: log.header.created_at,
        closedAt: log.trailer?.closed_at ?? null,
        usage: usageReport(s.chunks),
        session: s.toJSON(),
      };
      ctx.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
      return 0;
    }
    const { bold, dim } = ctx.out;
    const state = log.closed ? "closed" : log.torn ? "unfinished, last line torn" : "unfinished";
    const width = Math.max(40, (ctx.stdout.columns || 100) - 42);
    const lines = [
      `${bold(`Session ${s.id}`)} ${dim(`(${state})`)}`,
      `file     ${log.path}`,
      `created  ${log.header.created_at}${log.trailer ? `   closed ${log.trailer.closed_at}` : ""}`,
      `lineage  ${s.lineage.op} by ${s.lineage.operator}`,
      `chunks   ${count.format(s.length)}`,
      `tokens   ${count.format(s.usage.totalTokens)}`,
      ...(s.placement ? [`sandbox  ${s.placement.key}`] : []),
      "",
      bold("Chunks"),
    ];
    const authorWidth = Math.min(24, Math.max(6, ...s.chunks.map((c) => (c.author ?? "").length)));
    s.chunks.forEach((c, i) => {
      const role = c.kind === "tool_result" ? "tool" : c.kind;
      lines.push(
        `  ${dim(`#${String(i).padEnd(3)}`)} ${role.padEnd(9)} ${(c.author ?? "-").slice(0, authorWidth).padEnd(authorWidth)}  ${preview(chunkText(c), width)}`,
      );
    });
    lines.push("", bold("Usage"), formatUsageTable(usageReport(s.chunks)).replace(/^/gm, "  "));
    lines.push("", bold("Lineage"), lineageToText(s, { ids: true }).trimEnd().replace(/^/gm, "  "));
    ctx.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  },
};

const pruneCommand: Command = {
  name: "sessions prune",
  summary: "Delete session logs older than a duration (by the time each log was opened).",
  description: [
    "Age is taken from each log's header (created_at). Unfinished logs (.partial: a run that",
    "crashed or is still writing) are kept unless --include-partial is given, and even then a log",
    "whose writer lock is present is kept.",
  ].join("\n"),
  args: [],
  options: [
    DIR_OPTION,
    { name: "older-than", value: "<duration>", description: "Age to prune from: 30m, 12h, 7d, 2w, 1h30m." },
    { name: "dry-run", description: "Only list what would be deleted." },
    { name: "include-partial", description: "Also delete unfinished logs (.partial)." },
  ],
  examples: ["openrath sessions prune --older-than 7d --dry-run", "openrath sessions prune --older-than 12h"],
  async run(ctx, { options }) {
    if (typeof options["older-than"] !== "string") {
      throw new UsageError("openrath sessions prune needs --older-than <duration>, such as 7d or 12h");
    }
    let age: number;
    try {
      age = parseDuration(options["older-than"]);
    } catch (error) {
      throw new UsageError(`--older-than: ${(error as Error).message}`);
    }
    const dir = logDir(ctx, options.dir);
    if (typeof options.dir === "string") await mustBeDirectory(dir);
    const dry = options["dry-run"] === true;
    const cutoff = ctx.now() - age;
    const entries = await listSessionLogs(dir);
    let pruned = 0;
    let keptPartial = 0;
    let locked = 0;
    for (const entry of entries) {
      const created = Date.parse(entry.createdAt);
      if (!(created < cutoff)) continue;
      if (!entry.closed) {
        if (options["include-partial"] !== true) {
          keptPartial++;
          continue;
        }
        const lock = `${entry.path.replace(/\.partial$/, "")}.lock`;
        if (existsSync(lock)) {
          locked++;
          ctx.stdout.write(`kept ${entry.path}: a writer holds ${lock} (remove it if no writer runs)\n`);
          continue;
        }
      }
      if (!dry) await rm(entry.path, { force: true });
      pruned++;
      ctx.stdout.write(`${dry ? "would delete" : "deleted"} ${entry.path} (created ${entry.createdAt})\n`);
    }
    const notes = [
      ...(keptPartial > 0 ? [`${keptPartial} unfinished kept; pass --include-partial to delete them`] : []),
      ...(locked > 0 ? [`${locked} locked kept`] : []),
    ];
    ctx.stdout.write(
      `${dry ? "Would delete" : "Deleted"} ${pruned} of ${entries.length} log${entries.length === 1 ? "" : "s"} older than ${options["older-than"]} in ${dir}${notes.length ? ` (${notes.join("; ")})` : ""}\n`,
    );
    return 0;
  },
};

/** `openrath sessions`: list, show and prune session logs. */
export const sessionsCommand: CommandGroup = {
  name: "sessions",
  summary: "List, show and prune session logs.",
  commands: [listCommand, showCommand, pruneCommand],
};
