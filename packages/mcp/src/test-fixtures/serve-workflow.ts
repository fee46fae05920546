// Serves a ScriptedProvider workflow over stdio for tests: the agent answers
// "<name> answers: <message>". Started with `node --conditions=@openrath/source --import tsx`.
import { Agent, type RunOptions, ScriptedProvider, type Session, Workflow } from "@openrath/core";
import { serveWorkflowAsMcp } from "../index.js";

const echoing = (name: string) =>
  new ScriptedProvider((request) => {
    const last = [...request.messages].reverse().find((m) => m.role === "user");
    return {
      text: `${name} answers: ${String(last?.content ?? "")}`,
      usage: { promptTokens: 7, completionTokens: 3 },
    };
  });

class Desk extends Workflow {
  helper = new Agent({ name: "helper", provider: echoing("helper"), description: "Answers questions." });
  async forward(session: Session, options: RunOptions): Promise<Session> {
    return this.helper.run(session, options);
  }
}

const served = await serveWorkflowAsMcp(new Desk({ name: "desk", description: "The help desk." }), {
  agents: true,
  version: "9.9.9",
});
await served.closed;
