import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/** A loopback proxy that cuts the first event stream through it mid-frame. */
export interface CuttingProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  readonly baseUrl: string;
  /** The `Last-Event-ID` header of each stream request, in order (undefined when absent). */
  readonly lastEventIds: (string | undefined)[];
  close(): Promise<void>;
}

/**
 * Forwards every request to `target`. The first `GET …/stream` response is passed on frame by
 * frame until `storedFrames` frames with an `id` went through; then half of a made-up frame is
 * written and the client's socket destroyed, as a crashing server or proxy would leave it.
 */
export async function cuttingProxy(target: string, storedFrames: number): Promise<CuttingProxy> {
  const lastEventIds: (string | undefined)[] = [];
  const server = createServer((incoming, outgoing) => {
    const streaming = /\/stream(\?|$)/.test(incoming.url ?? "");
    if (streaming) lastEventIds.push(incoming.headers["last-event-id"] as string | undefined);
    const cut = streaming && lastEventIds.length === 1;
    const upstream = request(
      new URL(incoming.url ?? "/", target),
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!cut) {
          answer.pipe(outgoing);
          return;
        }
        let buffer = "";
        let passed = 0;
        answer.on("data", (chunk: Buffer) => {
          buffer += chunk.toString("utf8");
          for (
            let end = buffer.indexOf("\n\n");
            end !== -1 && passed < storedFrames;
            end = buffer.indexOf("\n\n")
          ) {
            const frame = buffer.slice(0, end + 2);
            buffer = buffer.slice(end + 2);
            outgoing.write(frame);
            if (/^id: /m.test(frame) && ++passed === storedFrames) {
              answer.destroy();
              // Once what went before is on the wire, half a frame, then the socket goes.
              outgoing.write('id: 9999\nevent: made.up\ndata: {"runId":', () => outgoing.socket?.destroy());
            }
          }
        });
      },
    );
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    lastEventIds,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
