import type { Command } from "../internal/command.js";
import { replayRecording } from "../replay-recording.js";
import { replayableWorkflows } from "../replayable-workflows.js";

/** `openrath replay`: re-runs a recording with no model and reports the first divergence. */
export const replayCommand: Command = {
  name: "replay",
  summary: "Re-run a recorded workflow from its session logs, with no model calls, and check it matches.",
  description: [
    "Every model call is answered from the recording by request fingerprint. The run is identical",
    "when it asks exactly the recorded questions and ends with the recorded transcript; otherwise",
    "the first divergence is reported (which model call, which agent) and the exit status is 1.",
    "The recording's recording.json names the workflow and its input.",
    "",
    `Workflows: ${Object.values(replayableWorkflows)
      .map((w) => `${w.name} (${w.description})`)
      .join("; ")}.`,
  ].join("\n"),
  args: [{ name: "<directory | log>", description: "A recording directory, or one session log." }],
  options: [
    {
      name: "workflow",
      value: "<name>",
      description: "The workflow to re-run, when the recording has no recording.json.",
    },
  ],
  examples: ["openrath demo --record ./recording && openrath replay ./recording"],
  async run(ctx, { positionals, options }) {
    const progress = ctx.progress();
    let report: Awaited<ReturnType<typeof replayRecording>>;
    try {
      progress.update(`replaying ${positionals[0]}`);
      report = await replayRecording(ctx.resolve(positionals[0]!), {
        ...(typeof options.workflow === "string" ? { workflow: options.workflow } : {}),
        onEvent: (event) => {
          if (event.type === "turn_start") progress.update(`${event.agent}: turn ${event.turn}`);
          if (event.type === "tool_start") progress.update(`${event.agent} → ${event.name}`);
        },
      });
    } finally {
      progress.done();
    }
    if (report.identical) {
      ctx.stdout.write(
        `${ctx.out.green("✓")} replayed ${report.calls} model calls, identical (workflow ${report.workflow})\n`,
      );
      return 0;
    }
    ctx.stdout.write(
      `${ctx.out.red("✗")} ${report.divergence!.message} (${report.calls} of ${report.recordedCalls} recorded calls replayed before it)\n`,
    );
    return 1;
  },
};
