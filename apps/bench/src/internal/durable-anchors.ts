// The anchors the durable bench measures against, on the same PostgreSQL: DBOS Transact and
// LangGraph.js's PostgresSaver. Each is driven the way its documentation shows.
import { randomBytes } from "node:crypto";
import { DBOS } from "@dbos-inc/dbos-sdk";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

/** DBOS on a fresh system database of the server at `url`. */
export async function launchDbos(url: string): Promise<{ database: string; shutdown: () => Promise<void> }> {
  const database = `dbos_bench_${randomBytes(4).toString("hex")}`;
  const u = new URL(url);
  u.pathname = `/${database}`;
  DBOS.setConfig({ name: "openrath-bench", systemDatabaseUrl: u.toString(), systemDatabasePoolSize: 20 });
  await DBOS.launch();
  return { database, shutdown: () => DBOS.shutdown() };
}

const dbosStep = DBOS.registerStep(async (i: number) => i + 1, { name: "bench-step" });
const dbosChain = DBOS.registerWorkflow(
  async (steps: number) => {
    let x = 0;
    for (let i = 0; i < steps; i++) x = await dbosStep(x);
    return x;
  },
  { name: "bench-chain" },
);
const dbosTurn = DBOS.registerStep(async (history: string[], turn: string[]) => [...history, ...turn], {
  name: "bench-turn",
});
const dbosConversation = DBOS.registerWorkflow(
  async (turns: string[][]) => {
    let history: string[] = [];
    for (const turn of turns) history = await dbosTurn(history, turn);
    return history.length;
  },
  { name: "bench-conversation" },
);

/** One DBOS workflow of `steps` steps. */
export const runDbosChain = (steps: number) => dbosChain(steps);
/** One DBOS workflow with a step per turn, each returning the conversation so far (an agent's state). */
export const runDbosConversation = (turns: string[][]) => dbosConversation(turns);

/** A LangGraph graph whose one node runs `steps` times, checkpointed by a PostgresSaver in `schema`. */
export async function langGraphChain(url: string, schema: string) {
  const saver = PostgresSaver.fromConnString(url, { schema });
  await saver.setup();
  const State = Annotation.Root({ n: Annotation<number>(), target: Annotation<number>() });
  const graph = new StateGraph(State)
    .addNode("step", (s: typeof State.State) => ({ n: s.n + 1 }))
    .addEdge(START, "step")
    .addConditionalEdges("step", (s: typeof State.State) => (s.n >= s.target ? END : "step"))
    .compile({ checkpointer: saver });
  return {
    run: (steps: number) =>
      graph.invoke(
        { n: 0, target: steps },
        { configurable: { thread_id: randomBytes(8).toString("hex") }, recursionLimit: steps + 10 },
      ),
    close: () => saver.end(),
  };
}

/** A LangGraph messages graph that appends one turn per super-step, checkpointed in `schema`. */
export async function langGraphConversation(url: string, schema: string) {
  const saver = PostgresSaver.fromConnString(url, { schema });
  await saver.setup();
  let turns: string[][] = [];
  let at = 0;
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("turn", () => {
      const [user, assistant] = turns[at++]!;
      return { messages: [new HumanMessage(user!), new AIMessage(assistant!)] as BaseMessage[] };
    })
    .addEdge(START, "turn")
    .addConditionalEdges("turn", () => (at >= turns.length ? END : "turn"))
    .compile({ checkpointer: saver });
  return {
    run: (conversation: string[][]) => {
      turns = conversation;
      at = 0;
      return graph.invoke(
        { messages: [] },
        {
          configurable: { thread_id: randomBytes(8).toString("hex") },
          recursionLimit: conversation.length + 10,
        },
      );
    },
    close: () => saver.end(),
  };
}
