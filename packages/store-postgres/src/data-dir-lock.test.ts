import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { lockDataDir } from "./data-dir-lock.js";
import { pgliteStore } from "./postgres-store.js";

const run = promisify(execFile);
const bin = fileURLToPath(new URL("./bin.ts", import.meta.url));

async function codeOf(work: () => Promise<unknown> | unknown): Promise<string | undefined> {
  try {
    await work();
    return undefined;
  } catch (error) {
    return OpenRathError.isInstance(error) ? error.code : String(error);
  }
}

describe("one process per embedded database directory", () => {
  it("a second store on an open directory is store_locked, in this process or another, and the directory is not touched", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "openrath-lock-")), "db");
    const first = await pgliteStore({ dataDir });
    expect(existsSync(`${dataDir}.lock`)).toBe(true);
    expect(await codeOf(() => pgliteStore({ dataDir }))).toBe("store_locked");
    // openrath-migrate on the same directory refuses too, and says why.
    const cli = await run(
      process.execPath,
      ["--conditions=@openrath/source", "--import", "tsx", bin, "--pglite", dataDir],
      { cwd: fileURLToPath(new URL("..", import.meta.url)) },
    ).then(
      () => ({ code: 0, out: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, out: e.stderr }),
    );
    expect(cli.code).toBe(1);
    expect(cli.out).toMatch(/is open in process \d+ on /);
    // The first store still works, and once it is closed the directory opens again.
    expect(await first.listRuns({ tenantId: "default" })).toEqual([]);
    await first.close();
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    const again = await pgliteStore({ dataDir });
    expect(await again.listRuns({ tenantId: "default" })).toEqual([]);
    await again.close();
  });

  it("a lock left by a process that was killed is taken over; a live one, or one from another host, is not", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "openrath-lock-")), "db");
    const lockFile = `${dataDir}.lock`;
    const holder = spawn("sleep", ["30"], { stdio: "ignore" });
    const exited = new Promise((r) => holder.once("exit", r));
    writeFileSync(lockFile, JSON.stringify({ pid: holder.pid, host: hostname() }));
    expect(await codeOf(() => lockDataDir(dataDir))).toBe("store_locked");
    holder.kill("SIGKILL");
    await exited;
    const release = lockDataDir(dataDir);
    expect(JSON.parse(readFileSync(lockFile, "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(await codeOf(() => lockDataDir(dataDir))).toBe("store_locked");
    release();
    expect(existsSync(lockFile)).toBe(false);

    writeFileSync(lockFile, JSON.stringify({ pid: 1, host: `not-${hostname()}` }));
    expect(await codeOf(() => lockDataDir(dataDir))).toBe("store_locked");
    // This process's own pid in a lock it does not hold: an earlier process with the same pid.
    writeFileSync(lockFile, JSON.stringify({ pid: process.pid, host: hostname() }));
    lockDataDir(dataDir)();
    expect(existsSync(lockFile)).toBe(false);
  });
});
