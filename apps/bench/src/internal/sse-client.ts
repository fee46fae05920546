// The HTTP side of `bench:server`: start a run and follow its server-sent events to the end, with
// undici, parsing the frames as they arrive.
import { Agent, request } from "undici";

/** One stored event as the stream delivered it, with the time it was received (epoch ms). */
export interface Received {
  readonly sequence: number;
  readonly type: string;
  readonly data: { to?: string } | null;
  /** When the event was written (the transaction's time in the database), epoch ms. */
  readonly at: number;
  readonly receivedAt: number;
}

/** A client of one server: `base` is `http://127.0.0.1:<port>`, `token` a bearer secret or none. */
export interface ApiClient {
  readonly base: string;
  readonly headers: Record<string, string>;
  readonly dispatcher: Agent;
}

export function apiClient(base: string, token: string | undefined, connections: number): ApiClient {
  return {
    base,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    dispatcher: new Agent({ connections, pipelining: 1 }),
  };
}

const nowMs = () => performance.timeOrigin + performance.now();

/** `POST /v1/runs`; the new run's id. Throws unless the answer is 201. */
export async function createRun(client: ApiClient, assistant: string, input: string): Promise<string> {
  const response = await request(`${client.base}/v1/runs`, {
    method: "POST",
    dispatcher: client.dispatcher,
    headers: { ...client.headers, "content-type": "application/json" },
    body: JSON.stringify({ assistant, input }),
  });
  const body = await response.body.text();
  if (response.statusCode !== 201) throw new Error(`POST /v1/runs: ${response.statusCode} ${body}`);
  return (JSON.parse(body) as { id: string }).id;
}

/**
 * Follows `GET /v1/runs/{id}/stream` to its end. `onOpen` is called when the stream's opening
 * comment arrives; every stored event is returned with the time it was received.
 */
export async function followStream(
  client: ApiClient,
  runId: string,
  onOpen?: (at: number) => void,
): Promise<Received[]> {
  const response = await request(`${client.base}/v1/runs/${runId}/stream`, {
    dispatcher: client.dispatcher,
    headers: { ...client.headers, accept: "text/event-stream" },
  });
  if (response.statusCode !== 200)
    throw new Error(`GET stream: ${response.statusCode} ${await response.body.text()}`);
  const events: Received[] = [];
  let buffer = "";
  let opened = false;
  response.body.setEncoding("utf8");
  for await (const chunk of response.body as AsyncIterable<string>) {
    const receivedAt = nowMs();
    buffer += chunk;
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      if (frame.startsWith(":")) {
        if (!opened) onOpen?.(receivedAt);
        opened = true;
        continue;
      }
      let type = "";
      let data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) type = line.slice(7);
        else if (line.startsWith("data: ")) data = line.slice(6);
      }
      if (type === "error") throw new Error(`stream error: ${data}`);
      if (type === "live") continue;
      const event = JSON.parse(data) as { sequence: number; data: Received["data"]; at: string };
      events.push({ sequence: event.sequence, type, data: event.data, at: Date.parse(event.at), receivedAt });
    }
  }
  return events;
}

/** Whether a followed run ended `succeeded`, with every sequence from 1 and no gap. */
export function succeeded(events: readonly Received[]): boolean {
  const last = events.at(-1);
  return last?.data?.to === "succeeded" && events.every((event, i) => event.sequence === i + 1);
}
