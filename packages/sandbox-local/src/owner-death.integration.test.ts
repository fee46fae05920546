import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serviceAvailable } from "@openrath/testing";
import { afterAll, describe, expect, it } from "vitest";
import { checkBubblewrap } from "./internal/check-bubblewrap.js";
import { localSandbox } from "./local-sandbox.js";

// The owning Node.js process ends while a sandbox is open and a command runs: normally, by a
// signal it does not handle itself, or by SIGKILL. Nothing may be left: no process of the
// command (found in the host's process table by a marker in its command line) and no temporary
// directory (the child's TMPDIR is a directory of its own, which must end up empty).

const bubblewrap = await serviceAvailable("bubblewrap", () => checkBubblewrap("bwrap").then(() => true));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "openrath-owner-death-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pids of live processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmdline.includes(marker) && state !== "Z") found.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

type Ending = "exit" | "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGKILL";

/** Whether unisolated commands have PID namespaces here (see ADR 0023). */
const contained = localSandbox().capabilities.processTree === "contained";

/**
 * The command each child leaves running: a grandchild that double-forks, calls setsid, clears its
 * environment and ignores SIGTERM; unisolated without PID namespaces, a background job in the
 * command's group (the best-effort claim covers that, not a detached one).
 */
function command(isolation: "none" | "bubblewrap", marker: string): string {
  return isolation === "none" && !contained
    ? `sh -c 'sleep 30' ${marker} & echo started; sleep 30`
    : `(setsid env -i /bin/sh -c 'trap "" TERM HUP INT; sleep 30' ${marker} &); echo started; sleep 30`;
}

async function endOwner(
  isolation: "none" | "bubblewrap",
  ending: Ending,
): Promise<{ marker: string; tmp: string }> {
  const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
  const marker = `openrath-owner-${isolation}-${ending}-${process.pid}`;
  const tmp = join(scratch, `${isolation}-${ending}`);
  mkdirSync(tmp);
  const script = join(scratch, `${isolation}-${ending}.mts`);
  writeFileSync(
    script,
    `import { localSandbox } from ${JSON.stringify(join(packageDir, "src", "index.ts"))};
const backend = localSandbox({ isolation: ${JSON.stringify(isolation)} });
const sandbox = await backend.open(undefined);
sandbox.exec(${JSON.stringify(command(isolation, marker))}, {
  onStdout: () => {
    console.log("started");
    ${ending === "exit" ? "setTimeout(() => process.exit(0), 600);" : ""}
  },
}).catch(() => {});
setInterval(() => {}, 1000);
`,
  );
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@openrath/source", script], {
    cwd: packageDir,
    env: { ...process.env, TMPDIR: tmp },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", () => resolve());
    child.on("close", (code) => reject(new Error(`child exited early with ${code}`)));
  });
  await sleep(150);
  expect(processesWith(marker).length, "the command's process never started").toBeGreaterThan(0);
  const closed = new Promise((resolve) => child.on("close", resolve));
  if (ending !== "exit") child.kill(ending);
  await closed;
  // The SIGKILL watchdog works after the owner is gone: give it a moment.
  for (let i = 0; i < 30 && (processesWith(marker).length > 0 || leftovers(tmp).length > 0); i++) {
    await sleep(100);
  }
  return { marker, tmp };
}

/** What the sandbox left in a TMPDIR (tsx keeps a cache of its own there). */
function leftovers(tmp: string): string[] {
  return readdirSync(tmp).filter((name) => name.startsWith("openrath-"));
}

const endings: Ending[] = ["exit", "SIGINT", "SIGTERM", "SIGHUP", "SIGKILL"];

describe("the owning process ends with a sandbox open", () => {
  it.each(endings)(
    `isolation none, owner ends by %s: no process${contained ? ", not even a detached one," : ""} and no temporary directory left`,
    async (ending) => {
      const { marker, tmp } = await endOwner("none", ending);
      expect(processesWith(marker), "a process of the command survived its owner").toEqual([]);
      expect(leftovers(tmp), "temporary directories survived their owner").toEqual([]);
    },
  );

  describe.skipIf(!bubblewrap.available)(`under bubblewrap (${bubblewrap.reason})`, () => {
    it.each(endings)(
      "owner ends by %s: not even a detached, SIGTERM-ignoring grandchild is left, nor a directory",
      async (ending) => {
        const { marker, tmp } = await endOwner("bubblewrap", ending);
        expect(processesWith(marker), "a process of the command survived its owner").toEqual([]);
        expect(leftovers(tmp), "temporary directories survived their owner").toEqual([]);
      },
    );
  });
});
