import { confinePath, type ExecResult } from "./sandbox.js";
import { defineTool, type Tool } from "./tool.js";

const MAX_READ_CHARS = 12_000;
const MAX_ENTRIES = 500;

/** What a command or code run looks like to the model (no timings: replays must see the same text). */
function execProjection(result: ExecResult) {
  return {
    exit_code: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    truncated: result.truncated,
  };
}

/** One lane per file, whatever spelling of its path the model used ("./a.txt" and "a.txt" are one file). */
function fsLane(path: string): string {
  try {
    return `fs:${confinePath(path, "/")}`;
  } catch {
    return `fs:${path}`;
  }
}

const pathParam = { type: "string", description: "Path relative to the workspace root." } as const;

/** `run_shell_command`: one shell command in the session's sandbox. */
export const runShellCommand = defineTool<{ cmd: string; cwd?: string; timeout_seconds?: number }>({
  name: "run_shell_command",
  description:
    "Run one shell command (/bin/sh -c) in the workspace and return its exit code, stdout and stderr. Long output is cut.",
  parameters: {
    type: "object",
    properties: {
      cmd: { type: "string", minLength: 1, maxLength: 8192, description: "The command line." },
      cwd: {
        type: "string",
        description: "Working directory relative to the workspace root (default: the root).",
      },
      timeout_seconds: {
        type: "number",
        minimum: 1,
        maximum: 3600,
        description: "Kill the command after this long.",
      },
    },
    required: ["cmd"],
    additionalProperties: false,
  },
  // Any command may act on the world: a crash mid-command parks the run for review.
  effect: "non_idempotent",
  needsSandbox: true,
  resourceKey: () => "sandbox:exec",
  async execute(args, ctx) {
    const sandbox = await ctx.sandbox();
    const result = await sandbox.exec(args.cmd, {
      signal: ctx.signal,
      ...(args.cwd !== undefined ? { cwd: args.cwd } : {}),
      ...(args.timeout_seconds !== undefined ? { timeoutMs: args.timeout_seconds * 1000 } : {}),
    });
    return execProjection(result);
  },
});

/** `read_workspace_file`: a text file's content (cut at 12 000 characters). */
export const readWorkspaceFile = defineTool<{ path: string }>({
  name: "read_workspace_file",
  description: "Read a UTF-8 text file from the workspace.",
  parameters: {
    type: "object",
    properties: { path: pathParam },
    required: ["path"],
    additionalProperties: false,
  },
  effect: "read_only",
  needsSandbox: true,
  resourceKey: (args) => fsLane(args.path),
  async execute(args, ctx) {
    const data = await (await ctx.sandbox()).readFile(args.path);
    return data.length > MAX_READ_CHARS
      ? { data: `${data.slice(0, MAX_READ_CHARS)}...(truncated)`, total_chars: data.length }
      : { data };
  },
});

/** `write_workspace_file`: create or replace a text file. */
export const writeWorkspaceFile = defineTool<{ path: string; content: string }>({
  name: "write_workspace_file",
  description: "Create or replace a UTF-8 text file in the workspace (parent directories are created).",
  parameters: {
    type: "object",
    properties: { path: pathParam, content: { type: "string", description: "The whole new content." } },
    required: ["path", "content"],
    additionalProperties: false,
  },
  // Writing the same content to the same path again changes nothing: the call may be retried.
  effect: "idempotent",
  idempotencyKey: true,
  needsSandbox: true,
  resourceKey: (args) => fsLane(args.path),
  async execute(args, ctx) {
    const { bytesWritten } = await (await ctx.sandbox()).writeFile(args.path, args.content);
    return { bytes_written: bytesWritten };
  },
});

/** `list_workspace_files`: a directory's entries (first 500). */
export const listWorkspaceFiles = defineTool<{ path?: string; recursive?: boolean }>({
  name: "list_workspace_files",
  description: "List a directory of the workspace (default: the root).",
  parameters: {
    type: "object",
    properties: { path: pathParam, recursive: { type: "boolean", description: "Include subdirectories." } },
    additionalProperties: false,
  },
  effect: "read_only",
  needsSandbox: true,
  resourceKey: (args) => fsLane(args.path ?? "."),
  async execute(args, ctx) {
    const entries = await (await ctx.sandbox()).listFiles(args.path ?? ".", {
      recursive: args.recursive ?? false,
    });
    return {
      entries: entries
        .slice(0, MAX_ENTRIES)
        .map((e) => ({ name: e.name, path: e.path, type: e.type, size: e.size })),
      ...(entries.length > MAX_ENTRIES ? { total_entries: entries.length } : {}),
    };
  },
});

/** `workspace_path_exists`: whether a path exists. */
export const workspacePathExists = defineTool<{ path: string }>({
  name: "workspace_path_exists",
  description: "Tell whether a file or directory exists in the workspace.",
  parameters: {
    type: "object",
    properties: { path: pathParam },
    required: ["path"],
    additionalProperties: false,
  },
  effect: "read_only",
  needsSandbox: true,
  resourceKey: (args) => fsLane(args.path),
  async execute(args, ctx) {
    return { exists: await (await ctx.sandbox()).exists(args.path) };
  },
});

/** `run_code`: a snippet in one of the sandbox's languages. */
export const runCode = defineTool<{ code: string; language?: string; timeout_seconds?: number }>({
  name: "run_code",
  description: "Run a code snippet in the workspace (default language: python) and return its output.",
  parameters: {
    type: "object",
    properties: {
      code: { type: "string", minLength: 1 },
      language: { type: "string", description: "For example python, javascript or bash." },
      timeout_seconds: { type: "number", minimum: 1, maximum: 3600 },
    },
    required: ["code"],
    additionalProperties: false,
  },
  effect: "non_idempotent",
  needsSandbox: true,
  resourceKey: () => "sandbox:exec",
  async execute(args, ctx) {
    const result = await (await ctx.sandbox()).runCode(args.code, args.language ?? "python", {
      signal: ctx.signal,
      ...(args.timeout_seconds !== undefined ? { timeoutMs: args.timeout_seconds * 1000 } : {}),
    });
    return execProjection(result);
  },
});

/**
 * The six built-in sandbox tools (the Python original's names). An agent offers them to the model
 * only when the session is placed on a sandbox, and they run on whatever backend that is.
 */
export const SANDBOX_TOOLS: readonly Tool<never>[] = Object.freeze([
  runShellCommand,
  readWorkspaceFile,
  writeWorkspaceFile,
  listWorkspaceFiles,
  workspacePathExists,
  runCode,
] as unknown as Tool<never>[]);
