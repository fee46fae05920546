// An OpenAI-compatible Chat Completions server on 127.0.0.1 for `bench:journal`, in a child
// process, so its work does not share the bench's event loop (a model server and a tool's service
// never do). It answers from a script of the request's content: turn n < `turns` asks for
// `lookup({ k: n })`, the last turn answers. `GET /search?k=&ms=` is the lookup tool's service (a
// search that answers after `ms` milliseconds). Nothing leaves loopback.
//
//   node --import tsx openai-bench-server.ts <turns>   prints `listening <port>`
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/** The running server. */
export interface OpenAIBenchServer {
  /** The value to pass as `baseURL` (`http://127.0.0.1:<port>/v1`). */
  readonly baseURL: string;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the server in a child process (with this process's Node flags) and waits until it listens. */
export async function spawnOpenAIBenchServer(turns: number): Promise<OpenAIBenchServer> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), String(turns)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += String(d);
      const match = /listening (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the bench's OpenAI server exited (${code})`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      child.kill();
      await exited;
    },
  };
}

function serve(turns: number): void {
  let n = 0;
  const json = (res: import("node:http").ServerResponse, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url?.startsWith("/search")) {
      const query = new URL(req.url, "http://127.0.0.1").searchParams;
      const k = Number(query.get("k"));
      setTimeout(() => json(res, { k, value: (k * 7919) % 1000 }), Number(query.get("ms") ?? 0));
      return;
    }
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as {
        model: string;
        messages: { role: string }[];
      };
      const turn = body.messages.filter((m) => m.role === "tool").length + 1;
      const message =
        turn >= turns
          ? { role: "assistant", content: "done" }
          : {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: `c${turn}`,
                  type: "function",
                  function: { name: "lookup", arguments: JSON.stringify({ k: turn }) },
                },
              ],
            };
      json(res, {
        id: `chatcmpl-${++n}`,
        object: "chat.completion",
        created: 0,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: turn >= turns ? "stop" : "tool_calls" }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      });
    });
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve(Number(process.argv[2]));
