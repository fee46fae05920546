import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lineageGraph } from "@openrath/core";
import { readSessionLogs } from "@openrath/core/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIO } from "./main.js";
import { runMain } from "./testing/run-cli.js";

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI with captured, non-terminal streams and no API key in the environment. */
const cli = (argv: string[], io: Partial<CliIO> = {}): Promise<Run> => runMain(argv, { cwd: dir, ...io });

let dir: string;
let demo: Run;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-cli-"));
  demo = await cli(["demo", "--record", "recording", "--lineage", "out/lineage.html"]);
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("openrath (no command), --help, --version", () => {
  it("prints the command list for no arguments, --help and help", async () => {
    for (const argv of [[], ["--help"], ["-h"], ["help"]]) {
      const run = await cli(argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("Usage: openrath <command> [options]");
      for (const command of [
        "demo",
        "lineage",
        "replay",
        "sandboxes prune",
        "sessions list",
        "sessions show",
        "sessions prune",
      ]) {
        expect(run.stdout).toMatch(new RegExp(`\\n  ${command}\\s+\\S`));
      }
    }
  });

  it("prints --help for every command and group", async () => {
    for (const argv of [
      ["demo", "--help"],
      ["lineage", "-h"],
      ["replay", "--help"],
      ["sessions", "list", "--help"],
      ["sessions", "show", "--help"],
      ["sessions", "prune", "--help"],
      ["help", "lineage"],
    ]) {
      const run = await cli(argv);
      expect(run.code, argv.join(" ")).toBe(0);
      expect(run.stdout).toMatch(/^Usage: openrath /);
      expect(run.stdout).toContain("-h, --help");
    }
    const lineage = await cli(["lineage", "--help"]);
    expect(lineage.stdout).toContain("--format <format>");
    expect(lineage.stdout).toContain("(text, mermaid, dot, json, jsonl, html)");
    for (const argv of [["sessions"], ["sessions", "--help"]]) {
      const group = await cli(argv);
      expect(group.code).toBe(0);
      expect(group.stdout).toContain("Usage: openrath sessions <command> [options]");
    }
  });

  it("prints the package version", async () => {
    const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    const run = await cli(["--version"]);
    expect(run).toEqual({ code: 0, stdout: `openrath ${pkg.version}\n`, stderr: "" });
  });
});

describe("usage errors: one line on stderr, exit 2", () => {
  it.each([
    [
      ["bogus"],
      'openrath: unknown command: "bogus"; commands: completion, demo, effects, import, interrupts, lineage, migrate, replay, runs, sandboxes, serve, sessions, tokens, worker; see openrath --help',
    ],
    [["--bogus"], 'openrath: an option needs a command before it: "--bogus"'],
    [["lineage", "x", "--bogus"], "openrath: unknown option --bogus for openrath lineage"],
    [["lineage"], "openrath: openrath lineage needs <log | directory>"],
    [
      ["lineage", "x", "--format", "svg"],
      'openrath: option --format must be one of text, mermaid, dot, json, jsonl, html; got "svg"',
    ],
    [["lineage", "x", "--format", "html"], "openrath: --format html writes a file: pass --out <file.html>"],
    [
      ["sessions", "purge"],
      'openrath: unknown command "sessions purge"; sessions commands: list, show, prune',
    ],
    [["sessions", "prune"], "openrath: openrath sessions prune needs --older-than <duration>"],
    [["sessions", "prune", "--older-than", "soon"], 'openrath: --older-than: invalid duration "soon"'],
    [["demo", "extra"], 'openrath: unexpected argument "extra" for openrath demo'],
  ])("%j", async (argv, message) => {
    const run = await cli(argv);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.startsWith(message)).toBe(true);
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("runtime errors: one line with the error code, exit 1", () => {
  it("names a missing path", async () => {
    const run = await cli(["lineage", "no-such-dir"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`openrath: No such file or directory: ${join(dir, "no-such-dir")} [not_found]\n`);
  });

  it("names the file and line of a corrupt log", async () => {
    await writeFile(join(dir, "corrupt.jsonl"), '{"record_type":"header"\n');
    const run = await cli(["lineage", "corrupt.jsonl"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^openrath: .*corrupt\.jsonl:1: .* \[log_corrupt\]\n$/);
  });

  it("prints the stack with OPENRATH_DEBUG=1", async () => {
    const run = await cli(["lineage", "no-such-dir"], { env: { OPENRATH_DEBUG: "1" } });
    expect(run.stderr.split("\n")[0]).toContain("[not_found]");
    expect(run.stderr).toContain("    at ");
  });
});

describe("openrath demo", () => {
  it("prints the report with the specialists' findings", () => {
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain("OpenRath MAMS demo");
    expect(demo.stdout).toContain("The sentence has 9 words.");
    expect(demo.stdout).toContain('The longest word is "quick".');
  });

  it("shows progress as plain lines off a terminal, on stderr", () => {
    expect(demo.stderr).toContain("▶ mams\n");
    expect(demo.stderr).toContain("  wordsmith → run_shell_command\n");
    expect(demo.stderr).not.toContain("\u001b[");
    expect(demo.stdout).not.toContain("▶ mams");
  });

  it("records a directory of session logs with a manifest, and writes the viewer", async () => {
    const names = await readdir(join(dir, "recording"));
    expect(names).toContain("recording.json");
    expect(names.filter((n) => n.endsWith(".jsonl")).length).toBeGreaterThanOrEqual(8);
    const manifest = JSON.parse(await readFile(join(dir, "recording", "recording.json"), "utf8"));
    expect(manifest).toMatchObject({ format: "openrath.recording", version: 1, workflow: "mams" });
    expect(names).toContain(`${manifest.finalSessionId}.jsonl`);
    expect(demo.stderr).toContain(`Recorded ${names.length - 1} sessions to ${join(dir, "recording")}`);
    const html = await readFile(join(dir, "out", "lineage.html"), "utf8");
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain(manifest.finalSessionId);
  });

  it("replays the recording with the same report and no model calls", async () => {
    const run = await cli(["demo", "--replay", "recording"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(demo.stdout);
    expect(run.stderr).toContain("Replayed 13 model calls from the recording; no model was called.");
  }, 60_000);

  it("replaces a previous recording but refuses a directory of foreign logs", async () => {
    await cp(join(dir, "recording"), join(dir, "again"), { recursive: true });
    const again = await cli(["demo", "--record", "again"]);
    expect(again.code).toBe(0);
    const logs = await readSessionLogs(join(dir, "again"));
    const graph = lineageGraph(...logs.map((l) => l.session));
    expect(graph.nodes.filter((n) => n.op === "leaf_user")).toHaveLength(1);

    await cp(join(dir, "recording"), join(dir, "foreign"), { recursive: true });
    await rm(join(dir, "foreign", "recording.json"));
    const refused = await cli(["demo", "--record", "foreign"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /holds \d+ session log\(s\) that are not a recording .* \[recording_conflict\]\n$/,
    );
  }, 60_000);
});

describe("openrath lineage", () => {
  it("prints the tree of every session in a directory", async () => {
    const run = await cli(["lineage", "recording"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^#1 leaf_user Session\.fromUserMessage \(1 chunk\)\n/);
    for (const agent of ["planner", "wordsmith", "analyst", "statistician", "writer"]) {
      expect(run.stdout).toMatch(new RegExp(`loop ${agent} \\(\\d+ chunks, \\d+ tokens\\)`));
    }
    expect(run.stdout).toContain("compress compressor");
    expect(run.stdout).toMatch(/└─ ↳ merge into #\d+/);
    const ids = await cli(["lineage", "recording", "--ids"]);
    expect(ids.stdout).toMatch(/^#1 [0-9a-f]{8} leaf_user/);
  });

  it("prints mermaid, dot, json and jsonl to stdout", async () => {
    const mermaid = await cli(["lineage", "recording", "--format", "mermaid"]);
    expect(mermaid.stdout).toMatch(/^flowchart LR\n/);
    const dot = await cli(["lineage", "recording", "-f", "dot"]);
    expect(dot.stdout).toMatch(/^digraph lineage \{/);
    const json = JSON.parse((await cli(["lineage", "recording", "-f", "json"])).stdout);
    expect(json).toMatchObject({ format: "openrath.lineage", version: 1 });
    expect(json.nodes).toHaveLength(13);
    expect(json.nodes.filter((n: { op: string }) => n.op === "merge")).toHaveLength(2);
    expect(json.nodes.find((n: { op: string }) => n.op === "workflow").usage.totalTokens).toBeGreaterThan(0);
    const jsonl = (await cli(["lineage", "recording", "-f", "jsonl"])).stdout.trimEnd().split("\n");
    expect(jsonl).toHaveLength(13);
    expect(JSON.parse(jsonl[0]!)).toMatchObject({ lineage_kind: "leaf_user" });
  });

  it("reads a single log file too", async () => {
    const manifest = JSON.parse(await readFile(join(dir, "recording", "recording.json"), "utf8"));
    const run = await cli(["lineage", join("recording", `${manifest.finalSessionId}.jsonl`)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("workflow mams");
  });

  it("writes any format to --out and says so on stderr", async () => {
    const run = await cli(["lineage", "recording", "--format", "html", "--out", "views/l.html"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      `Wrote html lineage of 13 sessions (8 logs) to ${join(dir, "views", "l.html")}\n`,
    );
    expect(await readFile(join(dir, "views", "l.html"), "utf8")).toContain('id="openrath-data"');
    const dot = await cli(["lineage", "recording", "-f", "dot", "-o", "views/l.dot"]);
    expect(dot.code).toBe(0);
    expect(await readFile(join(dir, "views", "l.dot"), "utf8")).toMatch(/^digraph lineage/);
  });
});

describe("openrath replay", () => {
  it("reports an identical replay", async () => {
    const run = await cli(["replay", "recording"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("✓ replayed 13 model calls, identical (workflow mams)\n");
    expect(run.stderr).toContain("planner: turn 1\n");
  }, 60_000);

  it("reports the first divergence, which call and which agent, with exit 1", async () => {
    await cp(join(dir, "recording"), join(dir, "changed"), { recursive: true });
    const file = join(dir, "changed", "recording.json");
    const manifest = JSON.parse(await readFile(file, "utf8"));
    await writeFile(file, JSON.stringify({ ...manifest, input: 'Analyse the sentence "a different one"' }));
    const run = await cli(["replay", "changed"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^✗ Replay diverged at model call 1 \(mams\/planner\): no recorded turn answers this request .*The next recorded turn, by mams\/planner, answered a different request.* \(0 of 13 recorded calls replayed before it\)\n$/,
    );
  }, 60_000);

  it("reports recorded calls the re-run never made", async () => {
    // Two recordings in one directory: the second run's calls are answered, the first's are left.
    const extra = await cli(["demo", "--record", "double"]);
    expect(extra.code).toBe(0);
    for (const name of await readdir(join(dir, "recording"))) {
      if (name.endsWith(".jsonl") && !existsSync(join(dir, "double", name)))
        await cp(join(dir, "recording", name), join(dir, "double", name));
    }
    const run = await cli(["replay", "double"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("The re-run finished after 13 model call(s), but the recording holds 26");
  }, 60_000);

  it("needs to know the workflow: from recording.json or --workflow", async () => {
    await cp(join(dir, "recording"), join(dir, "bare"), { recursive: true });
    await rm(join(dir, "bare", "recording.json"));
    const missing = await cli(["replay", "bare"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /has no recording\.json naming the workflow .* pass --workflow <name> \(one of: mams\)\. \[recording_unknown_workflow\]\n$/,
    );
    const named = await cli(["replay", "bare", "--workflow", "mams"]);
    expect(named.code).toBe(0);
    expect(named.stdout).toContain("replayed 13 model calls, identical");
    const unknown = await cli(["replay", "bare", "--workflow", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.split("\n").at(-2)).toBe(
      'openrath: Unknown workflow "nope"; this CLI can replay: mams. [unknown_workflow]',
    );
  }, 60_000);
});

describe("openrath sessions", () => {
  it("lists the logs of a directory, oldest first", async () => {
    const run = await cli(["sessions", "list", "--dir", "recording"]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`8 session logs in ${join(dir, "recording")}`);
    expect(lines[2]).toMatch(/^created\s+state\s+chunks\s+tokens\s+lineage\s+id$/);
    expect(lines.slice(3)).toHaveLength(8);
    expect(lines[3]).toMatch(/closed\s+1\s+0\s+leaf_user Session\.fromUserMessage/);
    const json = (await cli(["sessions", "list", "--dir", "recording", "--json"])).stdout
      .trimEnd()
      .split("\n");
    expect(json.map((l) => JSON.parse(l).state)).toEqual(Array(8).fill("closed"));
  });

  it("says so when a directory has no logs", async () => {
    await mkdir(join(dir, "empty"));
    const run = await cli(["sessions", "list", "--dir", "empty"]);
    expect(run).toMatchObject({ code: 0, stdout: `No session logs in ${join(dir, "empty")}\n` });
  });

  it("shows a session by short id: chunks with role, author and preview, usage and lineage", async () => {
    const manifest = JSON.parse(await readFile(join(dir, "recording", "recording.json"), "utf8"));
    const short = manifest.finalSessionId.replace(/-/g, "").slice(-8);
    const run = await cli(["sessions", "show", short, "--dir", "recording"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Session ${manifest.finalSessionId} (closed)`);
    expect(run.stdout).toContain("lineage  workflow by mams");
    expect(run.stdout).toMatch(/#0 +user +mams\/compressor +Task: analyse/);
    expect(run.stdout).toMatch(/#1 +event +mams\/router +selector\.decision/);
    expect(run.stdout).toMatch(/#2 +assistant +mams\/writer +Here is what the team found/);
    expect(run.stdout).toMatch(/Usage\n {2}\s+calls\s+prompt/);
    expect(run.stdout).toMatch(/Lineage\n {2}#1 [0-9a-f]{8} leaf_user/);
    const byPath = await cli(["sessions", "show", join("recording", `${manifest.finalSessionId}.jsonl`)]);
    expect(byPath.stdout).toBe(run.stdout);
    const prefix = await cli([
      "sessions",
      "show",
      manifest.finalSessionId.slice(0, 28),
      "--dir",
      "recording",
    ]);
    expect(prefix.stdout).toBe(run.stdout);
  });

  it("names what it cannot find, and asks for more of an ambiguous id", async () => {
    const missing = await cli(["sessions", "show", "deadbeef", "--dir", "recording"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^openrath: No session log for "deadbeef": .* \[not_found\]\n$/);
    const ambiguous = await cli(["sessions", "show", "0", "--dir", "recording"]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(/"0" matches 8 sessions .*give more of the id\. \[ambiguous\]\n$/);
  });
});

describe("what the commands used to get wrong", () => {
  it("refuses a --dir that does not exist instead of listing nothing", async () => {
    const run = await cli(["sessions", "list", "--dir", "no-such-dir"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`openrath: No such directory: ${join(dir, "no-such-dir")} [not_found]\n`);
    const prune = await cli(["sessions", "prune", "--older-than", "1d", "--dir", "no-such-dir"]);
    expect(prune.code).toBe(1);
    expect(prune.stderr).toContain("[not_found]");
  });

  it("refuses --state with the in-memory demo rather than ignoring it", async () => {
    for (const argv of [
      ["demo", "--state", "st", "--in-memory"],
      ["demo", "--state", "st", "--record", "r"],
    ]) {
      const run = await cli(argv);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        "openrath: --state goes with the durable run, not with --in-memory, --record, --replay or --lineage\n",
      );
    }
    const both = await cli(["demo", "--durable", "--in-memory"]);
    expect(both.code).toBe(2);
  });

  it("resolves relative paths against the directory a package script was started from", async () => {
    const run = await cli(["lineage", "no-such-dir"], {
      cwd: undefined,
      env: { PATH: process.env.PATH, npm_lifecycle_event: "demo", INIT_CWD: dir },
    });
    expect(run.stderr).toBe(`openrath: No such file or directory: ${join(dir, "no-such-dir")} [not_found]\n`);
  });

  it("prints a replay command that runs in a fresh clone when the demo ran through pnpm", async () => {
    expect(demo.stderr).toContain(`replay with: openrath replay ${join(dir, "recording")}\n`);
    const viaPnpm = await cli(["demo", "--record", "via-pnpm"], {
      env: { PATH: process.env.PATH, npm_lifecycle_event: "demo", INIT_CWD: dir },
    });
    expect(viaPnpm.code).toBe(0);
    expect(viaPnpm.stderr).toContain(`replay with: pnpm openrath replay ${join(dir, "via-pnpm")}\n`);
  }, 60_000);

  it("fails with no_answer when an OpenAI-compatible server answers without text", async () => {
    // Every role answers but the writer, whose reply has no text; the router picks the writer.
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (part) => (body += part));
      req.on("end", () => {
        const content = body.includes("You are the writer.")
          ? ""
          : body.includes("Reply with the number only.")
            ? "0"
            : "done";
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            id: "chatcmpl-empty",
            object: "chat.completion",
            created: 0,
            model: "empty-model",
            choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }],
            usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const run = await cli(["demo"], {
        env: { PATH: process.env.PATH, OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: "k" },
      });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain("Answer: (no answer)");
      expect(run.stderr).toMatch(/openrath: The run ended without an answer from .*\[no_answer\]\n$/);
    } finally {
      server.close();
    }
  }, 60_000);
});
