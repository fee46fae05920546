import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Turns of the kill-point agent that call tools (two each); the turn after them answers. */
export const TOOL_TURNS = 8;

/** How long the search service takes to answer (ms): a slow read-only tool, as a retrieval is. */
export const SEARCH_MS = 30;

/** What the server saw of one scenario (a run of the agent, over however many processes). */
export interface ScenarioCounts {
  /** Chat Completions requests answered in full, by turn (index 0 is turn 1). */
  readonly completions: number[];
  /** Searches answered, by turn. */
  readonly searches: number[];
  /** Note requests answered, by idempotency key. */
  readonly notes: Map<string, number>;
}

/** The fake OpenAI server of the kill-point tests, with the two services the agent's tools call. */
export interface FakeOpenAIServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The counts of a scenario so far (zeros for one not seen). */
  counts(scenario: string): ScenarioCounts;
  close(): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: the request body is the OpenAI wire JSON.
type Body = any;

/** The model turn a Chat Completions request is for: one more than the rounds of tool results it holds. */
export function turnOfMessages(messages: readonly { role: string }[]): number {
  return messages.filter((m) => m.role === "tool").length / 2 + 1;
}

/**
 * An OpenAI-compatible Chat Completions server on 127.0.0.1 for the journal's kill-point tests,
 * standing in for a paid model. It answers from a script of the request's content, not from a
 * counter, so a process resumed after a kill gets the same replies: turns 1 to {@link TOOL_TURNS}
 * ask for a `search` and a `note`, the next turn answers. It counts the requests it answered in
 * full — the reply handed to the socket, so a worker that dies right after reading it has paid for
 * it — in the test process, outside the workers it counts for. Paths start with a scenario name
 * (`/<scenario>/v1/chat/completions`), so one server counts several runs apart.
 *
 * It also serves the tools' services: `GET /<scenario>/search?turn=` answers after
 * {@link SEARCH_MS}, and `POST /<scenario>/notes` stores a note by its `idempotency-key` header
 * (a second request with the same key stores nothing new), counting both.
 *
 * Where it knowingly differs from OpenAI: no streaming, no authentication, fixed usage, and only
 * the fields the provider reads.
 */
export async function fakeOpenAIServer(): Promise<FakeOpenAIServer> {
  const scenarios = new Map<string, ScenarioCounts>();
  const of = (scenario: string): ScenarioCounts => {
    let counts = scenarios.get(scenario);
    if (!counts) {
      counts = { completions: [], searches: [], notes: new Map() };
      scenarios.set(scenario, counts);
    }
    return counts;
  };
  const bump = (list: number[], turn: number) => {
    while (list.length < turn) list.push(0);
    list[turn - 1]!++;
  };
  const reply = (res: ServerResponse, body: unknown, onDone: () => void) => {
    const text = JSON.stringify(body);
    res.on("finish", onDone);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const [, scenario = "", ...rest] = url.pathname.split("/");
      const path = `/${rest.join("/")}`;
      const counts = of(scenario);
      if (req.method === "POST" && path === "/v1/chat/completions") {
        const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as Body;
        const turn = turnOfMessages(body.messages);
        const message =
          turn > TOOL_TURNS
            ? { role: "assistant", content: `done after ${turn - 1} rounds` }
            : {
                role: "assistant",
                content: null,
                tool_calls: [
                  {
                    id: `call_${turn}_search`,
                    type: "function",
                    function: { name: "search", arguments: JSON.stringify({ turn }) },
                  },
                  {
                    id: `call_${turn}_note`,
                    type: "function",
                    function: { name: "note", arguments: JSON.stringify({ turn, text: `finding ${turn}` }) },
                  },
                ],
              };
        reply(
          res,
          {
            id: `chatcmpl-${turn}`,
            object: "chat.completion",
            created: 0,
            model: body.model,
            choices: [{ index: 0, message, finish_reason: turn > TOOL_TURNS ? "stop" : "tool_calls" }],
            usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
          },
          () => bump(counts.completions, turn),
        );
        return;
      }
      if (req.method === "GET" && path === "/search") {
        const turn = Number(url.searchParams.get("turn"));
        setTimeout(
          () =>
            reply(res, { turn, hits: [`source ${turn}a`, `source ${turn}b`] }, () =>
              bump(counts.searches, turn),
            ),
          SEARCH_MS,
        );
        return;
      }
      if (req.method === "POST" && path === "/notes") {
        const key = String(req.headers["idempotency-key"] ?? "");
        reply(res, { stored: key }, () => counts.notes.set(key, (counts.notes.get(key) ?? 0) + 1));
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: of,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
