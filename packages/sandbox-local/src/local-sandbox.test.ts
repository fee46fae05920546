import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createRegistry,
  defaultRegistry,
  OpenRathError,
  SandboxError,
  type SandboxErrorCode,
  type SandboxV1,
  Session,
} from "@openrath/core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { localSandbox } from "./index.js";
import { processesWith } from "./testing/process-table.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "openrath-local-test-")));
const opened: SandboxV1[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const backend = localSandbox();
async function open(spec?: Parameters<typeof backend.open>[0], using = backend): Promise<SandboxV1> {
  const sandbox = await using.open(spec);
  opened.push(sandbox);
  return sandbox;
}

async function rejects(
  promise: Promise<unknown>,
  code: SandboxErrorCode | "invalid_argument",
): Promise<OpenRathError> {
  try {
    await promise;
  } catch (error) {
    expect(OpenRathError.isInstance(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
    return error as OpenRathError;
  }
  throw new Error(`expected a rejection with ${code}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A `sleep` duration unique to this test run, to find the process by its command line (pids
 * inside a command's PID namespace are not the host's).
 */
let sleeps = 0;
const uniqueSleep = () => `600.${process.pid}${String(++sleeps).padStart(4, "0")}`;

/** Whether a live process has `word` in its command line. */
const running = (word: string) => processesWith(word).length > 0;

describe("the descriptor", () => {
  it("is the local sandbox backend, with capabilities matching its default isolation", () => {
    expect(backend).toMatchObject({ kind: "sandbox", key: "local", specVersion: "v1" });
    expect(backend.capabilities).toMatchObject({
      streaming: true,
      stdin: true,
      network: "open",
      isolation: "process",
      snapshots: false,
    });
    expect(backend.capabilities.languages).toEqual(expect.arrayContaining(["javascript", "sh"]));
    expect(localSandbox({ isolation: "bubblewrap" }).capabilities).toMatchObject({
      network: "none",
      isolation: "namespace",
    });
  });

  it("refuses a spec that loosens the backend's isolation, in parseSpec and in open", async () => {
    const isolated = localSandbox({ isolation: "bubblewrap" });
    expect(() => isolated.parseSpec!({ isolation: "none" })).toThrow(/tighten isolation, never loosen/);
    await rejects(isolated.open({ isolation: "none" }), "invalid_spec");
  });

  it("places a session through a registry, typed by its key", async () => {
    const registry = createRegistry({ sandboxes: [backend] });
    const session = Session.fromUserMessage("hi").to("local", { timeoutMs: 10_000 }, { registry });
    expect(session.placement?.toJSON()).toEqual({
      key: "local",
      spec: { timeoutMs: 10_000, isolation: "none" },
    });
    const sandbox = await session.sandbox();
    expect((await sandbox.exec("echo hi")).stdout).toBe("hi\n");
    await session.release();
    await rejects(sandbox.exec("true"), "sandbox_closed");
  });

  it("registers itself in the default registry through ./register", async () => {
    await import("./register.js");
    expect(defaultRegistry().has("sandbox", "local")).toBe(true);
    expect(defaultRegistry().sandbox("local").capabilities.isolation).toBe("process");
  });

  it("fails a bubblewrap open with sandbox_unavailable when bwrap is missing or cannot sandbox", async () => {
    const missing = localSandbox({ isolation: "bubblewrap", bwrapPath: "/nonexistent/bwrap" });
    const error = await rejects(missing.open(undefined), "sandbox_unavailable");
    expect(error.message).toMatch(/"\/nonexistent\/bwrap" was not found. Install bubblewrap/);
    const failing = localSandbox({ bwrapPath: "/bin/false" });
    const refused = await rejects(failing.open({ isolation: "bubblewrap" }), "sandbox_unavailable");
    expect(refused.message).toMatch(/cannot create a sandbox here \(exit 1/);
  });

  it("rejects an open whose signal already fired", async () => {
    const controller = new AbortController();
    controller.abort();
    await rejects(backend.open(undefined, { signal: controller.signal }), "aborted");
  });
});

describe("the workspace", () => {
  it("is a fresh temporary directory, deleted on close", async () => {
    const sandbox = await open();
    expect(sandbox.workspace).toMatch(/\/openrath-local-[^/]+$/);
    expect(sandbox.id).toBe(sandbox.workspace);
    await sandbox.writeFile("file.txt", "x");
    await sandbox.close();
    expect(existsSync(sandbox.workspace)).toBe(false);
  });

  it("is the given directory, created when missing and kept on close", async () => {
    const workspace = join(scratch, "given", "nested");
    const sandbox = await open({ workspace });
    expect(sandbox.workspace).toBe(workspace);
    await sandbox.writeFile("kept.txt", "kept");
    expect((await sandbox.exec("pwd")).stdout).toBe(`${workspace}\n`);
    await sandbox.close();
    expect(readFileSync(join(workspace, "kept.txt"), "utf8")).toBe("kept");
  });

  it("fails to open with sandbox_open_failed when the workspace is a file", async () => {
    const file = join(scratch, "a-file");
    writeFileSync(file, "x");
    const error = await rejects(backend.open({ workspace: file }), "sandbox_open_failed");
    expect(error.message).toContain(file);
  });

  it("keeps reporting a workspace given through a symlink by that path", async () => {
    const real = join(scratch, "real-ws");
    const alias = join(scratch, "alias-ws");
    const made = await open({ workspace: real });
    await made.exec(["ln", "-s", real, alias]);
    const sandbox = await open({ workspace: alias });
    expect(sandbox.workspace).toBe(alias);
    expect((await sandbox.exec("pwd")).stdout).toBe(`${alias}\n`);
    await sandbox.writeFile(`${real}/by-real-path.txt`, "ok");
    expect(await sandbox.readFile(`${alias}/by-real-path.txt`)).toBe("ok");
  });
});

describe("the environment", () => {
  it("inherits the host's by default, with the spec's env over it and the exec's over both", async () => {
    process.env.OPENRATH_LOCAL_TEST_HOST = "host";
    try {
      const sandbox = await open({ env: { LAYER: "spec", ONLY_SPEC: "spec" } });
      const result = await sandbox.exec(
        'printf "%s|%s|%s" "$OPENRATH_LOCAL_TEST_HOST" "$LAYER" "$ONLY_SPEC"',
        {
          env: { LAYER: "exec" },
        },
      );
      expect(result.stdout).toBe("host|exec|spec");
    } finally {
      delete process.env.OPENRATH_LOCAL_TEST_HOST;
    }
  });

  it("with inheritEnv false holds only PATH, HOME, LANG, TMPDIR, PWD and the command's marker (plus the spec's env)", async () => {
    process.env.OPENRATH_LOCAL_TEST_SECRET = "secret";
    try {
      const sandbox = await open({ inheritEnv: false, env: { EXTRA: "1" } });
      const result = await sandbox.exec(["/usr/bin/env"]);
      const names = result.stdout
        .trim()
        .split("\n")
        .map((line) => line.split("=")[0]);
      expect(names.sort()).toEqual(["EXTRA", "HOME", "LANG", "OPENRATH_EXEC_ID", "PATH", "PWD", "TMPDIR"]);
      const vars = Object.fromEntries(
        result.stdout
          .trim()
          .split("\n")
          .map((line) => line.split(/=(.*)/s)),
      );
      expect(vars.HOME).toBe(sandbox.workspace);
      expect(vars.LANG).toBe("C.UTF-8");
      expect(vars.PATH).toBe(process.env.PATH);
      // TMPDIR is private to the sandbox: writable, and gone after close.
      expect((await sandbox.exec('mktemp "$TMPDIR/x.XXXXXX"')).exitCode).toBe(0);
      await sandbox.close();
      expect(existsSync(vars.TMPDIR!)).toBe(false);
    } finally {
      delete process.env.OPENRATH_LOCAL_TEST_SECRET;
    }
  });
});

describe("exec", () => {
  it("applies the spec's timeoutMs to every command unless the exec sets its own", async () => {
    const sandbox = await open({ timeoutMs: 300 });
    const error = await rejects(sandbox.exec("sleep 10"), "exec_timeout");
    expect(error.details.timeoutMs).toBe(300);
    expect((await sandbox.exec("sleep 0.5; echo late", { timeoutMs: 5_000 })).stdout).toBe("late\n");
  });

  it("caps output at the factory's maxOutputBytes unless the exec sets its own", async () => {
    const sandbox = await open(undefined, localSandbox({ maxOutputBytes: 4 }));
    const capped = await sandbox.exec("printf 123456");
    expect(capped).toMatchObject({
      stdout: "1234\n[output truncated: 2 more bytes not shown]\n",
      truncated: true,
    });
    expect((await sandbox.exec("printf 123456", { maxOutputBytes: 100 })).stdout).toBe("123456");
  });

  it("answers a missing executable in argv with exit code 127, as a shell would", async () => {
    const sandbox = await open();
    const result = await sandbox.exec(["openrath-no-such-command"]);
    expect(result.exitCode).toBe(127);
    expect(result.stderr).toContain("openrath-no-such-command");
  });

  it("refuses an empty argv with invalid_argument", async () => {
    const sandbox = await open();
    await rejects(sandbox.exec([]), "invalid_argument");
    await rejects(sandbox.exec([1] as unknown as string[]), "invalid_argument");
  });

  it("refuses a cwd that is a file with not_a_directory", async () => {
    const sandbox = await open();
    await sandbox.writeFile("plain.txt", "x");
    await rejects(sandbox.exec("pwd", { cwd: "plain.txt" }), "not_a_directory");
  });

  it("refuses a timeoutMs that is not a positive number", async () => {
    const sandbox = await open();
    await rejects(sandbox.exec("true", { timeoutMs: 0 }), "invalid_argument");
    await rejects(sandbox.exec("true", { timeoutMs: Number.NaN }), "invalid_argument");
  });
});

describe("files", () => {
  it("lists symlinks as symlinks without descending into them, depth-first by name", async () => {
    const sandbox = await open();
    await sandbox.writeFile("b/inner.txt", "i");
    await sandbox.writeFile("a.txt", "a");
    await sandbox.writeFile("c/d/e.txt", "e");
    await sandbox.exec("ln -s b link-to-b");
    const entries = await sandbox.listFiles(".", { recursive: true });
    expect(entries.map((e) => [e.path, e.type])).toEqual([
      ["a.txt", "file"],
      ["b", "directory"],
      ["b/inner.txt", "file"],
      ["c", "directory"],
      ["c/d", "directory"],
      ["c/d/e.txt", "file"],
      ["link-to-b", "symlink"],
    ]);
    expect(entries.find((e) => e.type === "directory")?.size).toBe(0);
  });

  it("refuses to read a special file (a FIFO would block forever) with not_a_file", async () => {
    const sandbox = await open();
    await sandbox.exec("mkfifo pipe");
    await rejects(sandbox.readFile("pipe"), "not_a_file");
  });

  it("refuses to write the root or below a file", async () => {
    const sandbox = await open();
    await rejects(sandbox.writeFile(".", "x"), "not_a_file");
    await sandbox.writeFile("file", "x");
    await rejects(sandbox.writeFile("file/below.txt", "x"), "not_a_directory");
    await sandbox.writeFile("dir/x.txt", "x");
    await rejects(sandbox.writeFile("dir", "x"), "not_a_file");
  });

  it("refuses data that is neither text nor bytes", async () => {
    const sandbox = await open();
    await rejects(sandbox.writeFile("x", 42 as unknown as string), "invalid_argument");
  });

  it("reads bytes as a plain Uint8Array", async () => {
    const sandbox = await open();
    await sandbox.writeFile("b.bin", new Uint8Array([1, 2, 3]));
    const bytes = await sandbox.readFile("b.bin", { encoding: "bytes" });
    expect(bytes.constructor).toBe(Uint8Array);
    expect(bytes).toEqual(new Uint8Array([1, 2, 3]));
  });
});

describe("runCode", () => {
  it.each(backend.capabilities.languages.map((language) => [language]))(
    "runs %s from a script outside the workspace and removes it",
    async (language) => {
      const sandbox = await open();
      const code =
        language === "python"
          ? "print('ran')"
          : language === "javascript"
            ? "console.log('ran')"
            : "echo ran";
      expect((await sandbox.runCode(code, language)).stdout).toBe("ran\n");
      expect(await sandbox.listFiles(".", { recursive: true })).toEqual([]);
    },
  );

  it("runs javascript as a module when it uses module syntax, and as CommonJS otherwise", async () => {
    const sandbox = await open();
    const esm = await sandbox.runCode(
      'import { sep } from "node:path"; console.log(await Promise.resolve(sep))',
      "javascript",
    );
    expect(esm).toMatchObject({ exitCode: 0, stdout: "/\n" });
    const cjs = await sandbox.runCode('console.log(typeof require("node:fs").readFileSync)', "javascript");
    expect(cjs).toMatchObject({ exitCode: 0, stdout: "function\n" });
  });

  it("streams python output as it is printed", async () => {
    const sandbox = await open();
    if (!backend.capabilities.languages.includes("python")) return;
    let firstAt = 0;
    const result = await sandbox.runCode(
      "import time\nprint('first')\ntime.sleep(1)\nprint('second')",
      "python",
      {
        onStdout: () => {
          firstAt ||= Date.now();
        },
      },
    );
    expect(result.stdout).toBe("first\nsecond\n");
    expect(Date.now() - firstAt).toBeGreaterThanOrEqual(700);
  });

  it("refuses a language the host lacks with unsupported_language listing what it has", async () => {
    const sandbox = await open();
    const error = await rejects(sandbox.runCode("1", "toString"), "unsupported_language");
    expect(error.details.languages).toEqual(backend.capabilities.languages);
  });
});

describe("close", () => {
  it("kills running commands, which reject with sandbox_closed", async () => {
    const sandbox = await open();
    const running = rejects(sandbox.exec("echo started; sleep 30"), "sandbox_closed");
    await sleep(200);
    const started = Date.now();
    await sandbox.close();
    const error = await running;
    expect(error.details.stdout).toBe("started\n");
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("kills background processes that outlived their command", async () => {
    const sandbox = await open();
    const duration = uniqueSleep();
    await sandbox.exec(`nohup sleep ${duration} >/dev/null 2>&1 &`);
    expect(running(duration), "the background job ended with its command").toBe(true);
    await sandbox.close();
    expect(running(duration), "the background job survived close()").toBe(false);
  });

  it("is idempotent, and every method refuses afterwards", async () => {
    const sandbox = await open();
    await Promise.all([sandbox.close(), sandbox.close()]);
    await sandbox.close();
    await rejects(sandbox.runCode("echo x", "sh"), "sandbox_closed");
    await rejects(sandbox.listFiles(), "sandbox_closed");
    expect(SandboxError.isInstance(await sandbox.exists(".").catch((e) => e), "sandbox_closed")).toBe(true);
  });

  it("happens on process exit: process groups killed and temporary directories removed", async () => {
    const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
    const script = join(scratch, "exit-child.mts");
    const durations = [uniqueSleep(), uniqueSleep()];
    writeFileSync(
      script,
      `import { localSandbox } from ${JSON.stringify(join(packageDir, "src", "index.ts"))};
const sandbox = await localSandbox().open(undefined);
await sandbox.exec("nohup sleep ${durations[0]} >/dev/null 2>&1 &");
sandbox.exec("echo started; exec sleep ${durations[1]}", {
  onStdout: () => {
    console.log(JSON.stringify({ workspace: sandbox.workspace }));
    process.exit(0);
  },
});
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@openrath/source", script], {
      cwd: packageDir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code, stderr).toBe(0);
    const { workspace } = JSON.parse(stdout) as { workspace: string };
    // The exit handler sends the kills; the kernel takes a moment to carry them out.
    for (let i = 0; i < 50 && durations.some(running); i++) await sleep(100);
    for (const duration of durations) {
      expect(running(duration), `sleep ${duration} survived the exit`).toBe(false);
    }
    expect(existsSync(workspace)).toBe(false);
  });
});
