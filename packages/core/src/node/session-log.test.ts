import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRegistry, OpenRathError, Session } from "@openrath/core";
import { listSessionLogs, readSessionLog, SessionLogWriter, writeSessionLog } from "@openrath/core/node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-log-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const usage = (n: number) => ({ promptTokens: n, completionTokens: n, totalTokens: 2 * n });

function story(): Session {
  const question = Session.fromUserMessage("Résumé: 東京 → Κρήτη 🚀", { author: "user" });
  const a = question
    .fork()
    .append({ kind: "assistant", content: "a", usage: usage(3), model: "m1", author: "alpha" });
  const b = question.fork().append(
    {
      kind: "assistant",
      content: null,
      toolCalls: [{ id: "call_1", type: "function", function: { name: "count", arguments: '{"text":"x"}' } }],
      usage: usage(5),
      model: "m2",
      author: "beta",
    },
    { kind: "tool_result", toolCallId: "call_1", name: "count", content: '{"ok":true,"result":1}' },
    { kind: "event", name: "memory.recall", data: { query: "x", hits: [] } },
  );
  return a.merge(b);
}

const registry = createRegistry({
  sandboxes: [
    {
      kind: "sandbox",
      key: "fake",
      specVersion: "v1",
      capabilities: {
        streaming: false,
        stdin: false,
        network: "none",
        isolation: "process",
        snapshots: false,
        languages: [],
      },
      // The log only records placement; the sandbox is never opened here.
      open: async () => {
        throw new Error("not opened in these tests");
      },
    },
  ],
});

