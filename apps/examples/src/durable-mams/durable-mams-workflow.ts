import { setTimeout as sleep } from "node:timers/promises";
import { MamsWorkflow } from "@openrath/cli";
import type { Agent, ProviderV1, Session } from "@openrath/core";
import { DurableWorkflow, router, type StepContext, step } from "@openrath/runtime-durable";
import type { LocalSandboxSpec } from "@openrath/sandbox-local";

/**
 * The MAMS demo as a durable workflow: the same team (reused from `@openrath/cli`'s
 * `MamsWorkflow`), with a checkpoint after every member's turn. Kill the process at any point and
 * the run continues from the last finished turn.
 *
 * plan → wordsmith → analyst → statistician → compress → decide ⇒ writer | reviewer
 */
export class DurableMams extends DurableWorkflow {
  private readonly team: MamsWorkflow;

  /**
   * @param provider - the model every member calls.
   * @param sandbox - the `local` sandbox the specialists share.
   * @param pauseMs - a pause at the start of every step, long enough to kill the process mid-run.
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
