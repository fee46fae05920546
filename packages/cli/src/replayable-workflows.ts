import { closeAllSandboxes, type ProviderV1, type RunOptions, type Session } from "@openrath/core";
import { MamsWorkflow, TASK } from "@openrath/demo";
import { ensureLocalSandbox } from "./internal/ensure-local-sandbox.js";

/** A workflow the CLI knows how to re-run, by the name a recording's manifest gives. */
export interface ReplayableWorkflow {
  /** The name recordings use (`recording.json` → `workflow`). */
  readonly name: string;
  /** One line for `--help` and error messages. */
  readonly description: string;
  /** The input used when a recording does not name one. */
  readonly defaultInput: string;
  /** Runs the workflow on `input`, every model call going to `provider`. */
  run(input: Session, provider: ProviderV1, options?: RunOptions): Promise<Session>;
}

/** The workflows `openrath replay` can re-run, by name. */
export const replayableWorkflows: Readonly<Record<string, ReplayableWorkflow>> = Object.freeze({
  mams: {
    name: "mams",
    description:
      "the MAMS demo: planner, three specialists on a shared local sandbox, merge, compress, route",
    defaultInput: TASK,
    async run(input: Session, provider: ProviderV1, options: RunOptions = {}): Promise<Session> {
      ensureLocalSandbox();
      try {
        return await new MamsWorkflow(provider).run(input, options);
      } finally {
        await closeAllSandboxes();
      }
    },
  },
});
