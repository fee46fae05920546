import { describe, expect, it } from "vitest";
import { Agent } from "./agent.js";
import type { CallHooks, ToolDispatch } from "./agent-options.js";
import {
  listWorkspaceFiles,
  readWorkspaceFile,
  runCode,
  runShellCommand,
  workspacePathExists,
  writeWorkspaceFile,
} from "./builtin-tools.js";
import { ScriptedProvider } from "./scripted-provider.js";
import { Session } from "./session.js";
import { defineTool, type ToolContext } from "./tool.js";

const results = (session: Session) =>
  session.chunks
    .filter((c) => c.kind === "tool_result")
    .map((c) => JSON.parse((c as { content: string }).content));

describe("defineTool: effect, idempotencyKey and needsApproval", () => {
  it("defaults to the conservative non_idempotent class and keeps what is declared", () => {
    const plain = defineTool({ name: "plain", description: "", parameters: {}, execute: () => 1 });
    expect(plain.effect).toBe("non_idempotent");
    expect(plain.idempotencyKey).toBeUndefined();
    expect(plain.needsApproval).toBeUndefined();
    const keyed = defineTool<{ id: string }>({
      name: "keyed",
      description: "",
      parameters: {},
      effect: "idempotent",
      idempotencyKey: (args) => `order:${args.id}`,
      needsApproval: true,
      execute: () => 1,
    });
    expect(keyed.effect).toBe("idempotent");
    expect(typeof keyed.idempotencyKey).toBe("function");
    expect(keyed.needsApproval).toBe(true);
  });

  it("refuses an unknown effect class, a bad key rule and a bad approval rule with invalid_argument", () => {
    const base = { name: "t", description: "", parameters: {}, execute: () => 1 };
    expect(() => defineTool({ ...base, effect: "sometimes" as never })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => defineTool({ ...base, idempotencyKey: "k" as never })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => defineTool({ ...base, needsApproval: "yes" as never })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });

  it("the built-in sandbox tools declare their classes", () => {
    expect(readWorkspaceFile.effect).toBe("read_only");
    expect(listWorkspaceFiles.effect).toBe("read_only");
    expect(workspacePathExists.effect).toBe("read_only");
    expect(writeWorkspaceFile.effect).toBe("idempotent");
    expect(writeWorkspaceFile.idempotencyKey).toBe(true);
    expect(runShellCommand.effect).toBe("non_idempotent");
    expect(runCode.effect).toBe("non_idempotent");
  });
});

describe("tool approval and the tool hook's override", () => {
  const send = (calls: string[]) =>
    defineTool<{ to: string }>({
      name: "send",
      description: "send a message",
      parameters: { type: "object", properties: { to: { type: "string" } }, required: ["to"] },
      needsApproval: (args) => args.to !== "self",
      execute: (args, ctx: ToolContext) => {
        calls.push(`${args.to}:${ctx.idempotencyKey ?? "-"}`);
        return { sent: args.to };
      },
    });
  const script = () =>
    new ScriptedProvider([
      {
        toolCalls: [
          { name: "send", arguments: { to: "self" }, id: "a" },
          { name: "send", arguments: { to: "boss" }, id: "b" },
        ],
      },
      { text: "done" },
    ]);

  it("without an approver, a call that needs approval is refused and never runs; others run", async () => {
    const calls: string[] = [];
    const out = await new Agent({ name: "a", provider: script(), tools: [send(calls)] }).run(
      Session.fromUserMessage("go"),
    );
    expect(calls).toEqual(["self:-"]);
    expect(results(out)[0]).toEqual({ sent: "self" });
    expect(results(out)[1]).toMatchObject({ ok: false, error_kind: "approval_required" });
  });

  it("a hook with approvals sees needsApproval, the tool and its arguments, and may override them", async () => {
    const calls: string[] = [];
    const seen: Pick<ToolDispatch, "needsApproval" | "args">[] = [];
    const hooks: CallHooks = {
      approvals: true,
      async tool(dispatch, next) {
        seen.push({ needsApproval: dispatch.needsApproval, args: dispatch.args });
        expect(dispatch.tool.name).toBe("send");
        if (!dispatch.needsApproval) return next();
        return next({ args: { to: "boss-edited" }, context: { idempotencyKey: "k-1" } });
      },
    };
    const out = await new Agent({ name: "a", provider: script(), tools: [send(calls)] }).run(
      Session.fromUserMessage("go"),
      { calls: hooks },
    );
    expect(seen).toEqual([
      { needsApproval: false, args: { to: "self" } },
      { needsApproval: true, args: { to: "boss" } },
    ]);
    expect(calls).toEqual(["self:-", "boss-edited:k-1"]);
    expect(results(out)[1]).toEqual({ sent: "boss-edited" });
  });

  it("an approval rule that throws fails the call as a structured result", async () => {
    const calls: string[] = [];
    const tool = defineTool({
      name: "send",
      description: "",
      parameters: {},
      needsApproval: () => {
        throw new Error("rule broke");
      },
      execute: () => calls.push("ran"),
    });
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "send", arguments: {} }] }, { text: "ok" }]);
    const out = await new Agent({ name: "a", provider, tools: [tool] }).run(Session.fromUserMessage("go"));
    expect(calls).toEqual([]);
    expect(results(out)[0]).toMatchObject({ ok: false, error_kind: "tool_execution_exception" });
  });
});
