import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import * as fs from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  Agent,
  createRegistry,
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  listWorkspaceFiles,
  readWorkspaceFile,
  runCode,
  runShellCommand,
  SANDBOX_TOOLS,
  type SandboxBackendV1,
  SandboxError,
  type SandboxV1,
  ScriptedProvider,
  Session,
  type Tool,
  type ToolContext,
  type ToolResultChunk,
  workspacePathExists,
  writeWorkspaceFile,
} from "@openrath/core";
import { confinePath, decodeTextFile } from "@openrath/core/backend";
import { afterEach, describe, expect, it } from "vitest";

declare module "@openrath/core" {
  interface SandboxBackends {
    "temp-dir-double": undefined;
  }
}

/**
 * TEST DOUBLE: a SandboxV1 over a temporary directory, with host processes (no isolation). It
 * implements exec/readFile/writeFile/listFiles/exists/runCode faithfully enough for the built-in
 * tools' projections, and records each call's options. Core cannot depend on
 * @openrath/sandbox-local (that package depends on core), so the real backend is not used here.
 */
class TempDirSandboxDouble implements SandboxV1 {
  readonly id: string;
  readonly workspace: string;
  readonly calls: { method: string; args: unknown[] }[] = [];
  closed = false;

  constructor() {
    this.workspace = mkdtempSync(join(tmpdir(), "openrath-core-test-"));
    this.id = this.workspace;
  }

  private abs(path: string): string {
    return join(this.workspace, confinePath(path, this.workspace));
  }

  private fsError(error: unknown, path: string): never {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new SandboxError("file_not_found", `${path} does not exist.`);
    if (code === "EISDIR") throw new SandboxError("not_a_file", `${path} is a directory.`);
    if (code === "ENOTDIR") throw new SandboxError("not_a_directory", `${path} is not a directory.`);
    throw error;
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.calls.push({ method: "exec", args: [command, options] });
    const argv = typeof command === "string" ? ["/bin/sh", "-c", command] : [...command];
    return this.spawn(argv, options);
  }

  private spawn(argv: string[], options: ExecOptions): Promise<ExecResult> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd: options.cwd === undefined ? this.workspace : this.abs(options.cwd),
        env: { ...process.env, ...options.env },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      let failure: SandboxError | undefined;
      child.stdout.on("data", (d) => {
        stdout += d;
      });
      child.stderr.on("data", (d) => {
        stderr += d;
      });
      const kill = (error: SandboxError) => {
        failure = error;
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {}
      };
      const timer =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(() => kill(new SandboxError("exec_timeout", "timed out")), options.timeoutMs);
      const onAbort = () => kill(new SandboxError("aborted", "aborted"));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      child.on("error", reject);
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        if (failure) return reject(failure);
        resolve({
          exitCode: code ?? 128 + (signal === "SIGKILL" ? 9 : 15),
          stdout,
          stderr,
          truncated: false,
          durationMs: Date.now() - started,
        });
      });
    });
  }

  readFile(path: string, options?: { readonly encoding?: "utf8" }): Promise<string>;
  readFile(path: string, options: { readonly encoding: "bytes" }): Promise<Uint8Array>;
  async readFile(
    path: string,
    options?: { readonly encoding?: "utf8" | "bytes" },
  ): Promise<string | Uint8Array> {
    this.calls.push({ method: "readFile", args: [path, options] });
    const bytes = await fs.readFile(this.abs(path)).catch((e) => this.fsError(e, path));
    return options?.encoding === "bytes" ? new Uint8Array(bytes) : decodeTextFile(bytes, path);
  }

  async writeFile(path: string, data: string | Uint8Array): Promise<{ readonly bytesWritten: number }> {
    this.calls.push({ method: "writeFile", args: [path, data] });
    const target = this.abs(path);
    await fs.mkdir(dirname(target), { recursive: true });
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    await fs.writeFile(target, bytes);
    return { bytesWritten: bytes.length };
  }

  async listFiles(path = ".", options: { readonly recursive?: boolean } = {}): Promise<FileEntry[]> {
    this.calls.push({ method: "listFiles", args: [path, options] });
    const out: FileEntry[] = [];
    const walk = async (relative: string) => {
      const entries = await fs
        .readdir(join(this.workspace, relative), { withFileTypes: true })
        .catch((e) => this.fsError(e, path));
      for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const rel = relative === "." ? entry.name : `${relative}/${entry.name}`;
        const type = entry.isDirectory() ? "directory" : entry.isFile() ? "file" : "other";
        const size = type === "file" ? (await fs.stat(join(this.workspace, rel))).size : 0;
        out.push({ name: entry.name, path: rel, type, size });
        if (options.recursive && type === "directory") await walk(rel);
      }
    };
    await walk(confinePath(path, this.workspace));
    return out;
  }

  async exists(path: string): Promise<boolean> {
    this.calls.push({ method: "exists", args: [path] });
    return fs.access(this.abs(path)).then(
      () => true,
      () => false,
    );
  }

  async runCode(
    code: string,
    language: string,
    options: Omit<ExecOptions, "stdin"> = {},
  ): Promise<ExecResult> {
    this.calls.push({ method: "runCode", args: [code, language, options] });
    const argv =
      language === "python"
        ? ["python3", "-c", code]
        : language === "javascript"
          ? [process.execPath, "-e", code]
          : language === "bash"
            ? ["bash", "-c", code]
            : undefined;
    if (!argv) throw new SandboxError("unsupported_language", `No interpreter for ${language}.`);
    return this.spawn(argv, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await fs.rm(this.workspace, { recursive: true, force: true });
  }
}

