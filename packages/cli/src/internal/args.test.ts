import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { type ArgsSpec, parseArgs, UsageError } from "./args.js";

const spec: ArgsSpec = {
  command: "openrath lineage",
  args: [
    { name: "<log>", description: "a log" },
    { name: "[extra]", description: "optional", optional: true },
  ],
  options: [
    { name: "format", short: "f", value: "<format>", choices: ["text", "html"], description: "format" },
    { name: "out", short: "o", value: "<file>", description: "out" },
    { name: "ids", description: "flag" },
  ],
};

function usage(argv: string[]): UsageError {
  try {
    parseArgs(argv, spec);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error(`parseArgs accepted ${JSON.stringify(argv)}`);
}

describe("parseArgs", () => {
  it("reads positionals, --name value, --name=value, short options and flags", () => {
    const parsed = parseArgs(["dir", "--format", "html", "-o", "x.html", "--ids"], spec);
    expect(parsed).toEqual({
      positionals: ["dir"],
      options: { format: "html", out: "x.html", ids: true },
      help: false,
    });
    expect(parseArgs(["--format=text", "dir"], spec).options).toEqual({ format: "text" });
  });

  it("lets a later occurrence of an option win", () => {
    expect(parseArgs(["d", "-f", "text", "--format", "html"], spec).options.format).toBe("html");
  });

  it("treats everything after -- as positionals, and - as a positional", () => {
    expect(parseArgs(["--", "--ids"], spec).positionals).toEqual(["--ids"]);
    expect(parseArgs(["-"], spec).positionals).toEqual(["-"]);
  });

  it("answers --help and -h anywhere before --, without validating the rest", () => {
    expect(parseArgs(["--bogus", "--help"], spec).help).toBe(true);
    expect(parseArgs(["-h"], spec).help).toBe(true);
    expect(parseArgs(["--", "--help", "x"], spec)).toMatchObject({
      positionals: ["--help", "x"],
      help: false,
    });
  });

  it("rejects an unknown option with a hint and the command's help", () => {
    const error = usage(["d", "--formt", "x"]);
    expect(error.message).toBe("unknown option --formt for openrath lineage; see openrath lineage --help");
    expect(usage(["d", "--form"]).message).toContain("did you mean --format?");
    expect(usage(["d", "-x"]).message).toContain("unknown option -x");
    expect(OpenRathError.isInstance(error, "usage")).toBe(true);
  });

  it("rejects a missing value, a value for a flag, and a value outside the choices", () => {
    expect(usage(["d", "--out"]).message).toBe(
      "option --out needs a value <file>; see openrath lineage --help",
    );
    expect(usage(["d", "--out", "--ids"]).message).toContain("needs a value");
    expect(usage(["d", "--ids=yes"]).message).toContain("--ids is a flag and takes no value");
    expect(usage(["d", "--format", "svg"]).message).toBe(
      'option --format must be one of text, html; got "svg"',
    );
  });

  it("rejects a missing required argument and an extra one", () => {
    expect(usage([]).message).toBe("openrath lineage needs <log>; see openrath lineage --help");
    expect(usage(["a", "b", "c"]).message).toBe(
      'unexpected argument "c" for openrath lineage; see openrath lineage --help',
    );
    expect(parseArgs(["a", "b"], spec).positionals).toEqual(["a", "b"]);
  });
});
