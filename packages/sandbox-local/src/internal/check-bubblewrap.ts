import { spawn } from "node:child_process";
import { SandboxError } from "@openrath/core";
import { sandboxIds, systemDirArgs } from "./bwrap-args.js";
import { findSandboxTools, type SandboxTools } from "./sandbox-tools.js";

/**
 * Proves that this host can create the sandboxes this backend uses — bubblewrap with every
 * namespace unshared, and inside it a per-command PID namespace through util-linux `unshare` —
 * by running `true` that way. Returns the tools the sandboxes need.
 *
 * @throws {SandboxError} `sandbox_unavailable` with the complaint and how to fix it.
 */
export function checkBubblewrap(bwrapPath: string): Promise<SandboxTools> {
  const fail = (why: string, stderr = "", cause?: unknown) =>
    new SandboxError(
      "sandbox_unavailable",
      `The local sandbox asked for bubblewrap isolation, but ${why}. Install bubblewrap and util-linux 2.38 or later (apt-get install bubblewrap util-linux), allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), pass localSandbox({ bwrapPath }), or use isolation "none".`,
      { cause, details: { bwrapPath, stderr: stderr.trim() } },
    );
  const tools = findSandboxTools();
  if (typeof tools === "string") return Promise.reject(fail(tools));
  const ids = sandboxIds(process.getuid?.() ?? 1000, process.getgid?.() ?? 1000);
  const args = [
    "--unshare-all",
    "--unshare-user",
    "--uid",
    String(ids.uid),
    "--gid",
    String(ids.gid),
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    ...systemDirArgs(),
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--",
    tools.unshare,
    "--user",
    "--map-current-user",
    "--pid",
    "--fork",
    "--kill-child",
    "--",
    "/bin/sh",
    "-c",
    "true",
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(bwrapPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr = (stderr + text).slice(-4096);
    });
    child.on("error", (error: NodeJS.ErrnoException) =>
      reject(
        fail(
          `${JSON.stringify(bwrapPath)} ${error.code === "ENOENT" ? "was not found" : `could not start (${error.message})`}`,
          "",
          error,
        ),
      ),
    );
    child.on("close", (code, signal) => {
      if (code === 0) resolve(tools);
      else if (code !== null || signal !== null)
        reject(
          fail(
            `${JSON.stringify(bwrapPath)} cannot create a sandbox here (exit ${code ?? signal}: ${stderr.trim() || "no message"})`,
            stderr,
          ),
        );
    });
  });
}
