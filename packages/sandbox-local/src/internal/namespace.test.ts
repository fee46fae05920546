import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxError } from "@openrath/core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Namespace } from "./namespace.js";

// The supervisor's protocol and kill path, run on the host (`env` in place of bubblewrap) with a
// stand-in for util-linux unshare that makes no namespace and sets no parent-death signal: what a
// command that cleared its init's parent-death signal would leave. The real chain is covered by
// the bubblewrap integration tests.

const dir = realpathSync(mkdtempSync(join(tmpdir(), "openrath-namespace-test-")));
const fakeUnshare = join(dir, "fake-unshare");
writeFileSync(
  fakeUnshare,
  // Skips unshare's options, then runs the init shell as a plain child, with this stdin.
  `#!/bin/sh
while [ "$1" != "--" ]; do shift; done
shift
exec 3<&0
"$@" <&3 3<&- &
wait $!
`,
);
chmodSync(fakeUnshare, 0o755);

const opened: Namespace[] = [];
const strays: number[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((namespace) => namespace.close()));
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(): Promise<Namespace> {
  const namespace = await Namespace.start({
    bwrapPath: "env",
    args: [],
    node: process.execPath,
    unshare: fakeUnshare,
  });
  opened.push(namespace);
  return namespace;
}

function alive(pid: number): boolean {
  try {
    const state = /^\d+ \(.*\) (\w)/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

const run = (namespace: Namespace, argv: string[], extra: { timeoutMs?: number; stdin?: string } = {}) =>
  namespace.run({
    argv,
    cwd: dir,
    env: { PATH: "/usr/bin:/bin" },
    timeoutMs: extra.timeoutMs ?? 10_000,
    maxOutputBytes: 1024 * 1024,
    ...(extra.stdin !== undefined ? { stdin: extra.stdin } : {}),
  });

describe.skipIf(process.platform !== "linux")("the supervisor", () => {
  it("kills a command's init itself on timeout, not only unshare (whose parent-death signal a command can clear)", async () => {
    const namespace = await start();
    const pidFile = join(dir, "init.pid");
    const error = await run(
      namespace,
      ["/bin/sh", "-c", `echo $PPID $$ > ${pidFile}; exec sleep 30 </dev/null >/dev/null 2>&1`],
      {
        timeoutMs: 300,
      },
    ).catch((caught: unknown) => caught);
    expect(SandboxError.isInstance(error, "exec_timeout")).toBe(true);
    const [init, command] = readFileSync(pidFile, "utf8").trim().split(" ").map(Number) as [number, number];
    // Without a PID namespace the command itself is left (the real chain takes it with its init).
    strays.push(command);
    const deadline = Date.now() + 2000;
    while (alive(init) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(init), "the init shell outlived the kill").toBe(false);
  });

  it("runs commands in spares with their operands and stdin intact", async () => {
    const namespace = await start();
    const argv = ["printf", "[%s]", "a'b\nc", '$HOME `x` \\ "', "", " sp ", "tab\there", "émoji 🎉"];
    const expected = "[a'b\nc][$HOME `x` \\ \"][][ sp ][tab\there][émoji 🎉]";
    // The first command starts a namespace of its own; the next ones find a spare waiting.
    for (let i = 0; i < 3; i++) {
      expect((await run(namespace, argv)).stdout).toBe(expected);
      expect((await run(namespace, ["cat"], { stdin: `in ${i}\n` })).stdout).toBe(`in ${i}\n`);
    }
  });
});
