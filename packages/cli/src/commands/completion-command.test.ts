import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../main.js";
import { runMain } from "../testing/run-cli.js";

/** The words after `openrath runs`, from the tree (commands are added over time). */
const runsWords = () => {
  const runs = COMMANDS.find((c) => c.name === "runs");
  return runs && "commands" in runs ? runs.commands.map((c) => c.name.split(" ")[1]!) : [];
};

const has = (shell: string) => spawnSync(shell, ["-c", "exit 0"]).status === 0;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-completion-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function script(shell: string): Promise<string> {
  const run = await runMain(["completion", shell]);
  expect(run.code, run.stderr).toBe(0);
  const path = join(dir, `openrath.${shell}`);
  await writeFile(path, run.stdout);
  return path;
}

/** What bash completes for the words typed so far (the last one being completed). */
function bash(path: string, words: string[]): string[] {
  const program = `source '${path}'\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _openrath; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync("bash", ["-c", program], { encoding: "utf8" });
  return result.stdout.split("\n").filter((line) => line !== "");
}

/**
 * The candidates zsh's function offers (compadd prints them; zsh filters by prefix itself, so
 * every candidate is listed) or FILES where it falls back to file names.
 */
function zsh(path: string, words: string[]): string[] {
  const program = `compdef() { :; }; compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }; _files() { print FILES; }
source '${path}'; words=(${words.map((w) => `'${w}'`).join(" ")}); CURRENT=${words.length}; _openrath`;
  const result = spawnSync("zsh", ["-c", program], { encoding: "utf8" });
  expect(result.stderr).toBe("");
  return result.stdout.split("\n").filter((line) => line !== "");
}

/** What fish itself completes for a command line, with the script loaded (words only). */
function fish(path: string, line: string): string[] {
  const result = spawnSync("fish", ["-c", `source '${path}'; complete -C"${line}"`], { encoding: "utf8" });
  expect(result.stderr).toBe("");
  return result.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.split("\t")[0]!);
}

describe("openrath completion", () => {
  it("bash: completes commands, subcommands and each command's options", async () => {
    const path = await script("bash");
    expect(bash(path, ["openrath", "se"])).toEqual(["serve", "sessions"]);
    expect(bash(path, ["openrath", "runs", ""])).toEqual(runsWords());
    expect(runsWords()).toEqual(expect.arrayContaining(["list", "show", "events", "cancel"]));
    expect(bash(path, ["openrath", "runs", "events", "x", "--f"])).toEqual(["--follow"]);
    expect(bash(path, ["openrath", "serve", "--no"])).toEqual(["--no-worker"]);
    expect(bash(path, ["openrath", "help", "tok"])).toEqual(["tokens"]);
  });

  it("bash: offers every command of the tree and every option of each", async () => {
    const path = await script("bash");
    const top = bash(path, ["openrath", ""]);
    for (const entry of COMMANDS) {
      expect(top).toContain(entry.name);
      const leaves = "commands" in entry ? entry.commands : [entry];
      for (const command of leaves) {
        const words = command.name.split(" ");
        if (words.length > 1) expect(bash(path, ["openrath", entry.name, ""])).toContain(words[1]);
        const offered = bash(path, ["openrath", ...words, "--"]);
        expect(offered, command.name).toEqual([...command.options.map((o) => `--${o.name}`), "--help"]);
      }
    }
  });

  it.skipIf(!has("zsh") && !process.env.OPENRATH_TEST_SHELLS)(
    "zsh: the same words, and files where no option is being typed",
    async () => {
      const path = await script("zsh");
      expect(zsh(path, ["openrath", "runs", ""])).toEqual(runsWords());
      expect(zsh(path, ["openrath", "runs", "events", "x", "--f"])).toEqual([
        "--server",
        "--state",
        "--tenant",
        "--after",
        "--follow",
        "--json",
        "--help",
      ]);
      expect(zsh(path, ["openrath", "lineage", "rec"])).toEqual(["FILES"]);
      expect(zsh(path, ["openrath", ""])).toContain("sessions");
    },
  );

  it.skipIf(!has("fish") && !process.env.OPENRATH_TEST_SHELLS)(
    "fish: commands, subcommands, options and option choices",
    async () => {
      const path = await script("fish");
      expect(fish(path, "openrath se")).toEqual(["serve", "sessions"]);
      expect(fish(path, "openrath runs ").sort()).toEqual(runsWords().sort());
      expect(fish(path, "openrath runs events x --f")).toEqual(["--follow"]);
      expect(fish(path, "openrath serve --no")).toEqual(["--no-worker"]);
      expect(fish(path, "openrath lineage x --format ").sort()).toEqual([
        "dot",
        "html",
        "json",
        "jsonl",
        "mermaid",
        "text",
      ]);
    },
  );

  it("names the shells it supports for any other", async () => {
    const unknown = await runMain(["completion", "tcsh"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('openrath: openrath completion supports bash, zsh, fish; got "tcsh"\n');
  });
});
