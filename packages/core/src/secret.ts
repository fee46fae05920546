import { OpenRathError } from "./errors.js";

/**
 * Where secret values come from: a vault, a cloud secret manager, a test's map. Asked at the
 * moment a value is needed (each provider request, each tool run), so a rotated secret takes
 * effect without a restart; cache inside the provider if asking is slow.
 */
export interface SecretProviderV1 {
  readonly specVersion: "v1";
  /** Shown in errors (`env`, `vault`); never a value. */
  readonly name: string;
  /**
   * The value of secret `name`, or `undefined` when this provider has none (then
   * {@link resolveSecret} fails with `secret_not_found`). Reject only for a failure of the provider itself.
   */
  get(name: string, options?: { readonly signal?: AbortSignal }): Promise<string | undefined>;
}

const REF = Symbol.for("openrath.secret-ref.v1");
const INSPECT = Symbol.for("nodejs.util.inspect.custom");

/**
 * A named credential, resolved only when it is used. It holds the name, never the value, and it
 * serializes as its name (`{ "secret": "OPENAI_API_KEY" }`), so a reference in options, a log line
 * or a stored record can never carry the value. Make one with {@link secret}.
 */
export interface SecretRef {
  /** The secret's name, such as `OPENAI_API_KEY`. */
  readonly secret: string;
  toJSON(): { readonly secret: string };
  toString(): string;
}

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_./:-]{0,255}$/;

/**
 * A reference to the secret `name`, resolved at execution from the secret provider (by default
 * the process environment; see {@link setSecretProvider}).
 *
 * @throws {OpenRathError} `invalid_argument` for a name that is not 1–256 characters of letters,
 *   digits and `_ . / : -` starting with a letter or `_`.
 *
 * @example
 * ```ts
 * const provider = openaiProvider({ model: "gpt-4o-mini", apiKey: secret("OPENAI_API_KEY") });
 * ```
 */
export function secret(name: string): SecretRef {
  if (typeof name !== "string" || !SECRET_NAME.test(name)) {
    throw new OpenRathError(
      "invalid_argument",
      `secret() needs a name of letters, digits and _ . / : - (starting with a letter or _), at most 256 characters; got ${typeof name === "string" ? JSON.stringify(name.slice(0, 64)) : typeof name}.`,
      { details: { option: "name" } },
    );
  }
  const ref = {
    secret: name,
    toJSON: () => ({ secret: name }),
    toString: () => `secret(${name})`,
    [INSPECT]: () => `secret(${JSON.stringify(name)})`,
  };
  Object.defineProperty(ref, REF, { value: true });
  return Object.freeze(ref);
}

/** Whether `value` is a {@link SecretRef} (from any installed copy of core). */
export function isSecretRef(value: unknown): value is SecretRef {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<symbol, unknown>)[REF] === true &&
    typeof (value as { secret?: unknown }).secret === "string"
  );
}

/**
 * A secret provider that reads the process environment (`process.env`), or has nothing where
 * there is no `process` (a browser or an edge worker). An empty variable counts as unset.
 */
export function envSecrets(): SecretProviderV1 {
  return {
    specVersion: "v1",
    name: "env",
    async get(name) {
      const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
      const value = env?.[name];
      return value === undefined || value === "" ? undefined : value;
    },
  };
}

const DEFAULT_KEY = Symbol.for("openrath.secrets.v1");
type Holder = { [DEFAULT_KEY]?: SecretProviderV1 };

/**
 * Sets the process-wide secret provider that {@link resolveSecret} uses when no provider is
 * passed (kept on `globalThis`, shared by every copy of core); `undefined` restores the default,
 * {@link envSecrets}. Returns the provider it replaced.
 */
export function setSecretProvider(provider: SecretProviderV1 | undefined): SecretProviderV1 {
  if (provider !== undefined && (provider?.specVersion !== "v1" || typeof provider.get !== "function")) {
    throw new OpenRathError(
      "invalid_argument",
      'setSecretProvider needs a secret provider { specVersion: "v1", name, get(name) }.',
      { details: { option: "provider" } },
    );
  }
  const previous = defaultSecretProvider();
  (globalThis as Holder)[DEFAULT_KEY] = provider;
  return previous;
}

/** The process-wide secret provider: the one set with {@link setSecretProvider}, else the environment. */
export function defaultSecretProvider(): SecretProviderV1 {
  return (globalThis as Holder)[DEFAULT_KEY] ?? ENV;
}

const ENV = envSecrets();

/**
 * The value of a secret: a plain string is returned as it is; a {@link SecretRef} (or a bare
 * name) is asked of `options.secrets`, else the process-wide provider.
 *
 * @throws {OpenRathError} `secret_not_found` naming the secret and the provider (never a value)
 *   when the provider has no value for it.
 */
export async function resolveSecret(
  value: string | SecretRef,
  options: { readonly secrets?: SecretProviderV1 | undefined; readonly signal?: AbortSignal } = {},
): Promise<string> {
  if (typeof value === "string") return value;
  const name = value.secret;
  const provider = options.secrets ?? defaultSecretProvider();
  const found = await provider.get(name, options.signal ? { signal: options.signal } : {});
  if (typeof found !== "string" || found === "") {
    throw new OpenRathError(
      "secret_not_found",
      `Secret "${name}" has no value in the ${provider.name} secret provider. ${provider.name === "env" ? `Set the environment variable ${name}` : `Add "${name}" to that provider`}, or register another provider with setSecretProvider().`,
      { details: { secret: name, provider: provider.name } },
    );
  }
  return found;
}

/**
 * `text` with every occurrence of the resolved secret values replaced by `[secret NAME]`: what
 * a tool's result or error goes through before it enters the transcript. Values shorter than 4
 * characters are left alone (replacing them would mangle ordinary text and hide nothing).
 */
export function redactSecrets(text: string, resolved: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [name, value] of resolved) {
    if (value.length < 4) continue;
    // The value as it stands in text, and as it stands inside a JSON string (a tool result is JSON).
    for (const form of new Set([value, JSON.stringify(value).slice(1, -1)])) {
      if (out.includes(form)) out = out.split(form).join(`[secret ${name}]`);
    }
  }
  return out;
}
