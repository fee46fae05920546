import { Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import type { StepContext } from "../contract/step-context.js";
import { defineWorkflow } from "./builder.js";
import { compilePlan } from "./compile.js";
import { router, step } from "./decorators.js";
import { DurableWorkflow } from "./durable-workflow.js";

const keep = (s: Session) => s;

class Review extends DurableWorkflow {
  @step({ entry: true, next: "route", retry: { maxAttempts: 3, baseMs: 10 } })
  async draft(session: Session, ctx: StepContext) {
    return session.append({ kind: "assistant", content: `draft ${ctx.attempt}` });
  }

  @router({ successors: ["publish", "rewrite"] })
  route(session: Session) {
    return session.text()?.startsWith("draft") ? "publish" : "rewrite";
  }

  @step()
  async publish(session: Session) {
    return session.append({ kind: "assistant", content: "published" });
  }

  @step({ next: "route" })
  async rewrite(session: Session) {
    return session;
  }
}

describe("compilePlan", () => {
  it("compiles a decorated workflow and the equivalent builder into the same graph", () => {
    const decorated = new Review().compile();
    const built = compilePlan(
      defineWorkflow("Review")
        .step("draft", keep, { entry: true, next: "route", retry: { maxAttempts: 3, baseMs: 10 } })
        .router("route", () => "publish", { successors: ["publish", "rewrite"] })
        .step("publish", keep)
        .step("rewrite", keep, { next: "route" }),
    );
    const shape = (plan: typeof decorated) =>
      [...plan.nodes.values()].map((n) =>
        n.kind === "step" ? [n.id, n.kind, n.next, n.retry] : [n.id, n.kind, n.successors],
      );
    expect(shape(decorated)).toEqual(shape(built));
    expect(decorated.entry).toBe("draft");
    expect(decorated.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(decorated.hash).not.toBe(built.hash);
  });

  it("the hash is stable for the same code and changes with any handler's source", () => {
    const make = (text: string) =>
      compilePlan(
        defineWorkflow("w").step(
          "a",
          text === "x"
            ? (s) => s.append({ kind: "user", content: "x" })
            : (s) => s.append({ kind: "user", content: "y" }),
          { entry: true },
        ),
      );
    expect(make("x").hash).toBe(make("x").hash);
    expect(make("x").hash).not.toBe(make("y").hash);
    expect(new Review().compile().hash).toBe(new Review().compile().hash);
    const version2 = new Review();
    version2.version = "2";
    expect(version2.compile().hash).not.toBe(new Review().compile().hash);
  });

  it("reports every graph problem at once with code invalid_definition", () => {
    const bad = defineWorkflow("bad")
      .step("a", keep, { entry: true, next: "ghost" })
      .router("r", () => "a", { successors: [] })
      .step("island", keep);
    expect(() => compilePlan(bad)).toThrowError(expect.objectContaining({ code: "invalid_definition" }));
    try {
      compilePlan(bad);
    } catch (error) {
      const problems = (error as { details: { problems: string[] } }).details.problems;
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/unknown successor "ghost"/),
          expect.stringMatching(/router "r" must declare at least one successor/),
          expect.stringMatching(/"island" is not reachable/),
        ]),
      );
    }
    expect(() =>
      compilePlan(defineWorkflow("two").step("a", keep, { entry: true }).step("b", keep, { entry: true })),
    ).toThrowError(/only one node may be the entry; "a", "b" all are/);
    expect(() => compilePlan(defineWorkflow("none"))).toThrowError(/declares no step/);
    expect(() => compilePlan(defineWorkflow("noentry").step("a", keep))).toThrowError(/no node is marked/);
    expect(() =>
      compilePlan(defineWorkflow("twice").step("a", keep, { entry: true }).step("a", keep)),
    ).toThrowError(/declared twice/);
    expect(() =>
      compilePlan(
        defineWorkflow("iso").step("a", keep, { entry: true, isolated: { module: "/nonexistent.mjs" } }),
      ),
    ).toThrowError(/declares no timeoutMs/);
    expect(() =>
      compilePlan(defineWorkflow("retry").step("a", keep, { entry: true, retry: { maxAttempts: 0 } })),
    ).toThrowError(/maxAttempts/);
  });

  it("rejects a method decorated twice", () => {
    expect(() => {
      class Twice extends DurableWorkflow {
        @step({ entry: true })
        @step()
        async a(s: Session) {
          return s;
        }
      }
      return Twice;
    }).toThrowError(/decorated twice/);
  });

  it("run() walks the plan in memory, routers choosing the way", async () => {
    const out = await new Review().run(Session.fromUserMessage("write"));
    expect(out.chunks.map((c) => (c as { content?: string }).content)).toEqual([
      "write",
      "draft 1",
      "published",
    ]);
    expect(out.lineage.op).toBe("workflow");
  });
});