const live: TempDirSandboxDouble[] = [];
afterEach(async () => {
  await Promise.all(live.splice(0).map((s) => s.close()));
});

function double(): TempDirSandboxDouble {
  const sandbox = new TempDirSandboxDouble();
  live.push(sandbox);
  return sandbox;
}

/** A tool context whose sandbox is `sandbox`; the session is never read by the built-ins. */
function contextFor(sandbox: SandboxV1, signal = new AbortController().signal): ToolContext {
  return {
    session: Session.empty(),
    agent: "test",
    callId: "call_test",
    signal,
    sandbox: async () => sandbox,
    emit: () => {},
  };
}

/** Validates `raw` like the agent does, then runs the tool. */
async function call<A>(tool: Tool<A>, raw: unknown, sandbox: SandboxV1): Promise<unknown> {
  const checked = await tool.validate(raw);
  if (!checked.ok) throw new Error(`invalid arguments: ${checked.problems.join("; ")}`);
  return tool.execute(checked.value as A, contextFor(sandbox));
}

describe("the built-in tool set", () => {
  it("has the six original names, all needing a sandbox", () => {
    expect(SANDBOX_TOOLS.map((t) => t.name)).toEqual([
      "run_shell_command",
      "read_workspace_file",
      "write_workspace_file",
      "list_workspace_files",
      "workspace_path_exists",
      "run_code",
    ]);
    expect(SANDBOX_TOOLS.every((t) => t.needsSandbox)).toBe(true);
    expect(Object.isFrozen(SANDBOX_TOOLS)).toBe(true);
  });

  it("closes every schema to extra properties", () => {
    for (const tool of SANDBOX_TOOLS) expect(tool.parameters.additionalProperties).toBe(false);
  });

  it.each([
    [runShellCommand, { cmd: "ls" }, "sandbox:exec"],
    [runCode, { code: "print(1)" }, "sandbox:exec"],
    [readWorkspaceFile, { path: "a.txt" }, "fs:a.txt"],
    [writeWorkspaceFile, { path: "a.txt", content: "" }, "fs:a.txt"],
    [workspacePathExists, { path: "a.txt" }, "fs:a.txt"],
    [listWorkspaceFiles, { path: "dir" }, "fs:dir"],
    [listWorkspaceFiles, {}, "fs:."],
  ] as [Tool<never>, unknown, string][])("%# puts a call in the lane %s", (tool, args, key) => {
    expect(tool.resourceKey(args as never)).toBe(key);
  });

  it("puts two spellings of the same path in the same lane", () => {
    expect(readWorkspaceFile.resourceKey({ path: "./notes.txt" })).toBe(
      writeWorkspaceFile.resourceKey({ path: "notes.txt", content: "" }),
    );
  });
});

