import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxError } from "@openrath/core";
import { serviceAvailable } from "@openrath/testing";
import { afterAll, describe, expect, it } from "vitest";
import { checkBubblewrap } from "./internal/check-bubblewrap.js";
import { type LocalIsolation, localSandbox } from "./local-sandbox.js";

// Code in the sandbox swaps `d` between a real directory and a symlink to a host directory as
// fast as it can, while the host calls every file method on paths through `d`. No call may read
// or list the host directory, or write into it: whatever state `d` is in at each step of a call,
// the call stays in the workspace (see ADR 0024).

const ROUNDS = 1000;
const bubblewrap = await serviceAvailable("bubblewrap", () => checkBubblewrap("bwrap").then(() => true));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "openrath-local-races-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Node code that swaps `d` for ever: a directory holding `f` (renamed in and out), then a link to
 * `host`. Whatever the host's writes made of `d` is removed first, so the swap never sticks.
 */
function swapper(host: string): string {
  return `const fs = require("node:fs");
const attempt = (step) => { try { step(); } catch {} };
console.log("swapping");
for (;;) {
  attempt(() => fs.existsSync("r/f") || (fs.mkdirSync("r", { recursive: true }), fs.writeFileSync("r/f", "inside")));
  attempt(() => fs.rmSync("d", { recursive: true, force: true }));
  attempt(() => fs.renameSync("r", "d"));
  attempt(() => fs.renameSync("d", "r"));
  attempt(() => fs.rmSync("d", { recursive: true, force: true }));
  attempt(() => fs.symlinkSync(${JSON.stringify(host)}, "d"));
}`;
}

/** The host directory's entries, contents and modification times, to compare before and after. */
function snapshot(dir: string): string {
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const stats = lstatSync(join(dir, name));
      return stats.isFile()
        ? `${name}:${readFileSync(join(dir, name), "utf8")}:${stats.mtimeMs}`
        : `${name}/`;
    })
    .concat(`.:${statSync(dir).mtimeMs}`)
    .join("\n");
}

async function race(isolation: LocalIsolation): Promise<void> {
  const host = join(scratch, `host-${isolation}`);
  mkdirSync(host);
  writeFileSync(join(host, "f"), "SECRET");
  writeFileSync(join(host, "secret-only.txt"), "SECRET");
  const before = snapshot(host);

  const backend = localSandbox({ isolation });
  const sandbox = await backend.open(backend.parseSpec!(undefined));
  const stop = new AbortController();
  let swapping!: () => void;
  const started = new Promise<void>((resolve) => {
    swapping = resolve;
  });
  const running = sandbox
    .runCode(swapper(host), "javascript", { signal: stop.signal, onStdout: () => swapping() })
    .catch((error: unknown) => error);
  const leaks: string[] = [];
  const uncoded: string[] = [];
  const seen = { inside: 0, refused: 0 };
  const attempt = async (what: string, call: () => Promise<unknown>, leaked: (value: unknown) => boolean) => {
    try {
      const value = await call();
      if (leaked(value)) leaks.push(`${what} -> ${JSON.stringify(value)}`);
      else seen.inside++;
    } catch (error) {
      // Missing, not a directory or outside: any coded refusal is fine, a host file is not.
      if (!SandboxError.isInstance(error)) uncoded.push(`${what} -> ${String(error)}`);
      else if (error.code === "path_outside_workspace") seen.refused++;
    }
  };
  try {
    await started;
    for (let round = 0; round < ROUNDS; round++) {
      await attempt(
        "readFile(d/f)",
        () => sandbox.readFile("d/f"),
        (text) => text === "SECRET",
      );
      await attempt(
        "listFiles(d)",
        () => sandbox.listFiles("d"),
        (entries) => JSON.stringify(entries).includes("secret-only"),
      );
      await attempt(
        "listFiles(., recursive)",
        () => sandbox.listFiles(".", { recursive: true }),
        (entries) => JSON.stringify(entries).includes("secret-only"),
      );
      await attempt(
        "exists(d/secret-only.txt)",
        () => sandbox.exists("d/secret-only.txt"),
        (found) => found === true,
      );
      await attempt(
        "writeFile(d/f)",
        () => sandbox.writeFile("d/f", "written"),
        () => false,
      );
      await attempt(
        "writeFile(d/made/new.txt)",
        () => sandbox.writeFile("d/made/new.txt", "written"),
        () => false,
      );
    }
  } finally {
    stop.abort();
    await running;
    await sandbox.close();
  }
  expect(leaks, "a file call reached the host directory").toEqual([]);
  expect(snapshot(host), "a file call wrote into the host directory").toBe(before);
  expect(uncoded, "a file call failed without a SandboxError code").toEqual([]);
  // The race was run: calls met `d` as the directory and as the link.
  expect(seen.inside, "no call met d as a directory").toBeGreaterThan(0);
  expect(seen.refused, "no call met d as a link").toBeGreaterThan(0);
}

describe("file calls racing a sandbox that swaps a directory for a link to the host", () => {
  it(`isolation none: ${ROUNDS} rounds of every file call read, list and write only the workspace`, async () => {
    await race("none");
  }, 90_000);

  describe.skipIf(!bubblewrap.available)(`under bubblewrap (${bubblewrap.reason})`, () => {
    it(`${ROUNDS} rounds of every file call read, list and write only the workspace`, async () => {
      await race("bubblewrap");
    }, 90_000);
  });
});
