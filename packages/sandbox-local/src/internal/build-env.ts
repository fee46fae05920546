import type { LocalIsolation } from "../local-sandbox.js";

/** The inputs of {@link buildEnv}. */
export interface EnvLayers {
  readonly isolation: LocalIsolation;
  readonly inheritEnv: boolean;
  /** The host environment (`process.env`). */
  readonly host: Readonly<Record<string, string | undefined>>;
  /** The workspace as commands see it. */
  readonly workspace: string;
  /** The sandbox's private temporary directory on the host. */
  readonly tmpdir: string;
  /** Under bubblewrap: the `PATH` of the programs visible inside (the host's names places it cannot see). */
  readonly isolatedPath?: string;
  /** The spec's `env`. */
  readonly spec?: Readonly<Record<string, string>>;
  /** The exec's `env`. */
  readonly exec?: Readonly<Record<string, string>>;
}

const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * A command's environment, in layers each overriding the one before: the base (the host's
 * environment, or only `PATH`, `HOME` = the workspace, `LANG=C.UTF-8` and `TMPDIR`), the spec's
 * `env`, the exec's `env`. Under bubblewrap `TMPDIR` is always `/tmp`, the private one inside.
 */
export function buildEnv(layers: EnvLayers): Record<string, string> {
  const env: Record<string, string> = {};
  if (layers.inheritEnv) {
    for (const [name, value] of Object.entries(layers.host)) if (value !== undefined) env[name] = value;
  } else {
    env.PATH =
      (layers.isolation === "bubblewrap" ? layers.isolatedPath : undefined) ||
      layers.host.PATH ||
      FALLBACK_PATH;
    env.HOME = layers.workspace;
    env.LANG = "C.UTF-8";
    env.TMPDIR = layers.tmpdir;
  }
  if (layers.isolation === "bubblewrap") env.TMPDIR = "/tmp";
  Object.assign(env, layers.spec, layers.exec);
  return env;
}
