import { connect, createServer, type Server, type Socket } from "node:net";

/** A loopback TCP proxy to `target` that a test can cut (the service looks down) and restore. */
export async function cuttableProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => socket.destroy());
        }
        client.pipe(upstream).pipe(client);
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
      });
      server.listen(port, "127.0.0.1", () => {
        const address = server?.address();
        port = typeof address === "object" && address ? address.port : port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    /** Drops every connection and refuses new ones, as a service that went down. */
    async cut() {
      await new Promise<void>((resolve) => {
        server?.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    /** Accepts connections again on the same port. */
    restore: listen,
    close() {
      for (const socket of sockets) socket.destroy();
      server?.close();
    },
  };
}
