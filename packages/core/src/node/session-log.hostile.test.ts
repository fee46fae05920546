import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenRathError, Session } from "@openrath/core";
import {
  listSessionLogs,
  readSessionLog,
  readSessionLogs,
  SessionLogWriter,
  writeSessionLog,
  writeSessionLogs,
} from "@openrath/core/node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let base: string;
let dir: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "openrath-log-hostile-"));
  dir = join(base, "logs");
  await mkdir(dir);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/**
 * A session whose `id` reads as `id`: what a caller gets by monkey-patching, or a copy of an older
 * core that let `fromJSON` take any id. The writer must not trust the id it is handed.
 */
function forged(id: string): Session {
  return Object.create(Session.fromUserMessage("hello"), { id: { value: id } }) as Session;
}

async function rejection(promise: Promise<unknown>): Promise<OpenRathError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!OpenRathError.isInstance(error)) throw new Error(`expected an OpenRathError, got ${String(error)}`);
  return error;
}

/** Every file under `base`, relative, so a test sees anything written outside `dir`. */
async function files(): Promise<string[]> {
  return (await readdir(base, { recursive: true })).map(String).sort();
}

describe("writeSessionLogs with an id from outside", () => {
  it("refuses ../x before it removes or writes <dir>/../x.jsonl", async () => {
    const victim = join(base, "x.jsonl");
    await writeFile(victim, "keep me");
    const error = await rejection(writeSessionLogs([forged("../x")], dir));
    expect(error.code).toBe("invalid_session_id");
    expect(error.message).toContain('"../x"');
    expect(await readFile(victim, "utf8")).toBe("keep me");
    expect(await files()).toEqual(["logs", "x.jsonl"]);
  });

  it.each([
    ["an absolute path", () => join(base, "abs")],
    ["a slash", () => "sub/x"],
    ["a backslash", () => "sub\\x"],
    ["a NUL byte", () => "x\0y"],
    ["a very long id", () => "a".repeat(100_000)],
    ["a valid id followed by a path", () => `${Session.empty().id}/../../x`],
  ])("refuses %s with invalid_session_id and writes nothing", async (_, make) => {
    const id = make();
    const error = await rejection(writeSessionLogs([forged(id)], dir));
    expect(error.code).toBe("invalid_session_id");
    expect(error.message.length).toBeLessThan(600);
    expect(await files()).toEqual(["logs"]);
  });

  it("writes the sessions before the hostile one and none after", async () => {
    const first = Session.fromUserMessage("one");
    const last = Session.fromUserMessage("three");
    await rejection(writeSessionLogs([first, forged("../x"), last], dir));
    expect(await readdir(dir)).toEqual([`${first.id}.jsonl`]);
  });

  it("still writes and reads back sessions with ids core made", async () => {
    const a = Session.fromUserMessage("a");
    const b = a.fork().append({ kind: "assistant", content: "b" });
    const paths = await writeSessionLogs([a, b], dir);
    expect(paths).toEqual([join(dir, `${a.id}.jsonl`), join(dir, `${b.id}.jsonl`)]);
    const back = await readSessionLogs(dir);
    expect(back.map((log) => log.session.toJSON()).sort((x, y) => x.id.localeCompare(y.id))).toEqual(
      [a.toJSON(), b.toJSON()].sort((x, y) => x.id.localeCompare(y.id)),
    );
  });
});

describe("SessionLogWriter.open and writeSessionLog with an id from outside", () => {
  it("refuses a hostile id in a dir before creating anything", async () => {
    const error = await rejection(SessionLogWriter.open(forged("../x"), { dir }));
    expect(error.code).toBe("invalid_session_id");
    expect(await files()).toEqual(["logs"]);
    expect((await rejection(writeSessionLog(forged("/etc/x"), { dir }))).code).toBe("invalid_session_id");
  });

  it("refuses it with an explicit path too, since the header would carry it", async () => {
    const error = await rejection(SessionLogWriter.open(forged("../x"), { path: join(dir, "ok.jsonl") }));
    expect(error.code).toBe("invalid_session_id");
    expect(existsSync(join(dir, "ok.jsonl.partial"))).toBe(false);
  });
});

describe("stored logs with a hostile header id", () => {
  async function plant(id: string): Promise<string> {
    const session = Session.fromUserMessage("x");
    const path = await writeSessionLog(session, { dir });
    const text = (await readFile(path, "utf8")).split(session.id).join(id.replaceAll("\\", "\\\\"));
    const planted = join(dir, "planted.jsonl");
    await writeFile(planted, text);
    await rm(path);
    return planted;
  }

  it("are log_corrupt when read, and left out of listSessionLogs", async () => {
    const planted = await plant("../x");
    const error = await rejection(readSessionLog(planted));
    expect(error.code).toBe("log_corrupt");
    expect(error.message).toContain("is not a session id");
    expect(await listSessionLogs(dir)).toEqual([]);
    expect(await readSessionLogs(dir)).toEqual([]);
  });

  it("leave the legitimate logs beside them listed", async () => {
    await plant("/etc/passwd");
    const good = Session.fromUserMessage("fine");
    await writeSessionLog(good, { dir });
    expect((await listSessionLogs(dir)).map((e) => e.id)).toEqual([good.id]);
  });
});