describe("built-in tool schemas", () => {
  it.each([
    [runShellCommand, {}, "$.cmd: is required"],
    [runShellCommand, { cmd: "" }, "$.cmd: shorter than 1"],
    [runShellCommand, { cmd: "ls", timeout_seconds: 0 }, "$.timeout_seconds: below the minimum 1"],
    [runShellCommand, { cmd: "ls", timeout_seconds: 7200 }, "$.timeout_seconds: above the maximum 3600"],
    [runShellCommand, { cmd: "ls", shell: "bash" }, "$.shell: is not an allowed property"],
    [readWorkspaceFile, { path: 3 }, "$.path: expected string, got integer"],
    [writeWorkspaceFile, { path: "a" }, "$.content: is required"],
    [writeWorkspaceFile, { path: "a", content: { text: "x" } }, "$.content: expected string, got object"],
    [listWorkspaceFiles, { recursive: "yes" }, "$.recursive: expected boolean, got string"],
    [workspacePathExists, {}, "$.path: is required"],
    [runCode, { code: "" }, "$.code: shorter than 1"],
  ] as [Tool<never>, unknown, string][])("%# refuses %j with %s", async (tool, args, problem) => {
    expect(await tool.validate(args)).toEqual({ ok: false, problems: [problem] });
  });

  it("accepts list_workspace_files without arguments", async () => {
    expect(await listWorkspaceFiles.validate({})).toEqual({ ok: true, value: {} });
  });
});