const expectLogError = async (promise: Promise<unknown>, code: string, text?: string | RegExp) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(OpenRathError.isInstance(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
  if (text) expect((error as Error).message).toMatch(text);
  return error as OpenRathError;
};

describe("session log round trip", () => {
  it("gives back an equal session, with a trailer, a final name and owner-only permissions", async () => {
    const session = story();
    const path = await writeSessionLog(session, { dir });
    expect(path).toBe(join(dir, `${session.id}.jsonl`));
    expect(existsSync(`${path}.partial`)).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const log = await readSessionLog(path);
    expect(log.closed).toBe(true);
    expect(log.torn).toBe(false);
    expect(log.session.toJSON()).toEqual(session.toJSON());
    expect(log.trailer?.final_chunk_count).toBe(session.length);
    expect(log.trailer?.cumulative_usage).toEqual(session.usage);
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    expect(lines.map((l) => JSON.parse(l).record_type)).toEqual([
      "header",
      ...session.chunks.map(() => "chunk"),
      "trailer",
    ]);
  });

  it("records a session as it grows, one line per new chunk, and a later placement", async () => {
    let session = Session.fromUserMessage("start");
    const writer = await SessionLogWriter.open(session, { dir });
    expect(existsSync(writer.partialPath)).toBe(true);
    for (let i = 0; i < 5; i++) {
      session = session.append({ kind: "assistant", content: `step ${i}`, usage: usage(1) });
      await writer.write(session);
    }
    session = session.to("fake" as never, { root: "/w" } as never, { registry });
    await writer.write(session);
    expect(writer.chunkCount).toBe(6);
    await writer.close(session);
    const log = await readSessionLog(writer.path);
    expect(log.session.toJSON()).toEqual(session.toJSON());
    expect(log.session.placement).toEqual({ key: "fake", spec: { root: "/w" } });
  });

  it("close is idempotent and writing after close is refused", async () => {
    const session = Session.fromUserMessage("x");
    const writer = await SessionLogWriter.open(session, { dir });
    const first = await writer.close();
    expect(await writer.close()).toBe(first);
    await expectLogError(writer.write(session.append({ kind: "user", content: "late" })), "log_closed");
  });
});

describe("crash detection", () => {
  it("abandon leaves the partial file without a trailer, and reading the final path falls back to it", async () => {
    const session = story();
    const writer = await SessionLogWriter.open(session, { dir });
    await writer.abandon();
    expect(existsSync(writer.path)).toBe(false);
    const log = await readSessionLog(writer.path);
    expect(log.closed).toBe(false);
    expect(log.path).toBe(writer.partialPath);
    expect(log.session.toJSON()).toEqual(session.toJSON());
  });

  it("a process killed mid-run leaves a readable partial log", async () => {
    const script = join(dir, "writer.mts");
    const core = fileURLToPath(new URL("../index.ts", import.meta.url));
    const node = fileURLToPath(new URL("./index.ts", import.meta.url));
    await writeFile(
      script,
      `import { Session } from ${JSON.stringify(core)};
import { SessionLogWriter } from ${JSON.stringify(node)};
let s = Session.fromUserMessage("long run");
const w = await SessionLogWriter.open(s, { dir: ${JSON.stringify(dir)} });
for (let i = 0; i < 3; i++) { s = s.append({ kind: "assistant", content: "turn " + i }); await w.write(s); }
process.stdout.write(s.id + "\\n");
setInterval(() => {}, 1000);
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", script], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    const id = await new Promise<string>((resolve, reject) => {
      child.stdout.once("data", (d: Buffer) => resolve(d.toString().trim()));
      child.once("exit", (code) => reject(new Error(`writer exited early with ${code}`)));
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const log = await readSessionLog(join(dir, `${id}.jsonl`));
    expect(log.closed).toBe(false);
    expect(log.session.length).toBe(4);
    // The lock of the dead writer is stale: a new writer takes over and finishes the log.
    const writer = await SessionLogWriter.open(log.session, { dir });
    await writer.close();
    expect((await readSessionLog(writer.path)).closed).toBe(true);
  }, 30_000);

  it("drops a torn last line and reports it", async () => {
    const session = story();
    const writer = await SessionLogWriter.open(session, { dir });
    await writer.abandon();
    const text = await readFile(writer.partialPath, "utf8");
    await truncate(writer.partialPath, Buffer.byteLength(text) - 10);
    const log = await readSessionLog(writer.partialPath);
    expect(log.torn).toBe(true);
    expect(log.session.length).toBe(session.length - 1);
    expect(log.session.chunks.map((c) => c.id)).toEqual(session.chunks.slice(0, -1).map((c) => c.id));
  });

  it("accepts a complete last line that only lacks its newline", async () => {
    const path = await writeSessionLog(story(), { dir });
    const text = await readFile(path, "utf8");
    await writeFile(path, text.trimEnd());
    const log = await readSessionLog(path);
    expect(log.torn).toBe(false);
    expect(log.closed).toBe(true);
  });
});

describe("corruption is an error naming file and line", () => {
  const lines = async () => {
    const session = story();
    const path = await writeSessionLog(session, { dir });
    return { path, session, rows: (await readFile(path, "utf8")).trimEnd().split("\n") };
  };
  const save = (path: string, rows: string[]) => writeFile(path, `${rows.join("\n")}\n`);

  it("invalid JSON in the middle", async () => {
    const { path, rows } = await lines();
    rows[2] = "{not json";
    await save(path, rows);
    const error = await expectLogError(readSessionLog(path), "log_corrupt", `${path}:3:`);
    expect(error.details).toMatchObject({ file: path, line: 3 });
  });

  it.each([
    ["a record that is not an object", (rows: string[]) => rows.splice(1, 0, "[1,2]"), 2, /JSON object/],
    ["a chunk before the header", (rows: string[]) => rows.reverse(), 1, /before the header/],
    ["a second header", (rows: string[]) => rows.splice(2, 0, rows[0]!), 3, /second header/],
    [
      "an unknown record type",
      (rows: string[]) => rows.splice(1, 0, '{"record_type":"bogus"}'),
      2,
      /unknown record_type "bogus"/,
    ],
    ["a skipped chunk index", (rows: string[]) => rows.splice(2, 1), 3, /index 2 where 1 was expected/],
    ["a record after the trailer", (rows: string[]) => rows.push(rows[1]!), 8, /after the trailer/],
  ])("%s", async (_name, damage, line, message) => {
    const { path, rows } = await lines();
    damage(rows);
    await save(path, rows);
    await expectLogError(readSessionLog(path), "log_corrupt", `${path}:${line}:`).then((e) =>
      expect(e.message).toMatch(message),
    );
  });

  it("a trailer whose count disagrees with the chunks", async () => {
    const { path, rows } = await lines();
    rows.splice(3, 1);
    rows.splice(
      3,
      rows.length - 4,
      ...rows.slice(3, -1).map((r, i) => JSON.stringify({ ...JSON.parse(r), index: 2 + i })),
    );
    await save(path, rows);
    await expectLogError(readSessionLog(path), "log_corrupt", /trailer says 5 chunks, the log holds 4/);
  });

  it("a chunk of unknown kind names its own line", async () => {
    const { path, rows } = await lines();
    const record = JSON.parse(rows[3]!);
    record.chunk.kind = "telepathy";
    rows[3] = JSON.stringify(record);
    await save(path, rows);
    await expectLogError(
      readSessionLog(path),
      "log_corrupt",
      new RegExp(`${path}:4: .*Unknown chunk kind "telepathy"`),
    );
  });

  it("an empty file", async () => {
    const path = join(dir, "empty.jsonl");
    await writeFile(path, "");
    await expectLogError(readSessionLog(path), "log_corrupt", /empty log/);
  });

  it("a log from a newer schema is refused rather than misread", async () => {
    const { path, rows } = await lines();
    rows[0] = JSON.stringify({ ...JSON.parse(rows[0]!), schema_version: 2 });
    await save(path, rows);
    await expectLogError(readSessionLog(path), "log_unsupported_version", /refusing to downgrade/);
  });

  it("a missing file", async () => {
    await expectLogError(readSessionLog(join(dir, "nope.jsonl")), "log_not_found");
  });
});

describe("one writer per session", () => {
  it("a second writer fails fast while the first is open, and after close the log exists", async () => {
    const session = Session.fromUserMessage("x");
    const first = await SessionLogWriter.open(session, { dir });
    await expectLogError(SessionLogWriter.open(session, { dir }), "log_locked", /another writer/);
    await first.close();
    await expectLogError(SessionLogWriter.open(session, { dir }), "log_exists");
  });

  it("takes over a lock left by a process that is gone", async () => {
    const session = Session.fromUserMessage("x");
    await writeFile(
      join(dir, `${session.id}.jsonl.lock`),
      JSON.stringify({ pid: 2 ** 22 + 17, host: hostname() }),
    );
    const writer = await SessionLogWriter.open(session, { dir });
    await writer.close();
    expect((await readSessionLog(writer.path)).closed).toBe(true);
  });

  it("refuses to overwrite an unfinished log that holds chunks the session lacks", async () => {
    const base = Session.fromUserMessage("x");
    const longer = base.append({ kind: "user", content: "only in the log" });
    const writer = await SessionLogWriter.open(longer, { dir });
    await writer.abandon();
    const before = await readFile(writer.partialPath, "utf8");
    await expectLogError(SessionLogWriter.open(base, { dir }), "log_conflict", /refusing to overwrite/);
    expect(await readFile(writer.partialPath, "utf8")).toBe(before);
    expect(existsSync(`${writer.path}.lock`)).toBe(false);
  });

  it("resumes an unfinished log when the session holds everything it recorded", async () => {
    const base = Session.fromUserMessage("x");
    const writer = await SessionLogWriter.open(base, { dir });
    await writer.abandon();
    const longer = base.append({ kind: "user", content: "more" });
    const again = await SessionLogWriter.open(longer, { dir });
    await again.close();
    expect((await readSessionLog(again.path)).session.toJSON()).toEqual(longer.toJSON());
  });

  it("refuses another session or a version that does not extend the log", async () => {
    const base = Session.fromUserMessage("x");
    const writer = await SessionLogWriter.open(base.append({ kind: "user", content: "a" }), { dir });
    await expectLogError(writer.write(base.fork()), "log_conflict", /records session/);
    await expectLogError(
      writer.write(base.append({ kind: "user", content: "b" })),
      "log_conflict",
      /no longer extends/,
    );
    await writer.close();
  });
});

describe("listSessionLogs", () => {
  it("lists closed and unfinished logs, oldest first, skipping other files", async () => {
    const a = Session.fromUserMessage("a");
    const b = Session.fromUserMessage("b");
    await writeSessionLog(a, { dir });
    const open = await SessionLogWriter.open(b, { dir });
    await open.abandon();
    await writeFile(join(dir, "notes.txt"), "hello");
    await writeFile(join(dir, "junk.jsonl"), "not a log");
    const entries = await listSessionLogs(dir);
    expect(entries.map((e) => [e.id, e.closed])).toEqual([
      [a.id, true],
      [b.id, false],
    ]);
  });

  it("returns nothing for a directory that does not exist", async () => {
    expect(await listSessionLogs(join(dir, "missing"))).toEqual([]);
  });
});

describe("hostile and damaged input", () => {
  it("reopening over a .partial whose header was torn is a clear log_corrupt, not log_conflict", async () => {
    const session = Session.fromUserMessage("x");
    const header = JSON.stringify({ record_type: "header", format: "openrath.session-log", id: session.id });
    // The crash happened in the middle of writing the very first line.
    await writeFile(join(dir, `${session.id}.jsonl.partial`), header.slice(0, 40));
    const error = await expectLogError(
      SessionLogWriter.open(session, { dir }),
      "log_corrupt",
      /cannot be read .*header line is incomplete.*Nothing was overwritten/s,
    );
    expect(error.details).toMatchObject({ tornHeader: true });
    expect(await readFile(join(dir, `${session.id}.jsonl.partial`), "utf8")).toBe(header.slice(0, 40));
    expect(existsSync(join(dir, `${session.id}.jsonl.lock`))).toBe(false);
    await expectLogError(
      readSessionLog(join(dir, `${session.id}.jsonl`)),
      "log_corrupt",
      /:1: the header line is incomplete/,
    );
  });

  it("reopening over an unreadable .partial names the damage instead of claiming a conflict", async () => {
    const session = Session.fromUserMessage("x");
    const writer = await SessionLogWriter.open(session, { dir });
    await writer.abandon();
    const text = await readFile(writer.partialPath, "utf8");
    await writeFile(writer.partialPath, `${text}{"record_type":"chunk","index":7}\n`);
    await expectLogError(SessionLogWriter.open(session, { dir }), "log_corrupt", /:3: chunk index 7/);
  });

  it("keeps __proto__ and constructor keys in event data as plain data through the log", async () => {
    const data = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"ok":1}');
    const session = Session.fromUserMessage("x").append({ kind: "event", name: "hostile", data });
    const path = await writeSessionLog(session, { dir });
    const back = (await readSessionLog(path)).session;
    const stored = back.at(1) as { data: Record<string, unknown> };
    expect(Object.keys(stored.data)).toEqual(["__proto__", "constructor", "ok"]);
    expect(Object.getPrototypeOf(stored.data)).toBe(Object.prototype);
    expect(JSON.stringify(stored.data)).toBe(JSON.stringify(data));
    expect(back.toJSON()).toEqual(session.toJSON());
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses a log line holding absurdly deep data with log_corrupt naming the line", async () => {
    const session = Session.fromUserMessage("x");
    const writer = await SessionLogWriter.open(session, { dir });
    await writer.abandon();
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const chunk = `{"id":"c1","kind":"event","name":"deep","createdAt":1,"sessionId":"s","data":${deep}}`;
    const text = await readFile(writer.partialPath, "utf8");
    await writeFile(writer.partialPath, `${text}{"record_type":"chunk","index":1,"chunk":${chunk}}\n`);
    await expectLogError(readSessionLog(writer.partialPath), "log_corrupt", /:3: .*nests deeper than 512/);
  });
});

describe("write cost", () => {
  it("writes a placed session's new chunks without serializing the whole session", async () => {
    let session = Session.fromUserMessage("x").to("fake", { root: "/a" }, { registry });
    const writer = await SessionLogWriter.open(session, { dir });
    const toJSON = Session.prototype.toJSON;
    let calls = 0;
    Session.prototype.toJSON = function (this: Session) {
      calls++;
      return toJSON.call(this);
    };
    try {
      for (let i = 0; i < 20; i++) {
        session = session.append({ kind: "user", content: `u${i}` });
        await writer.write(session);
      }
    } finally {
      Session.prototype.toJSON = toJSON;
    }
    expect(calls).toBe(0);
    await writer.close();
    const log = await readSessionLog(writer.path);
    expect(log.session.length).toBe(21);
    expect(log.session.placement?.toJSON()).toEqual({ key: "fake", spec: { root: "/a" } });
  });

  it("records a later placement once, also when every version shares it", async () => {
    let session = Session.fromUserMessage("x");
    const writer = await SessionLogWriter.open(session, { dir });
    session = session.to("fake", { root: "/a" }, { registry });
    for (let i = 0; i < 3; i++) {
      session = session.append({ kind: "user", content: `u${i}` });
      await writer.write(session);
    }
    // Placed anew on an equal spec: a different object, the same record.
    session = session.to("fake", { root: "/a" }, { registry }).append({ kind: "user", content: "v" });
    await writer.write(session);
    await writer.close();
    const lines = (await readFile(writer.path, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.record_type === "placement")).toEqual([
      { record_type: "placement", placement: { key: "fake", spec: { root: "/a" } } },
    ]);
    expect(lines.filter((l) => l.record_type === "chunk").map((l) => l.index)).toEqual([0, 1, 2, 3, 4]);
  });
});
