import { spawn } from "node:child_process";
import { SandboxError } from "@openrath/core";

/**
 * Proves that bubblewrap can create the sandbox this backend uses (all namespaces, read-only
 * root) by running `true` in it.
 *
 * @throws {SandboxError} `sandbox_unavailable` with bubblewrap's complaint and how to fix it.
 */
export function checkBubblewrap(bwrapPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const args = ["--die-with-parent", "--unshare-all", "--cap-drop", "ALL", "--ro-bind", "/", "/"];
    const child = spawn(bwrapPath, [...args, "--dev", "/dev", "--proc", "/proc", "--", "true"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const fail = (why: string, cause?: unknown) =>
      reject(
        new SandboxError(
          "sandbox_unavailable",
          `The local sandbox asked for bubblewrap isolation, but ${JSON.stringify(bwrapPath)} ${why}. Install bubblewrap (apt-get install bubblewrap), allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), pass localSandbox({ bwrapPath }), or use isolation "none".`,
          { cause, details: { bwrapPath, stderr: stderr.trim() } },
        ),
      );
    child.on("error", (error: NodeJS.ErrnoException) =>
      fail(error.code === "ENOENT" ? "was not found" : `could not start (${error.message})`, error),
    );
    child.on("close", (code, signal) => {
      if (code === 0) resolve();
      else if (code !== null || signal !== null)
        fail(`cannot create a sandbox here (exit ${code ?? signal}: ${stderr.trim() || "no message"})`);
    });
  });
}
