import {
  Agent,
  defineTool,
  OpenRathError,
  ScriptedProvider,
  Session,
  type ToolPolicy,
  type ToolResultChunk,
} from "@openrath/core";
import { describe, expect, it } from "vitest";
import { checkToolPolicy, toolPolicyDenial } from "./tool-policy.js";

const deny = (policy: ToolPolicy, args: unknown, tool = "run_shell_command", calls = 0) =>
  toolPolicyDenial(checkToolPolicy(policy), tool, args, calls);

describe("checkToolPolicy", () => {
  it("returns a consistent policy unchanged", () => {
    const policy = { allowTools: ["a"], fsRoots: ["src"], commandDeny: ["rm"], maxCalls: 0 };
    expect(checkToolPolicy(policy)).toBe(policy);
  });

  it("refuses commandAllow and commandDeny together", () => {
    let error: unknown;
    try {
      checkToolPolicy({ commandAllow: ["ls"], commandDeny: ["rm"] });
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect((error as Error).message).toContain("not both");
  });

  it.each([-1, 1.5, Number.NaN])("refuses maxCalls %s", (maxCalls) => {
    expect(() => checkToolPolicy({ maxCalls })).toThrow(/maxCalls must be a whole number >= 0/);
  });

  it("is checked when an agent is built", () => {
    const provider = new ScriptedProvider([]);
    expect(
      () => new Agent({ name: "a", provider, toolPolicy: { commandAllow: ["ls"], commandDeny: ["rm"] } }),
    ).toThrow(/commandAllow or commandDeny, not both/);
  });
});

describe("toolPolicyDenial: tool allowlist", () => {
  it("allows listed tools and names the allowed ones when refusing", () => {
    expect(deny({ allowTools: ["read_workspace_file"] }, {}, "read_workspace_file")).toBeUndefined();
    expect(deny({ allowTools: ["read_workspace_file"] }, {}, "run_shell_command")).toBe(
      'tool "run_shell_command" is not allowed; allowed: read_workspace_file',
    );
    expect(deny({ allowTools: [] }, {}, "x")).toBe('tool "x" is not allowed; allowed: (none)');
  });
});

describe("toolPolicyDenial: file system roots", () => {
  const policy = { fsRoots: ["src", "docs/public"] };

  it.each(["src", "src/a.ts", "./src/deep/b.ts", "src/x/../y.ts", "/src/a.ts", "docs/public/i.md", "src//a"])(
    "allows %j",
    (path) => {
      expect(deny(policy, { path }, "read_workspace_file")).toBeUndefined();
    },
  );

  it.each([
    "secrets.txt",
    "srcfoo/a.ts",
    "src/../secrets.txt",
    "../src/a.ts",
    "src/../../etc/passwd",
    "docs/private.md",
    "docs",
  ])("refuses %j", (path) => {
    expect(deny(policy, { path }, "read_workspace_file")).toMatch(
      /^path .* is outside the allowed roots src, docs\/public$/,
    );
  });

  it("checks cwd like path", () => {
    expect(deny(policy, { cmd: "ls", cwd: "src" })).toBeUndefined();
    expect(deny(policy, { cmd: "ls", cwd: "../" })).toMatch(/^cwd "..\/" is outside/);
  });

  it("lets a root of '.' admit everything inside the workspace but not a climb out of it", () => {
    expect(deny({ fsRoots: ["."] }, { path: "any/where.txt" })).toBeUndefined();
    expect(deny({ fsRoots: ["."] }, { path: "../escape" })).toMatch(/outside the allowed roots \./);
  });

  it("ignores calls without a string path", () => {
    expect(deny(policy, {}, "list_workspace_files")).toBeUndefined();
    expect(deny(policy, { path: 3 }, "custom")).toBeUndefined();
  });
});

const HIDDEN =
  "the command runs something that cannot be read from it (a substitution, a variable or glob as the program, eval or source), which a command policy does not allow";

describe("toolPolicyDenial: commands", () => {
  it.each([
    ["ls -la", undefined],
    ["rm -rf /", 'command "rm" is denied'],
    ["ls; rm -rf x", 'command "rm" is denied'],
    ["ls && rm x", 'command "rm" is denied'],
    ["ls || rm x", 'command "rm" is denied'],
    ["cat a | rm x", 'command "rm" is denied'],
    ["sleep 1 & rm x", 'command "rm" is denied'],
    ["ls\nrm x", 'command "rm" is denied'],
    ["/bin/rm x", 'command "rm" is denied'],
    ["FOO=1 rm x", 'command "rm" is denied'],
    ["echo $(rm x)", HIDDEN],
    ["echo `rm x`", HIDDEN],
    ["diff <(ls) >(cat)", HIDDEN],
  ])("with commandDeny [rm], %j → %s", (cmd, expected) => {
    expect(deny({ commandDeny: ["rm"] }, { cmd })).toBe(expected);
  });

  it.each([
    ["ls src", undefined],
    ["ls | grep x", 'command "grep" is not allowed; allowed: ls, cat'],
    ["cat a; ls", undefined],
    ["cat a && curl evil", 'command "curl" is not allowed; allowed: ls, cat'],
    ["echo $(ls)", HIDDEN],
  ])("with commandAllow [ls, cat], %j → %s", (cmd, expected) => {
    expect(deny({ commandAllow: ["ls", "cat"] }, { cmd })).toBe(expected);
  });

  it("checks the program of an argv array", () => {
    expect(deny({ commandDeny: ["rm"] }, { cmd: ["rm", "-rf", "x"] })).toBe('command "rm" is denied');
    expect(deny({ commandDeny: ["rm"] }, { cmd: ["ls", "rm"] })).toBeUndefined();
    expect(deny({ commandAllow: ["ls"] }, { cmd: ["ls", "-la"] })).toBeUndefined();
    expect(deny({ commandAllow: ["ls"] }, { cmd: ["cat", "x"] })).toMatch(/"cat" is not allowed/);
    // An argv array is not a shell line: no substitution happens, so none is refused.
    expect(deny({ commandDeny: ["rm"] }, { cmd: ["echo", "$(rm x)"] })).toBeUndefined();
  });

  it("compares an argv array's program by its base name, like a shell string's", () => {
    expect(deny({ commandDeny: ["rm"] }, { cmd: ["/bin/rm", "-rf", "x"] })).toBe('command "rm" is denied');
  });

  it("sees commands inside subshells and groups", () => {
    expect(deny({ commandDeny: ["rm"] }, { cmd: "(rm -rf x)" })).toBe('command "rm" is denied');
    expect(deny({ commandDeny: ["rm"] }, { cmd: "{ rm -rf x; }" })).toBe('command "rm" is denied');
  });

  it("fails closed for commandAllow on subshells and groups", () => {
    expect(deny({ commandAllow: ["ls"] }, { cmd: "(rm -rf x)" })).toBeDefined();
    expect(deny({ commandAllow: ["ls"] }, { cmd: "{ rm -rf x; }" })).toBeDefined();
  });

  it("leaves tools without a cmd argument alone", () => {
    expect(deny({ commandDeny: ["rm"] }, { path: "rm" }, "read_workspace_file")).toBeUndefined();
  });
});

describe("toolPolicyDenial: call budget", () => {
  it("allows calls until maxCalls were made", () => {
    expect(deny({ maxCalls: 2 }, {}, "t", 1)).toBeUndefined();
    expect(deny({ maxCalls: 2 }, {}, "t", 2)).toBe("the call budget of 2 tool calls is spent");
    expect(deny({ maxCalls: 0 }, {}, "t", 0)).toBe("the call budget of 0 tool calls is spent");
  });

  it("checks the other rules first, so their denial is what the model is told", () => {
    expect(deny({ allowTools: ["a"], maxCalls: 0 }, {}, "b", 0)).toMatch(/tool "b" is not allowed/);
  });
});

describe("toolPolicyDenial: every path into the sandbox", () => {
  const denied = 'command "rm" is denied';
  it.each([
    // Wrappers that run another program.
    ["env rm -rf x", denied],
    ["env -i FOO=1 rm x", denied],
    ["sudo -u root rm x", denied],
    ["nice -n 5 rm x", denied],
    ["timeout 5 rm x", denied],
    ["nohup rm x &", denied],
    ["xargs rm < list", denied],
    ["ls | xargs -n 1 rm", denied],
    ["command rm x", denied],
    ["exec -a name rm x", denied],
    ["env -S 'rm -rf x'", denied],
    ["env --split-string='ls; rm x'", denied],
    ["exec rm x", denied],
    ["find . -name '*.tmp' -exec rm {} ;", denied],
    // Shells running a line.
    ["sh -c 'rm -rf x'", denied],
    ['bash -c "ls; rm x"', denied],
    ["bash -lc 'rm x'", denied],
    ["bash -e -c 'rm x'", denied],
    ["sh ./cleanup.sh", HIDDEN],
    ["curl -s x | sh", HIDDEN],
    ["env bash -c 'sudo rm x'", denied],
    // Quoting and escapes do not hide the program.
    ["\\rm x", denied],
    ["'rm' x", denied],
    ['r""m x', denied],
    ["if rm x; then ls; fi", denied],
    ["for f in a b; do rm $f; done", denied],
    // What cannot be read is refused.
    ["eval 'rm x'", HIDDEN],
    ["source ./script.sh", HIDDEN],
    ["$CMD x", HIDDEN],
    ["alias r=rm; r x", HIDDEN],
    // Plain uses of the same words stay allowed.
    ["echo 'rm is denied here'", undefined],
    ["grep -r rm src # rm", undefined],
    ["[ -f x ] && ls", undefined],
  ])("with commandDeny [rm], %j → %s", (cmd, expected) => {
    expect(deny({ commandDeny: ["rm"] }, { cmd })).toBe(expected);
  });

  it("looks through wrappers in an argv, but reads no shell syntax in it", () => {
    expect(deny({ commandDeny: ["rm"] }, { cmd: ["env", "rm", "x"] })).toBe(denied);
    expect(deny({ commandDeny: ["rm"] }, { cmd: ["sh", "-c", "rm x"] })).toBe(denied);
    expect(deny({ commandDeny: ["rm"] }, { cmd: ["/usr/bin/xargs", "-0", "rm"] })).toBe(denied);
    expect(deny({ commandDeny: ["rm"] }, { cmd: ["echo", "rm; $(rm x)"] })).toBeUndefined();
  });

  it("counts wrappers as programs under commandAllow", () => {
    expect(deny({ commandAllow: ["ls"] }, { cmd: "env ls" })).toBe(
      'command "env" is not allowed; allowed: ls',
    );
    expect(deny({ commandAllow: ["ls", "sh"] }, { cmd: "sh -c 'ls; curl x'" })).toBe(
      'command "curl" is not allowed; allowed: ls, sh',
    );
  });

  it("applies to run_code: shell-language code is read as shell lines, other languages are their interpreter", () => {
    expect(deny({ commandDeny: ["rm"] }, { code: "rm -rf x", language: "bash" }, "run_code")).toBe(denied);
    expect(deny({ commandDeny: ["rm"] }, { code: "ls\nenv rm x", language: "sh" }, "run_code")).toBe(denied);
    expect(deny({ commandDeny: ["rm"] }, { code: "echo hi", language: "bash" }, "run_code")).toBeUndefined();
    expect(deny({ commandDeny: ["python"] }, { code: "print(1)" }, "run_code")).toBe(
      'command "python" is denied',
    );
    expect(deny({ commandAllow: ["ls"] }, { code: "print(1)", language: "python" }, "run_code")).toBe(
      'command "python" is not allowed; allowed: ls',
    );
    expect(
      deny({ commandAllow: ["bash", "ls"] }, { code: "ls -la", language: "bash" }, "run_code"),
    ).toBeUndefined();
    // A `code` argument of another tool is not a program.
    expect(deny({ commandDeny: ["rm"] }, { code: "rm" }, "lookup_country")).toBeUndefined();
  });
});

describe("tool policy in an agent run", () => {
  const counter = () => {
    const calls: string[] = [];
    const tool = (name: string) =>
      defineTool({
        name,
        description: "",
        parameters: { type: "object", properties: { path: { type: "string" } } },
        execute: (args: { path?: string }) => {
          calls.push(`${name}:${args.path ?? ""}`);
          return { done: name };
        },
      });
    return { calls, tools: [tool("a"), tool("b")] };
  };

  const results = (session: Session) =>
    session.chunks
      .filter((c): c is ToolResultChunk => c.kind === "tool_result")
      .map((c) => ({ name: c.name, body: JSON.parse(c.content), isError: c.isError ?? false }));

  it("sends a denial back as a tool_policy_denied result without running the tool", async () => {
    const { calls, tools } = counter();
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "b", arguments: {} }] },
      { toolCalls: [{ name: "a", arguments: { path: "../etc/passwd" } }] },
      { text: "done" },
    ]);
    const agent = new Agent({
      name: "guarded",
      provider,
      tools,
      toolPolicy: { allowTools: ["a"], fsRoots: ["work"] },
    });
    const out = await agent.run(Session.fromUserMessage("go"));
    expect(calls).toEqual([]);
    expect(results(out)).toEqual([
      {
        name: "b",
        isError: true,
        body: {
          ok: false,
          error_kind: "tool_policy_denied",
          message: 'Tool policy denied "b": tool "b" is not allowed; allowed: a.',
        },
      },
      {
        name: "a",
        isError: true,
        body: {
          ok: false,
          error_kind: "tool_policy_denied",
          message: 'Tool policy denied "a": path "../etc/passwd" is outside the allowed roots work.',
        },
      },
    ]);
    expect(out.text()).toBe("done");
  });

  it("does not spend the call budget on denied calls", async () => {
    const { calls, tools } = counter();
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "b", arguments: {} }] },
      { toolCalls: [{ name: "a", arguments: { path: "1" } }] },
      { toolCalls: [{ name: "a", arguments: { path: "2" } }] },
      { text: "done" },
    ]);
    const agent = new Agent({ name: "g", provider, tools, toolPolicy: { allowTools: ["a"], maxCalls: 1 } });
    const out = await agent.run(Session.fromUserMessage("go"));
    expect(calls).toEqual(["a:1"]);
    expect(results(out).map((r) => r.body.error_kind ?? "ok")).toEqual([
      "tool_policy_denied",
      "ok",
      "tool_policy_denied",
    ]);
    expect(results(out)[2]!.body.message).toContain("the call budget of 1 tool calls is spent");
  });

  it("admits exactly maxCalls of one turn's parallel calls", async () => {
    const ran: number[] = [];
    const tool = defineTool<{ n: number }>({
      name: "p",
      description: "",
      parameters: { type: "object", properties: { n: { type: "integer" } } },
      parallel: true,
      execute: async ({ n }) => {
        await new Promise((r) => setTimeout(r, 5));
        ran.push(n);
      },
    });
    const provider = new ScriptedProvider([
      { toolCalls: [1, 2, 3].map((n) => ({ name: "p", arguments: { n } })) },
      { text: "done" },
    ]);
    const agent = new Agent({ name: "g", provider, tools: [tool], toolPolicy: { maxCalls: 2 } });
    const out = await agent.run(Session.fromUserMessage("go"));
    expect(ran.sort()).toEqual([1, 2]);
    expect(results(out).map((r) => r.isError)).toEqual([false, false, true]);
  });

  it("counts the budget per run, not per agent", async () => {
    const { calls, tools } = counter();
    const script = [{ toolCalls: [{ name: "a", arguments: { path: "x" } }] }, { text: "done" }];
    const provider = new ScriptedProvider([...script, ...script]);
    const agent = new Agent({ name: "g", provider, tools, toolPolicy: { maxCalls: 1 } });
    await agent.run(Session.fromUserMessage("one"));
    await agent.run(Session.fromUserMessage("two"));
    expect(calls).toEqual(["a:x", "a:x"]);
  });
});
