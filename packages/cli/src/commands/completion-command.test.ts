import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { runMain } from "../testing/run-cli.js";

/** What bash completes for the words typed so far (the last one being completed). */
function complete(script: string, words: string[]): string[] {
  const program = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _openrath; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync("bash", ["-c", program], { encoding: "utf8" });
  return result.stdout.split("\n").filter((line) => line !== "");
}

describe("openrath completion bash", () => {
  it("completes commands, subcommands and each command's options", async () => {
    const run = await runMain(["completion", "bash"]);
    expect(run.code).toBe(0);
    const script = run.stdout;
    expect(complete(script, ["openrath", "se"])).toEqual(["serve", "sessions"]);
    expect(complete(script, ["openrath", "runs", ""])).toEqual(["list", "show", "events", "cancel"]);
    expect(complete(script, ["openrath", "runs", "events", "x", "--f"])).toEqual(["--follow"]);
    expect(complete(script, ["openrath", "serve", "--no"])).toEqual(["--no-worker"]);
    const unknown = await runMain(["completion", "fish"]);
    expect(unknown.code).toBe(2);
  });
});
