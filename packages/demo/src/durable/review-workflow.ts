import type { Session } from "@openrath/core";
import { defineWorkflow } from "@openrath/runtime-durable";

const lastText = (session: Session): string => {
  const last = session.chunks.at(-1);
  return last && "content" in last && typeof last.content === "string" ? last.content : "";
};

/**
 * A small durable workflow with a person in the loop: a writer drafts a reply to the user's
 * message, the run waits for an approval (`ctx.interrupt`), and the reply is published or
 * withdrawn. `openrath serve` runs it beside the MAMS demo, so the interrupt inbox has something
 * to show with no set-up.
 */
export const reviewWorkflow = defineWorkflow("review")
  .step(
    "draft",
    async (session: Session) =>
      session.append({
        kind: "assistant",
        author: "writer",
        content: `Draft reply: thanks for "${lastText(session)}".`,
      }),
    { entry: true, next: "approve" },
  )
  .step("approve", async (session: Session, ctx) => {
    const decision = await ctx.interrupt({
      kind: "approval",
      request: { question: "Publish this reply?", draft: lastText(session) },
    });
    const published = decision.kind === "approve";
    return session.append({
      kind: "assistant",
      author: "writer",
      content: published
        ? "Published the reply."
        : `Withdrew the reply (${decision.kind}${decision.reason ? `: ${decision.reason}` : ""}).`,
    });
  });
