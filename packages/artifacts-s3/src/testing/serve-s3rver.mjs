#!/usr/bin/env node
// Runs s3rver, an S3-compatible test server, on 127.0.0.1 until SIGTERM or SIGINT. Used by the
// test services (tooling/scripts/services.mjs) and by the fault tests, which kill it mid-upload.
//   node serve-s3rver.mjs --dir <directory> [--port <port, default 0: any free one>]
// Prints one JSON line, {"port":<port>}, once it listens. Virtual-host requests are recognised as
// <bucket>.s3.localhost.
import { parseArgs } from "node:util";
import S3rver from "s3rver";

const { values } = parseArgs({
  options: { dir: { type: "string" }, port: { type: "string", default: "0" } },
});
if (!values.dir) {
  process.stderr.write("serve-s3rver: --dir <directory> is required\n");
  process.exit(2);
}
const server = new S3rver({
  address: "127.0.0.1",
  port: Number(values.port),
  directory: values.dir,
  serviceEndpoint: "localhost",
  silent: true,
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
const stop = () => server.close().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
