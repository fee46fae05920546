import { setTimeout as sleep } from "node:timers/promises";
import type { Agent, ProviderV1, Session } from "@openrath/core";
import { DurableWorkflow, router, type StepContext, step } from "@openrath/runtime-durable";
import type { LocalSandboxSpec } from "@openrath/sandbox-local";
import { MamsWorkflow } from "../mams-workflow.js";

/**
 * The MAMS demo as a durable workflow: the same team as {@link MamsWorkflow}, with a checkpoint
 * after every member's turn. Kill the process at any point and the run continues from the last
 * finished turn. The specialists run one after another (each on a fork merged back three-way), so
 * every one of them is a step of its own.
 *
 * plan → wordsmith → analyst → statistician → compress → decide ⇒ writer | reviewer
 *
 * @example
 * ```ts
 * import { Session } from "@openrath/core";
 * import { scriptedBrain, TASK } from "@openrath/demo";
 * import { DurableMamsWorkflow } from "@openrath/demo/durable";
 * import { createDurableRuntime } from "@openrath/runtime-durable";
 *
 * const runtime = createDurableRuntime({ store }); // any RunStoreV1, e.g. pgliteStore()
 * await runtime.register(new DurableMamsWorkflow(scriptedBrain(), { workspace: "./workspace" }));
 * const run = await runtime.submit("durable-mams", Session.fromUserMessage(TASK));
 * ```
 */
export class DurableMamsWorkflow extends DurableWorkflow {
  private readonly team: MamsWorkflow;

  /**
   * @param provider - the model every member calls.
   * @param sandbox - the spec of the `local` sandbox the specialists share; give it a `workspace`
   *   that outlives the process, so a resumed run finds the files of the steps before.
   * @param pauseMs - a pause at the start of every step, in milliseconds (default 0), long enough
   *   to kill the process mid-run in a demonstration; aborted with the step.
   */
  constructor(
    provider: ProviderV1,
    private readonly sandbox: LocalSandboxSpec,
    private readonly pauseMs = 0,
  ) {
    super({ name: "durable-mams", description: "The MAMS demo, checkpointed after every step." });
    this.team = new MamsWorkflow(provider, sandbox);
  }

  private async pause(ctx: StepContext) {
    if (this.pauseMs > 0) await sleep(this.pauseMs, undefined, { signal: ctx.signal });
  }

  /** One specialist on a fork of the session so far, merged back three-way. */
  private async specialist(agent: Agent, session: Session, ctx: StepContext): Promise<Session> {
    await this.pause(ctx);
    const branch = await agent.run(session.fork({ operator: `planner→${agent.name}` }), ctx);
    return session.merge(branch);
  }

  @step({ entry: true, next: "wordsmith" })
  async plan(session: Session, ctx: StepContext) {
    await this.pause(ctx);
    return (await this.team.planner.run(session, ctx)).to("local", this.sandbox);
  }

  @step({ next: "analyst", retry: { maxAttempts: 3 } })
  async wordsmith(session: Session, ctx: StepContext) {
    return this.specialist(this.team.specialists[0]!, session, ctx);
  }

  @step({ next: "statistician", retry: { maxAttempts: 3 } })
  async analyst(session: Session, ctx: StepContext) {
    return this.specialist(this.team.specialists[1]!, session, ctx);
  }

  @step({ next: "compress", retry: { maxAttempts: 3 } })
  async statistician(session: Session, ctx: StepContext) {
    return this.specialist(this.team.specialists[2]!, session, ctx);
  }

  @step({ next: "decide" })
  async compress(session: Session, ctx: StepContext) {
    await this.pause(ctx);
    return this.team.compressor.run(session, ctx);
  }

  /** The selector's decision is recorded in the session, so the router below reads it, never re-asks. */
  @step({ next: "route" })
  async decide(session: Session, ctx: StepContext) {
    await this.pause(ctx);
    return (await this.team.router.route(session, [this.team.writer, this.team.reviewer], ctx)).session;
  }

  @router({ successors: ["writer", "reviewer"] })
  route(session: Session) {
    const decision = session.chunks.findLast((c) => c.kind === "event" && c.name === "selector.decision");
    const index = (decision as { data?: { index?: number } } | undefined)?.data?.index;
    return index === 1 ? "reviewer" : "writer";
  }

  @step()
  async writer(session: Session, ctx: StepContext) {
    await this.pause(ctx);
    return this.team.writer.run(session, ctx);
  }

  @step()
  async reviewer(session: Session, ctx: StepContext) {
    await this.pause(ctx);
    return this.team.reviewer.run(session, ctx);
  }
}
