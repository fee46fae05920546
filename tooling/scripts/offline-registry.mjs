#!/usr/bin/env node
/**
 * Runs a command against a registry on loopback that has no package at all, for release dry runs
 * that must not ask the real registry anything: every request is answered 404 (so every version
 * counts as unpublished) and a `PUT` (a real publish) 405.
 *
 * Usage: `node tooling/scripts/offline-registry.mjs <command> [args…]`. The command gets
 * `npm_config_registry` pointing at it; its exit code is this script's. The requests it received
 * are printed as the last line of stderr: `offline-registry: {"requests":["GET /…", …]}`.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("usage: offline-registry.mjs <command> [args…]\n");
  process.exit(2);
}

const requests = [];
const server = createServer((req, res) => {
  requests.push(`${req.method} ${req.url}`);
  req.resume();
  const status = req.method === "PUT" ? 405 : 404;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: status === 404 ? "Not found" : "This registry does not publish" }));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address();
const child = spawn(command, args, {
  stdio: "inherit",
  env: { ...process.env, npm_config_registry: `http://127.0.0.1:${port}/` },
});
const code = await new Promise((resolve) => {
  child.once("error", (error) => {
    process.stderr.write(`offline-registry: cannot run ${command}: ${error.message}\n`);
    resolve(127);
  });
  child.once("exit", (status, signal) => resolve(status ?? (signal ? 128 : 1)));
});
server.close();
process.stderr.write(`offline-registry: ${JSON.stringify({ requests })}\n`);
process.exit(code);
