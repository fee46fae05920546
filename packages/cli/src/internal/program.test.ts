import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "@openrath/core";
import { writeSessionLog } from "@openrath/core/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../main.js";
import { runMain } from "../testing/run-cli.js";
import type { ParsedArgs } from "./args.js";
import type { Command, CommandGroup } from "./command.js";
import { type CommandTree, runProgram } from "./program.js";

const leaves = COMMANDS.flatMap((c) => ("commands" in c ? c.commands : [c]));
const groups = COMMANDS.filter((c): c is CommandGroup => "commands" in c);

/** Runs the real `openrath` in this process; output is captured, the process is never exited. */
const cli = (argv: string[], cwd?: string) => runMain(argv, cwd ? { cwd } : {});

/** A one-line usage error: exit 2, nothing on stdout, one line on stderr. */
function expectUsage(run: { code: number; stdout: string; stderr: string }, start: string): void {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe("");
  expect(run.stderr.startsWith(`openrath: ${start}`), run.stderr).toBe(true);
  expect(run.stderr.endsWith("\n")).toBe(true);
  expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
}

describe("help on every command of the tree", () => {
  it.each(leaves.map((c) => [c.name, c] as const))("openrath %s", async (name, command) => {
    const words = name.split(" ");
    for (const argv of [
      [...words, "--help"],
      [...words, "-h"],
      ["help", ...words],
    ]) {
      const run = await cli(argv);
      expect(run.code, argv.join(" ")).toBe(0);
      expect(run.stderr).toBe("");
      expect(run.stdout.startsWith(`Usage: openrath ${name}`), run.stdout).toBe(true);
      expect(run.stdout).toContain(command.summary);
      for (const option of command.options) expect(run.stdout).toContain(`--${option.name}`);
      for (const example of command.examples ?? []) expect(run.stdout).toContain(example);
      expect(run.stdout).toContain("-h, --help");
    }
  });

  it.each(groups.map((g) => [g.name, g] as const))("openrath %s (a group)", async (name, group) => {
    for (const argv of [[name], [name, "--help"], ["help", name], [name, "help"]]) {
      const run = await cli(argv);
      expect(run.code, argv.join(" ")).toBe(0);
      expect(run.stdout.startsWith(`Usage: openrath ${name} <command> [options]`), run.stdout).toBe(true);
      for (const command of group.commands) expect(run.stdout).toMatch(new RegExp(`\\n  ${command.name}\\b`));
    }
    const sub = group.commands[0]!;
    const viaHelp = await cli([name, "help", sub.name.split(" ")[1]!]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout.startsWith(`Usage: openrath ${sub.name}`)).toBe(true);
  });

  it("lists every runnable command at the top, under its full name", async () => {
    const run = await cli(["--help"]);
    expect(run.code).toBe(0);
    for (const command of leaves) expect(run.stdout).toMatch(new RegExp(`\\n  ${command.name}\\b.*  \\S`));
    expect(run.stdout).toContain("  help [command]");
  });
});

