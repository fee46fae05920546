import {
  Agent,
  Compressor,
  type ProviderV1,
  type RunOptions,
  Selector,
  type Session,
  Workflow,
} from "@openrath/core";
import type { LocalSandboxSpec } from "@openrath/sandbox-local";
import { ROLES } from "./scripted-brain.js";

/**
 * The MAMS demo: a planner plans; three specialists work on forks of the planned session, all on
 * one shared `local` sandbox where they write and run small programs; their branches are merged
 * three-way and compressed; a selector routes the summary to the writer (or, if a program failed,
 * the reviewer), who answers.
 */
export class MamsWorkflow extends Workflow {
  /** Splits the task between the specialists. */
  readonly planner: Agent;
  /** The wordsmith, the analyst and the statistician, each on a fork of the planned session. */
  readonly specialists: Agent[];
  /** Folds the merged branches into one summary. */
  readonly compressor: Compressor;
  /** Routes the summary to the writer, or to the reviewer when a program failed. */
  readonly router: Selector;
  /** Answers the user from the summary. */
  readonly writer: Agent;
  /** Explains a failed program. */
  readonly reviewer: Agent;

  /**
   * @param provider - the model every step calls.
   * @param sandbox - the spec of the `local` sandbox the specialists share (default: a fresh temporary workspace).
   */
  constructor(
    provider: ProviderV1,
    private readonly sandbox: LocalSandboxSpec = {},
  ) {
    super({
      name: "mams",
      description: "Plan, fan out to specialists on a shared sandbox, merge, compress, route, answer.",
    });
    this.planner = new Agent({
      name: "planner",
      provider,
      instructions: `${ROLES.planner} Split the user's task between the wordsmith, the analyst and the statistician. Reply with a short plan.`,
    });
    const specialist = (name: string, role: string, job: string) =>
      new Agent({
        name,
        provider,
        maxTurns: 6,
        instructions: `${role} ${job} Write a small Node.js program in the workspace with write_workspace_file, run it with run_shell_command (node <file>), then report its result in one sentence.`,
      });
    this.specialists = [
      specialist("wordsmith", ROLES.wordsmith, "Count the words of the quoted text."),
      specialist("analyst", ROLES.analyst, "Find the longest word of the quoted text."),
      specialist(
        "statistician",
        ROLES.statistician,
        "Count how often each letter occurs in the quoted text.",
      ),
    ];
    this.compressor = new Compressor({
      provider,
      instructions: `${ROLES.compressor} Keep the task and every finding.`,
    });
    this.router = new Selector({
      name: "router",
      provider,
      instructions: `${ROLES.router} Pick the writer (0) when every finding is in, or the reviewer (1) when a program failed. Reply with the number only.`,
    });
    this.writer = new Agent({
      name: "writer",
      provider,
      description: "Writes the final answer from the findings.",
      instructions: `${ROLES.writer} Answer the user from the summary of findings, briefly.`,
    });
    this.reviewer = new Agent({
      name: "reviewer",
      provider,
      description: "Explains what went wrong when a specialist's program failed.",
      instructions: `${ROLES.reviewer} Explain which program failed and why.`,
    });
  }

  async forward(session: Session, options: RunOptions): Promise<Session> {
    // Placing the planned session before forking gives every specialist the same workspace.
    const planned = (await this.planner.run(session, options)).to("local", this.sandbox);
    const branches = await Promise.all(
      this.specialists.map((agent) =>
        agent.run(planned.fork({ operator: `planner→${agent.name}` }), options),
      ),
    );
    const merged = branches.reduce((left, right) => left.merge(right));
    const summary = await this.compressor.run(merged, options);
    return this.router.run(summary, [this.writer, this.reviewer], options);
  }
}