describe("built-in tool projections", () => {
  it("run_shell_command returns exit code, stdout, stderr and truncation, without timings", async () => {
    const sandbox = double();
    const result = await call(runShellCommand, { cmd: "echo out; echo err >&2; exit 3" }, sandbox);
    expect(result).toEqual({ exit_code: 3, stdout: "out\n", stderr: "err\n", truncated: false });
  });

  it("run_shell_command passes cwd, the timeout in milliseconds and the run's signal", async () => {
    const sandbox = double();
    await fs.mkdir(join(sandbox.workspace, "sub"));
    const signal = new AbortController().signal;
    const checked = await runShellCommand.validate({ cmd: "pwd", cwd: "sub", timeout_seconds: 5 });
    if (!checked.ok) throw new Error("invalid");
    const args = checked.value as Parameters<typeof runShellCommand.execute>[0];
    const result = (await runShellCommand.execute(args, contextFor(sandbox, signal))) as {
      stdout: string;
    };
    expect(result.stdout.trim()).toMatch(/\/sub$/);
    expect(sandbox.calls[0]).toEqual({
      method: "exec",
      args: ["pwd", { signal, cwd: "sub", timeoutMs: 5000 }],
    });
  });

  it("run_shell_command lets a sandbox timeout through as an error", async () => {
    const sandbox = double();
    await expect(
      call(runShellCommand, { cmd: "sleep 5", timeout_seconds: 1 }, sandbox),
    ).rejects.toMatchObject({
      code: "exec_timeout",
    });
  }, 10_000);

  it("write_workspace_file creates parents and reports the bytes written (UTF-8)", async () => {
    const sandbox = double();
    expect(await call(writeWorkspaceFile, { path: "deep/dir/a.txt", content: "héllo" }, sandbox)).toEqual({
      bytes_written: 6,
    });
    expect(await fs.readFile(join(sandbox.workspace, "deep/dir/a.txt"), "utf8")).toBe("héllo");
  });

  it("read_workspace_file returns the text", async () => {
    const sandbox = double();
    await fs.writeFile(join(sandbox.workspace, "a.txt"), "line 1\nline 2\n");
    expect(await call(readWorkspaceFile, { path: "a.txt" }, sandbox)).toEqual({ data: "line 1\nline 2\n" });
  });

  it("read_workspace_file cuts text at 12 000 characters and gives the full length", async () => {
    const sandbox = double();
    await fs.writeFile(join(sandbox.workspace, "big.txt"), "abc".repeat(5000));
    expect(await call(readWorkspaceFile, { path: "big.txt" }, sandbox)).toEqual({
      data: `${"abc".repeat(4000)}...(truncated)`,
      total_chars: 15_000,
    });
    await fs.writeFile(join(sandbox.workspace, "exact.txt"), "x".repeat(12_000));
    expect(await call(readWorkspaceFile, { path: "exact.txt" }, sandbox)).toEqual({
      data: "x".repeat(12_000),
    });
  });

  it("read_workspace_file lets the sandbox's errors through", async () => {
    const sandbox = double();
    await expect(call(readWorkspaceFile, { path: "missing.txt" }, sandbox)).rejects.toMatchObject({
      code: "file_not_found",
    });
    await expect(call(readWorkspaceFile, { path: "../outside.txt" }, sandbox)).rejects.toMatchObject({
      code: "path_outside_workspace",
    });
  });

  it("list_workspace_files lists the root by default, non-recursively, with type and size", async () => {
    const sandbox = double();
    await fs.mkdir(join(sandbox.workspace, "dir"));
    await fs.writeFile(join(sandbox.workspace, "dir/inner.txt"), "1234");
    await fs.writeFile(join(sandbox.workspace, "b.txt"), "12");
    expect(await call(listWorkspaceFiles, {}, sandbox)).toEqual({
      entries: [
        { name: "b.txt", path: "b.txt", type: "file", size: 2 },
        { name: "dir", path: "dir", type: "directory", size: 0 },
      ],
    });
    expect(sandbox.calls.at(-1)).toEqual({ method: "listFiles", args: [".", { recursive: false }] });
    const recursive = (await call(listWorkspaceFiles, { recursive: true }, sandbox)) as {
      entries: { path: string }[];
    };
    expect(recursive.entries.map((e) => e.path)).toEqual(["b.txt", "dir", "dir/inner.txt"]);
  });

  it("list_workspace_files keeps the first 500 entries and reports the total", async () => {
    const sandbox = double();
    await fs.mkdir(join(sandbox.workspace, "many"));
    await Promise.all(
      Array.from({ length: 510 }, (_, i) =>
        fs.writeFile(join(sandbox.workspace, "many", `f${String(i).padStart(3, "0")}`), ""),
      ),
    );
    const result = (await call(listWorkspaceFiles, { path: "many" }, sandbox)) as {
      entries: { name: string }[];
      total_entries: number;
    };
    expect(result.entries).toHaveLength(500);
    expect(result.entries.at(-1)!.name).toBe("f499");
    expect(result.total_entries).toBe(510);
  });

  it("workspace_path_exists answers true and false", async () => {
    const sandbox = double();
    await fs.writeFile(join(sandbox.workspace, "here.txt"), "");
    expect(await call(workspacePathExists, { path: "here.txt" }, sandbox)).toEqual({ exists: true });
    expect(await call(workspacePathExists, { path: "gone.txt" }, sandbox)).toEqual({ exists: false });
  });

  it("run_code runs python by default and another language when asked", async () => {
    const sandbox = double();
    expect(await call(runCode, { code: "print(6 * 7)" }, sandbox)).toEqual({
      exit_code: 0,
      stdout: "42\n",
      stderr: "",
      truncated: false,
    });
    expect(sandbox.calls.at(-1)?.args.slice(0, 2)).toEqual(["print(6 * 7)", "python"]);
    expect(await call(runCode, { code: "console.log('js')", language: "javascript" }, sandbox)).toMatchObject(
      {
        exit_code: 0,
        stdout: "js\n",
      },
    );
  });

  it("run_code reports a failing snippet as a result with its exit code", async () => {
    const sandbox = double();
    const result = (await call(runCode, { code: "raise SystemExit('bad')" }, sandbox)) as {
      exit_code: number;
      stderr: string;
    };
    expect(result.exit_code).toBe(1);
    expect(result.stderr).toContain("bad");
  });

  it("run_code passes the timeout in milliseconds", async () => {
    const sandbox = double();
    await call(runCode, { code: "true", language: "bash", timeout_seconds: 2 }, sandbox);
    expect(sandbox.calls.at(-1)).toMatchObject({ args: ["true", "bash", { timeoutMs: 2000 }] });
  });
});