describe("usage errors: one line, exit 2, a hint", () => {
  it.each(leaves.map((c) => [c.name] as const))("an unknown option of openrath %s", async (name) => {
    const run = await cli([...name.split(" "), "--bogus-option"]);
    expectUsage(run, `unknown option --bogus-option for openrath ${name}; see openrath ${name} --help`);
  });

  it.each(groups.map((g) => [g.name, g] as const))(
    "an unknown command of openrath %s",
    async (name, group) => {
      const run = await cli([name, "nope"]);
      const words = group.commands.map((c) => c.name.split(" ")[1]).join(", ");
      expectUsage(
        run,
        `unknown command "${name} nope"; ${name} commands: ${words}; see openrath ${name} --help`,
      );
    },
  );

  it("suggests the option or command meant", async () => {
    expectUsage(
      await cli(["runs", "list", "--jsn"]),
      "unknown option --jsn for openrath runs list (did you mean --json?)",
    );
    expectUsage(
      await cli(["sessions", "prun"]),
      'unknown command "sessions prun"; sessions commands: list, show, prune (did you mean prune?)',
    );
  });

  it("names a missing value, a value outside the choices, a missing and an extra argument", async () => {
    expectUsage(
      await cli(["lineage", "x", "--out"]),
      "option --out needs a value <file>; see openrath lineage --help",
    );
    expectUsage(
      await cli(["interrupts", "list", "--status", "open"]),
      'option --status must be one of pending, decided, expired, all; got "open"',
    );
    expectUsage(
      await cli(["runs", "show"]),
      "openrath runs show needs <run id>; see openrath runs show --help",
    );
    expectUsage(await cli(["runs", "show", "a", "b"]), 'unexpected argument "b" for openrath runs show');
    expectUsage(await cli(["lineage", "x", "--ids=yes"]), "unknown option --ids=yes for openrath lineage");
  });

  it("keeps the program's own options before a command", async () => {
    expectUsage(await cli(["runs", "list", "--version"]), "unknown option --version for openrath runs list");
    const version = await cli(["-v"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^openrath \d+\.\d+\.\d+/);
  });
});

describe("what a command receives", () => {
  /** Parses `argv` against one declared command and returns what its run() got. */
  async function parse(argv: string[], command: Partial<Command> = {}): Promise<ParsedArgs> {
    let got: ParsedArgs | undefined;
    const declared: Command = {
      name: "view",
      summary: "A test command.",
      args: [
        { name: "<log>", description: "a log" },
        { name: "[extra]", description: "optional", optional: true },
      ],
      options: [
        { name: "format", short: "f", value: "<format>", choices: ["text", "html"], description: "format" },
        { name: "out", short: "o", value: "<file>", description: "out" },
        { name: "ids", description: "a flag" },
        { name: "no-worker", description: "a negative flag" },
      ],
      run: async () => 0,
      ...command,
    };
    const tree: CommandTree = [declared];
    const status = await runProgram(["view", ...argv], {
      commands: tree,
      version: "test",
      stdout: { write: () => true },
      run: async (_, parsed) => {
        got = parsed;
        return 7;
      },
    });
    expect(status).toBe(7);
    return got!;
  }

  it("gets positionals, --name value, --name=value, short options and flags, and only what was given", async () => {
    expect(await parse(["dir", "--format", "html", "-o", "x.html", "--ids"])).toEqual({
      positionals: ["dir"],
      options: { format: "html", out: "x.html", ids: true },
      help: false,
    });
    expect((await parse(["--format=text", "dir", "more"])).positionals).toEqual(["dir", "more"]);
    expect((await parse(["dir", "-ftext"])).options).toEqual({ format: "text" });
    expect((await parse(["dir", "--no-worker"])).options).toEqual({ "no-worker": true });
  });

  it("lets a later occurrence win, and reads what follows -- as arguments", async () => {
    expect((await parse(["d", "-f", "text", "--format", "html"])).options.format).toBe("html");
    expect((await parse(["--", "--ids"])).positionals).toEqual(["--ids"]);
    expect((await parse(["d", "--", "--help"])).positionals).toEqual(["d", "--help"]);
    expect((await parse(["-"])).positionals).toEqual(["-"]);
  });

  it("drops a -- before the options of a command without arguments (pnpm demo -- --record x)", async () => {
    const parsed = await parse(["--", "--out", "x"], { args: [] });
    expect(parsed).toEqual({ positionals: [], options: { out: "x" }, help: false });
  });
});

describe("--json on every list and show command prints JSON", () => {
  let dir: string;
  let runId: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "openrath-cli-json-"));
    const demo = await cli(["demo", "--state", "st"], dir);
    expect(demo.code, demo.stderr).toBe(0);
    runId = /Started run ([0-9a-f-]+)/.exec(demo.stderr)![1]!;
    const token = await cli(
      ["tokens", "create", "--state", "st", "--name", "ci", "--grants", "run.read", "--json"],
      dir,
    );
    expect(token.code, token.stderr).toBe(0);
    await writeSessionLog(Session.fromUserMessage("hello"), { dir: join(dir, "logs") });
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Each line of stdout parsed (lists print one JSON object per line). */
  const lines = (stdout: string) =>
    stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it("lists: one object per line, or nothing for an empty list", async () => {
    const cases: [string[], number][] = [
      [["runs", "list"], 1],
      [["runs", "events", "RUN"], 10],
      [["interrupts", "list", "--status", "all"], 0],
      [["effects", "list"], 0],
      [["tokens", "list"], 1],
      [["sessions", "list", "--dir", "logs"], 1],
    ];
    for (const [argv, atLeast] of cases) {
      const words = argv.map((w) => (w === "RUN" ? runId : w));
      const store = words[0] === "sessions" ? [] : ["--state", "st"];
      const run = await cli([...words, ...store, "--json"], dir);
      expect(run.code, `${argv.join(" ")}: ${run.stderr}`).toBe(0);
      const parsed = lines(run.stdout);
      expect(parsed.length, argv.join(" ")).toBeGreaterThanOrEqual(atLeast);
      if (atLeast === 0) expect(run.stdout).toBe("");
    }
  });

  it("shows: one JSON document", async () => {
    const run = JSON.parse((await cli(["runs", "show", runId, "--state", "st", "--json"], dir)).stdout);
    expect(run).toMatchObject({ id: runId, status: "succeeded" });
    const [entry] = lines((await cli(["sessions", "list", "--dir", "logs", "--json"], dir)).stdout);
    const shown = await cli(["sessions", "show", String(entry!.id), "--dir", "logs", "--json"], dir);
    expect(shown.code, shown.stderr).toBe(0);
    const document = JSON.parse(shown.stdout);
    expect(document).toMatchObject({ format: "openrath.session-log", version: 1, state: "closed" });
    expect(Session.fromJSON(document.session).id).toBe(entry!.id);
    expect(document.session.chunks[0]).toMatchObject({ kind: "user", content: "hello" });
  });
});
