// Workflows for `openrath serve --workflows` and `openrath worker --workflows` in tests.
import type { Session } from "@openrath/core";
import { defineWorkflow } from "@openrath/runtime-durable";

export const greet = defineWorkflow("greet").step(
  "answer",
  async (session: Session) => session.append({ kind: "assistant", content: "hello from greet" }),
  { entry: true },
);

/** Not a workflow: `--workflows` registers only the exports that are. */
export const notAWorkflow = { name: "nothing" };
