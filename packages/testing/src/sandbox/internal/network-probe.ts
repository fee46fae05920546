import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenRathError, type SandboxV1 } from "@openrath/core";

/** What a probe from inside a sandbox saw of a listener the test opened on 127.0.0.1. */
export interface NetworkProbe {
  /** Whether the listener accepted a connection from the sandbox. */
  readonly reached: boolean;
  /** The tool the sandbox used (`python3`, `nc`, `curl`…), or `none` when it had none. */
  readonly tool: string;
  /** What the probe printed or threw, for failure messages. */
  readonly transcript: string;
}

/**
 * The probe script: the first tool found connects to 127.0.0.1:port and sends a request. Socket-level
 * tools come first because they ignore proxy variables; the HTTP clients run with proxies unset, so
 * nothing ever leaves the loopback interface.
 */
function probeScript(port: number): string {
  const request = "GET /openrath-conformance HTTP/1.0\\r\\n\\r\\n";
  return [
    "unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY",
    "NO_PROXY='*'; no_proxy='*'; export NO_PROXY no_proxy",
    "if command -v python3 >/dev/null 2>&1; then echo probe=python3;",
    `  python3 -c 'import socket; s=socket.create_connection(("127.0.0.1", ${port}), 5); s.sendall(b"${request}"); print(s.recv(4096).decode("latin-1"))'`,
    "elif command -v perl >/dev/null 2>&1; then echo probe=perl;",
    `  perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(PeerAddr=>"127.0.0.1",PeerPort=>${port},Timeout=>5) or die "connect: $!\\n"; print $s "${request}"; print while <$s>'`,
    "elif command -v node >/dev/null 2>&1; then echo probe=node;",
    `  node -e 'const s=require("net").connect(${port},"127.0.0.1",()=>s.write("${request}"));s.pipe(process.stdout);s.on("error",(e)=>{console.error(String(e));process.exit(1)});setTimeout(()=>process.exit(1),5000).unref()'`,
    "elif command -v nc >/dev/null 2>&1; then echo probe=nc;",
    `  printf '${request}' | nc -w 5 127.0.0.1 ${port}`,
    "elif command -v curl >/dev/null 2>&1; then echo probe=curl;",
    `  curl -s -m 5 --noproxy '*' http://127.0.0.1:${port}/openrath-conformance`,
    "elif command -v wget >/dev/null 2>&1; then echo probe=wget;",
    `  wget -q -T 5 -O - http://127.0.0.1:${port}/openrath-conformance`,
    "elif command -v bash >/dev/null 2>&1; then echo probe=bash;",
    `  bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && printf "${request}" >&3 && cat <&3'`,
    "else echo probe=none; fi",
  ].join("\n");
}

/** The same connection from a code snippet, for sandboxes whose shell has no tool for it. */
function codeProbe(language: string, port: number): string | undefined {
  if (language.startsWith("python")) {
    return `import socket\ns = socket.create_connection(("127.0.0.1", ${port}), 5)\ns.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")\nprint(s.recv(4096).decode("latin-1"))`;
  }
  if (["javascript", "js", "node", "typescript", "ts"].includes(language)) {
    return `import("node:net").then((net) => { const s = net.connect(${port}, "127.0.0.1", () => s.write("GET / HTTP/1.0\\r\\n\\r\\n")); s.pipe(process.stdout); s.on("error", (e) => { console.error(String(e)); process.exit(1); }); setTimeout(() => process.exit(1), 5000).unref(); })`;
  }
  return undefined;
}

/**
 * Opens an HTTP listener on 127.0.0.1 in the test process and tries to reach it from inside
 * `sandbox`, first with a shell tool, then with a code snippet in one of `languages`. Only the
 * loopback address is ever contacted.
 */
export async function probeLoopback(sandbox: SandboxV1, languages: readonly string[]): Promise<NetworkProbe> {
  let connections = 0;
  const server = createServer((_request, response) => response.end("openrath-conformance-ok\n"));
  server.on("connection", () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const run = async (what: () => Promise<{ stdout: string; stderr: string }>): Promise<string> => {
    try {
      const result = await what();
      return `${result.stdout}${result.stderr}`;
    } catch (error) {
      return OpenRathError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
    }
  };
  try {
    let transcript = await run(() => sandbox.exec(probeScript(port), { timeoutMs: 20_000 }));
    let tool = /probe=(\w+)/.exec(transcript)?.[1] ?? "unknown";
    if (tool === "none") {
      for (const language of languages) {
        const code = codeProbe(language, port);
        if (code === undefined) continue;
        tool = `runCode:${language}`;
        transcript += await run(() => sandbox.runCode(code, language, { timeoutMs: 20_000 }));
        break;
      }
    }
    // A connection that reached the listener has been counted by the time the client got its answer;
    // a short pause covers a client that gave up before reading it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { reached: connections > 0, tool, transcript };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Code that connects to the Unix socket `path` and prints `reached` when it answers. */
function unixCodeProbe(language: string, path: string): string | undefined {
  if (language.startsWith("python")) {
    return `import socket\ntry:\n    s = socket.socket(socket.AF_UNIX)\n    s.settimeout(5)\n    s.connect(${JSON.stringify(path)})\n    print("reached", s.recv(64))\nexcept OSError as e:\n    print("error", e)`;
  }
  if (["javascript", "js", "node", "typescript", "ts"].includes(language)) {
    return `import("node:net").then((net) => { const s = net.connect(${JSON.stringify(path)}); s.on("data", () => { console.log("reached"); process.exit(0); }); s.on("error", (e) => { console.log("error " + e.code); process.exit(0); }); setTimeout(() => process.exit(0), 5000).unref(); })`;
  }
  return undefined;
}

/**
 * Plants a Unix socket server in this machine's temporary directory and tries to reach it from
 * inside `sandbox`: by its path from a shell (is it there at all?) and, with a language of the
 * manifest, by connecting. A read-only view of the host does not stop `connect()` on a socket.
 */
export async function probeUnixSocket(
  sandbox: SandboxV1,
  languages: readonly string[],
): Promise<NetworkProbe> {
  const dir = mkdtempSync(join(tmpdir(), "openrath-conformance-"));
  const path = join(dir, "planted.sock");
  let connections = 0;
  const server = createNetServer((socket) => {
    connections++;
    socket.end("planted\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  try {
    const shell = await sandbox
      .exec(["sh", "-c", '[ -e "$1" ] && echo visible || echo absent', "sh", path], { timeoutMs: 20_000 })
      .then(
        (r) => r.stdout.trim(),
        (error: unknown) => String(error),
      );
    let transcript = `path: ${shell}`;
    let tool = "shell";
    for (const language of languages) {
      const code = unixCodeProbe(language, path);
      if (code === undefined) continue;
      tool = `runCode:${language}`;
      transcript += `\n${await sandbox.runCode(code, language, { timeoutMs: 20_000 }).then(
        (r) => `${r.stdout}${r.stderr}`,
        (error: unknown) => String(error),
      )}`;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { reached: connections > 0 || shell === "visible", tool, transcript };
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
