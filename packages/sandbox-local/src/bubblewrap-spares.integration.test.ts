import { readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import type { SandboxV1 } from "@openrath/core";
import { serviceAvailable } from "@openrath/testing";
import { afterEach, describe, expect, it } from "vitest";
import { checkBubblewrap } from "./internal/check-bubblewrap.js";
import { localSandbox } from "./local-sandbox.js";

// Spares: after a command, the supervisor starts the next command's namespace ahead (same
// environment and directory), its init waiting for the operands. These tests look at them from the
// host's process table and check that using one changes nothing a command can observe.

const check = await serviceAvailable("bubblewrap", () => checkBubblewrap("bwrap").then(() => true));

const opened: SandboxV1[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
});

async function open(): Promise<SandboxV1> {
  const backend = localSandbox({ isolation: "bubblewrap" });
  const sandbox = await backend.open(backend.parseSpec!(undefined));
  opened.push(sandbox);
  return sandbox;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Host pids of spare inits (`/bin/sh -c INIT sh`, no operands yet) working in `directory`. */
function spareInits(directory: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").slice(0, -1);
      if (
        argv.length === 4 &&
        argv[0] === "/bin/sh" &&
        argv[2]?.includes("read -r openrath_line") &&
        readlinkSync(`/proc/${entry}/cwd`) === directory
      )
        found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Waits until `probe` returns a non-empty list (a spare starts in the background). */
async function eventually(probe: () => number[]): Promise<number[]> {
  const deadline = Date.now() + 5000;
  let found = probe();
  while (found.length === 0 && Date.now() < deadline) {
    await sleep(20);
    found = probe();
  }
  return found;
}

function children(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  } catch {
    return "";
  }
}

describe.skipIf(!check.available)(`bubblewrap spares (${check.reason})`, () => {
  it("start the next command's namespace ahead, and the next command runs in it", async () => {
    const sandbox = await open();
    const workspace = realpathSync(sandbox.workspace);
    expect(spareInits(workspace), "no spare before the first command").toEqual([]);
    await sandbox.exec("true");
    const [spare] = await eventually(() => spareInits(workspace));
    expect(spare).toBeDefined();
    expect(children(spare!), "a spare's init waits without a child").toBe("");
    const running = sandbox.exec("sleep 1; echo done");
    let child = "";
    const deadline = Date.now() + 3000;
    while (!child && Date.now() < deadline) {
      await sleep(20);
      child = children(spare!);
    }
    expect(child, "the command runs as the spare's child").toMatch(/^\d+$/);
    expect((await running).stdout).toBe("done\n");
  });

  it("are not used for a directory that was replaced under the same path", async () => {
    const sandbox = await open();
    await sandbox.exec("mkdir sub");
    expect((await sandbox.exec("ls", { cwd: "sub" })).stdout).toBe("");
    await eventually(() => spareInits(realpathSync(`${sandbox.workspace}/sub`)));
    await sandbox.exec("rm -r sub && mkdir sub && echo new > sub/file");
    const listing = await sandbox.exec("ls; pwd -P", { cwd: "sub" });
    expect(listing.stdout).toBe(`file\n${realpathSync(`${sandbox.workspace}/sub`)}\n`);
  });

  it("leave the variables their init uses to the command's environment", async () => {
    const sandbox = await open();
    const env = { openrath_nl: "one", openrath_line: "two" };
    for (let i = 0; i < 3; i++) {
      const result = await sandbox.exec('printf "%s %s" "$openrath_nl" "$openrath_line"', { env });
      expect(result.stdout).toBe("one two");
    }
    // Nor do they leak into commands without them.
    await sandbox.exec("true");
    await sleep(100);
    const plain = await sandbox.exec(`printf "%s" "\${openrath_nl-unset} \${openrath_line-unset}"`);
    expect(plain.stdout).toBe("unset unset");
  });

  it("do not take long commands, whose operands go on the namespace's command line", async () => {
    const sandbox = await open();
    const workspace = realpathSync(sandbox.workspace);
    await sandbox.exec("true");
    const [spare] = await eventually(() => spareInits(workspace));
    const long = "x".repeat(20_000);
    const result = await sandbox.exec(["printf", "%s", long]);
    expect(result.stdout).toBe(long);
    expect(spareInits(workspace), "the spare still waits, untaken").toContain(spare);
  });
});