describe("built-in tools in an agent run on a placed session", () => {
  const opened: TempDirSandboxDouble[] = [];
  const backend: SandboxBackendV1 = {
    kind: "sandbox",
    key: "temp-dir-double",
    specVersion: "v1",
    capabilities: {
      streaming: false,
      stdin: false,
      network: "open",
      isolation: "process",
      snapshots: false,
      languages: ["python", "javascript", "bash"],
    },
    async open() {
      const sandbox = double();
      opened.push(sandbox);
      return sandbox;
    },
  };
  const registry = createRegistry({ sandboxes: [backend] });

  const results = (session: Session) =>
    session.chunks
      .filter((c): c is ToolResultChunk => c.kind === "tool_result")
      .map((c) => ({ name: c.name, body: JSON.parse(c.content) }));

  it("runs the model's file and shell calls in one sandbox, opened once and closed on release", async () => {
    opened.length = 0;
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { name: "write_workspace_file", arguments: { path: "notes/todo.txt", content: "buy milk" } },
          { name: "read_workspace_file", arguments: { path: "notes/todo.txt" } },
        ],
      },
      {
        toolCalls: [
          { name: "list_workspace_files", arguments: { path: "notes" } },
          { name: "workspace_path_exists", arguments: { path: "notes/todo.txt" } },
          { name: "run_shell_command", arguments: { cmd: "wc -c < notes/todo.txt" } },
          { name: "run_code", arguments: { code: "print(open('notes/todo.txt').read().upper())" } },
        ],
      },
      { text: "Your list says: buy milk." },
    ]);
    const input = Session.fromUserMessage("What is on my list?").to("temp-dir-double", undefined, {
      registry,
    });
    const out = await new Agent({ name: "assistant", provider }).run(input);
    expect(opened).toHaveLength(1);
    expect(results(out)).toEqual([
      { name: "write_workspace_file", body: { bytes_written: 8 } },
      { name: "read_workspace_file", body: { data: "buy milk" } },
      {
        name: "list_workspace_files",
        body: { entries: [{ name: "todo.txt", path: "notes/todo.txt", type: "file", size: 8 }] },
      },
      { name: "workspace_path_exists", body: { exists: true } },
      { name: "run_shell_command", body: { exit_code: 0, stdout: "8\n", stderr: "", truncated: false } },
      { name: "run_code", body: { exit_code: 0, stdout: "BUY MILK\n", stderr: "", truncated: false } },
    ]);
    expect(out.text()).toBe("Your list says: buy milk.");
    await input.release();
    expect(opened[0]!.closed).toBe(false);
    await out.release();
    expect(opened[0]!.closed).toBe(true);
  });

  it("sends sandbox errors back to the model with their codes", async () => {
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { name: "read_workspace_file", arguments: { path: "nope.txt" } },
          { name: "read_workspace_file", arguments: { path: "../../etc/passwd" } },
          { name: "run_code", arguments: { code: "x", language: "cobol" } },
          { name: "run_shell_command", arguments: { cmd: "" } },
        ],
      },
      { text: "done" },
    ]);
    const input = Session.fromUserMessage("go").to("temp-dir-double", undefined, { registry });
    const out = await new Agent({ name: "a", provider }).run(input);
    expect(results(out).map((r) => r.body.error_kind)).toEqual([
      "file_not_found",
      "path_outside_workspace",
      "unsupported_language",
      "invalid_tool_arguments",
    ]);
    await Promise.all([input.release(), out.release()]);
  });

  it("shares the sandbox with forks, so a later agent sees the files", async () => {
    const writer = new Agent({
      name: "writer",
      provider: new ScriptedProvider([
        { toolCalls: [{ name: "write_workspace_file", arguments: { path: "x.txt", content: "42" } }] },
        { text: "written" },
      ]),
    });
    const reader = new Agent({
      name: "reader",
      provider: new ScriptedProvider([
        { toolCalls: [{ name: "read_workspace_file", arguments: { path: "x.txt" } }] },
        { text: "read" },
      ]),
    });
    const input = Session.fromUserMessage("go").to("temp-dir-double", undefined, { registry });
    const written = await writer.run(input);
    const branch = written.fork();
    const read = await reader.run(branch);
    expect(results(read).at(-1)).toEqual({ name: "read_workspace_file", body: { data: "42" } });
    await Promise.all([input, written, branch, read].map((s) => s.release()));
  });
});
