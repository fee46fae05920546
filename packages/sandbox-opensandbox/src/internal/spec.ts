/**
 * What `session.to("opensandbox", spec)` takes: the sandbox to create on the OpenSandbox server.
 * Every field is optional; `parseSpec` fills in the defaults. Unknown fields are refused.
 */
export interface OpenSandboxSpec {
  /** Container image (default `opensandbox/code-interpreter:v1.1.0`, which runs Python cells). */
  readonly image?: string;
  /**
   * Command the container starts with (default `["/opt/code-interpreter/code-interpreter.sh"]`
   * for the default image, `["tail", "-f", "/dev/null"]` for any other).
   */
  readonly entrypoint?: readonly string[];
  /** Environment of every process in the sandbox. */
  readonly env?: Readonly<Record<string, string>>;
  /** Resource limits such as `{ cpu: "500m", memory: "512Mi" }` (default `{ cpu: "1", memory: "2Gi" }`). */
  readonly resourceLimits?: Readonly<Record<string, string>>;
  /**
   * Seconds the sandbox lives without renewal (at least 60, default 600). While it is open, the
   * adapter keeps pushing the expiry this far into the future, so a crashed client leaves a
   * sandbox that expires on its own within this time.
   */
  readonly timeoutSeconds?: number;
  /** Labels for the sandbox (Kubernetes label rules; the `opensandbox.io/` prefix is reserved). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Absolute workspace path inside the sandbox, created at open (default `/workspace`). */
  readonly workspace?: string;
  /** Seconds between expiry renewals (default half of `timeoutSeconds`; below `timeoutSeconds`). */
  readonly renewEverySeconds?: number;
  /**
   * Whether the image runs execd's code interpreter (`POST /code`, Jupyter kernels). Default: true
   * for the default image, false for others; without it Python runs as `python3 -c` through
   * `/command`.
   */
  readonly codeInterpreter?: boolean;
}

/** A spec with every default filled in. */
export interface ResolvedOpenSandboxSpec {
  readonly image: string;
  readonly entrypoint: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly resourceLimits: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly workspace: string;
  readonly renewEverySeconds: number;
  readonly codeInterpreter: boolean;
}

/** The image OpenRath defaults to: Python, Node and friends plus Jupyter kernels behind execd's `/code`. */
export const DEFAULT_IMAGE = "opensandbox/code-interpreter:v1.1.0";
