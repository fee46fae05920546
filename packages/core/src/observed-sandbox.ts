import type { RunObserver } from "./observer.js";
import type { ExecOptions, ExecResult, SandboxV1 } from "./sandbox.js";
import type { Session } from "./session.js";

/** `sandbox` with its `exec` and `runCode` seen by `observer` (as `sandbox.exec` work); the rest as is. */
export function observedSandbox(sandbox: SandboxV1, observer: RunObserver, session: Session): SandboxV1 {
  const exec = (command: string | readonly string[], options?: ExecOptions): Promise<ExecResult> =>
    observer.observe({ kind: "sandbox.exec", method: "exec", command, sandboxId: sandbox.id, session }, () =>
      sandbox.exec(command, options),
    );
  const runCode = (
    code: string,
    language: string,
    options?: Omit<ExecOptions, "stdin">,
  ): Promise<ExecResult> =>
    observer.observe(
      { kind: "sandbox.exec", method: "runCode", command: language, sandboxId: sandbox.id, session },
      () => sandbox.runCode(code, language, options),
    );
  // Methods are bound to the real sandbox: backends keep state on `this`.
  return Object.freeze({
    id: sandbox.id,
    workspace: sandbox.workspace,
    exec,
    runCode,
    readFile: sandbox.readFile.bind(sandbox) as SandboxV1["readFile"],
    writeFile: sandbox.writeFile.bind(sandbox),
    listFiles: sandbox.listFiles.bind(sandbox),
    exists: sandbox.exists.bind(sandbox),
    close: sandbox.close.bind(sandbox),
  });
}
