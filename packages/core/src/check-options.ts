import { OpenRathError } from "./errors.js";
import { SandboxError } from "./sandbox.js";
import type { StandardSchemaLike } from "./tool.js";

/** One thing wrong with a backend's options or spec, as {@link checkOptions} reports it. */
export interface OptionIssue {
  /** Where: the field's path (`"env.LANG"`, `"languages[1]"`), or `""` for the value itself. */
  readonly path: string;
  /** What the schema says is wrong, or what is valid. */
  readonly message: string;
  /** The value given at `path`; left out when it is secret or missing. */
  readonly value?: unknown;
}

/** Whose options {@link checkOptions} checks, for its message. */
export interface CheckOptionsContext {
  /** The factory, as users call it: `"localSandbox"`, `"openaiProvider"`. */
  readonly backend: string;
  /**
   * The argument checked, as the factory's signature names it: `options` (the default), or
   * another such as `server` for `mcpTools(server, options)`.
   */
  readonly argument?: string;
  /**
   * Fields whose values never appear in the message or the details, beyond the default: every
   * field whose name has the word key, token, secret, password, credential(s), auth,
   * authorization or cookie (`apiKey`, `bearerToken`, `headers.Authorization`, `x-api-key`; not
   * `maxTokens`). A path covers the fields below it.
   */
  readonly secrets?: readonly string[];
}

/** Which backend's placement spec {@link checkSpec} checks, for its message and its error class. */
export interface CheckSpecContext {
  /** `sandbox` specs fail with a `SandboxError`, `memory` specs with an `OpenRathError`. */
  readonly kind: "sandbox" | "memory";
  /** The registry key: `"docker"`, `"bm25"`. */
  readonly key: string;
  /** As {@link CheckOptionsContext.secrets}. */
  readonly secrets?: readonly string[];
}

type Converter = (options: {
  readonly target: string;
  readonly libraryOptions?: Record<string, unknown>;
}) => Record<string, unknown>;

/** What the message calls the value as a whole: `the options are …`, `the spec is …`. */
interface Subject {
  readonly name: string;
  readonly root: string;
  readonly verb: "is" | "are";
  /** What an unknown field is not: `an option`, `a field`. */
  readonly member: string;
  readonly secrets: readonly string[];
}

/** An issue before it is shown: the path as keys, and whether its value may be shown. */
interface Found {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly present: boolean;
  readonly value: unknown;
  readonly secret: boolean;
}

/** Words of a field name that mark its value as secret (`apiKey`, `bearerToken`, `Authorization`). */
const SECRET_WORDS = new Set([
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "credential",
  "credentials",
  "auth",
  "authorization",
  "cookie",
]);

/** Whether a field name holds a secret word: `apiKey`, `x-api-key`, `bearer_token`, not `maxTokens`. */
function isSecretName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((word) => SECRET_WORDS.has(word));
}

/** The most characters of a value a message shows. */
const MAX_SHOWN = 80;

/**
 * Validates a backend factory's options with their schema (any Standard Schema: a zod 4 schema,
 * valibot, arktype…) and returns the schema's output, defaults and transforms applied. Every
 * backend refuses bad options the same way: one `invalid_argument` error that names the factory
 * and each bad field with its path, the value given (never a secret's) and what is valid.
 *
 * Only `schema["~standard"]` is used: `validate`, and, when a field is not in the schema, the
 * optional Standard JSON Schema converter to list the fields that are. The schema must validate
 * synchronously (no async refinements).
 *
 * @example
 * ```ts
 * const Options = z.strictObject({ isolation: z.enum(["none", "bubblewrap"]).default("none") });
 * export function localSandbox(options: LocalSandboxOptions = {}) {
 *   const { isolation } = checkOptions(Options, options, { backend: "localSandbox" });
 *   // …
 * }
 * ```
 *
 * @throws {OpenRathError} `invalid_argument` with `details` `{ backend, field, value, issues }`
 *   (`field` and `value` of the first issue, `issues` every {@link OptionIssue}).
 */
export function checkOptions<Output>(
  schema: StandardSchemaLike<Output>,
  options: unknown,
  context: CheckOptionsContext,
): Output {
  const argument = context.argument ?? "options";
  const subject: Subject = {
    name: `${context.backend}()`,
    root: `the ${argument}`,
    verb: argument === "options" ? "are" : "is",
    member: argument === "options" ? `an option of ${context.backend}()` : `a field of the ${argument}`,
    secrets: context.secrets ?? [],
  };
  const result = validate(schema, options, subject);
  if (result.ok) return result.value;
  throw new OpenRathError(
    "invalid_argument",
    message(`Invalid ${argument} of ${subject.name}`, subject, result.issues),
    {
      details: { backend: context.backend, ...details(result.issues) },
    },
  );
}

/**
 * Validates the spec a placement gives a backend (`session.to(key, spec)`, `memory: key`) with its
 * schema and returns the schema's output, as {@link checkOptions} does for options but with code
 * `invalid_spec`: a `SandboxError` for a sandbox spec (what the sandbox conformance suite asks), an
 * `OpenRathError` for a memory spec. Call it from the descriptor's `parseSpec` and again in `open`.
 *
 * @example
 * ```ts
 * const Spec = z.strictObject({ workspace: z.string().min(1).optional() });
 * const parseSpec = (spec: unknown) => checkSpec(Spec, spec ?? {}, { kind: "sandbox", key: "local" });
 * ```
 *
 * @throws {SandboxError | OpenRathError} `invalid_spec` with `details`
 *   `{ backend, kind, field, value, issues }`.
 */
export function checkSpec<Output>(
  schema: StandardSchemaLike<Output>,
  spec: unknown,
  context: CheckSpecContext,
): Output {
  const name = `"${context.key}" ${context.kind} spec`;
  const subject: Subject = {
    name: `the ${name}`,
    root: "the spec",
    verb: "is",
    member: "a field of the spec",
    secrets: context.secrets ?? [],
  };
  const result = validate(schema, spec, subject);
  if (result.ok) return result.value;
  const text = message(`Invalid ${name}`, subject, result.issues);
  const options = { details: { backend: context.key, kind: context.kind, ...details(result.issues) } };
  if (context.kind === "sandbox") throw new SandboxError("invalid_spec", text, options);
  throw new OpenRathError("invalid_spec", text, options);
}

function validate<Output>(
  schema: StandardSchemaLike<Output>,
  input: unknown,
  subject: Subject,
): { ok: true; value: Output } | { ok: false; issues: Found[] } {
  const standard = schema?.["~standard"];
  if (typeof standard?.validate !== "function") {
    throw new OpenRathError(
      "invalid_argument",
      `The schema of ${subject.name} is not a Standard Schema (it has no ["~standard"].validate); use a zod 4, valibot or arktype schema.`,
    );
  }
  const result = standard.validate(input);
  if (result instanceof Promise) {
    // zod also answers with a promise when a transform or a refinement throws.
    result.catch(() => {});
    throw new OpenRathError(
      "invalid_argument",
      `The schema of ${subject.name} validated asynchronously (an async refinement, or a transform or refinement that threw); options and specs are checked synchronously.`,
    );
  }
  if (result.issues === undefined) return { ok: true, value: result.value };
  const issues: Found[] = [];
  for (const issue of result.issues) {
    const path = (issue.path ?? []).map(keyOf);
    // zod reports unknown fields as one issue on their object, listing them in `keys`.
    const unknown = (issue as { readonly keys?: unknown }).keys;
    if (Array.isArray(unknown) && unknown.length > 0 && unknown.every((k) => typeof k === "string")) {
      const known = knownFields(schema, path);
      const rest = known === undefined || known.length === 0 ? "" : `; the fields are ${known.join(", ")}`;
      for (const key of unknown as string[]) {
        issues.push(found([...path, key], input, subject, `it is not ${subject.member}${rest}`));
      }
    } else {
      issues.push(found(path, input, subject, withNested(issue)));
    }
  }
  return { ok: false, issues };
}

/** zod puts why a record key failed in nested `issues` ("Invalid key in record" alone says little). */
function withNested(issue: { readonly message: string }): string {
  const nested = (issue as { readonly issues?: unknown }).issues;
  if (!Array.isArray(nested)) return issue.message;
  const reasons = nested
    .map((inner) => (inner as { message?: unknown } | null)?.message)
    .filter((text): text is string => typeof text === "string" && text !== "");
  return reasons.length === 0 ? issue.message : `${issue.message}: ${reasons.join("; ")}`;
}

function found(path: readonly PropertyKey[], input: unknown, subject: Subject, text: string): Found {
  let value = input;
  let present = true;
  for (const key of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) {
      present = false;
      value = undefined;
      break;
    }
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  const shown = pathText(path);
  const secret =
    path.some((key) => typeof key === "string" && isSecretName(key)) ||
    subject.secrets.some((s) => shown === s || shown.startsWith(`${s}.`) || shown.startsWith(`${s}[`));
  return { path, message: text, present: present && value !== undefined, value, secret };
}

/** A Standard Schema path segment is a key, or `{ key }`. */
function keyOf(segment: unknown): PropertyKey {
  const key = typeof segment === "object" && segment !== null && "key" in segment ? segment.key : segment;
  return typeof key === "string" || typeof key === "number" || typeof key === "symbol" ? key : String(key);
}

/** `env.LANG`, `languages[1]`, `""` for the value itself. */
function pathText(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** The field names the schema knows at `path`, from its Standard JSON Schema, if it has one. */
function knownFields(schema: StandardSchemaLike, path: readonly PropertyKey[]): string[] | undefined {
  const converter = schema["~standard"].jsonSchema?.input as Converter | undefined;
  if (typeof converter !== "function") return undefined;
  try {
    // Functions and instances (`fetch`, a client) have no JSON Schema, but they keep their name.
    let node: unknown = converter({ target: "draft-2020-12", libraryOptions: { unrepresentable: "any" } });
    for (const key of path) node = propertiesOf(node)?.[String(key)];
    const properties = propertiesOf(node);
    if (properties === undefined) return undefined;
    // A field declared to accept nothing (`z.never()`, JSON Schema `{ not: {} }`) is refused with
    // its own message; it is not one to suggest.
    return Object.keys(properties).filter((name) => !refusesAll(properties[name]));
  } catch {
    return undefined;
  }
}

function refusesAll(node: unknown): boolean {
  const not = (node as { not?: unknown } | undefined)?.not;
  return typeof not === "object" && not !== null && Object.keys(not).length === 0;
}

/** An object schema's properties; for a union (`anyOf`, `oneOf`), those of its first object branch. */
function propertiesOf(node: unknown): Record<string, unknown> | undefined {
  if (typeof node !== "object" || node === null) return undefined;
  const { properties, anyOf, oneOf } = node as { properties?: unknown; anyOf?: unknown; oneOf?: unknown };
  if (typeof properties === "object" && properties !== null) return properties as Record<string, unknown>;
  for (const branch of [anyOf, oneOf].flatMap((list) => (Array.isArray(list) ? list : []))) {
    const found = propertiesOf(branch);
    if (found !== undefined) return found;
  }
  return undefined;
}

function show(issue: Found): string {
  if (issue.secret) return "given (not shown: it may be a secret)";
  const value = issue.value;
  if (typeof value === "function") return "a function";
  if (typeof value === "bigint" || typeof value === "symbol") return String(value);
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return Object.prototype.toString.call(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 3)}...` : text;
}

function line(issue: Found, subject: Subject): string {
  const where = issue.path.length === 0 ? subject.root : `"${pathText(issue.path)}"`;
  const verb = issue.path.length === 0 ? subject.verb : "is";
  const state = issue.present ? `${verb} ${show(issue)}` : `${verb} missing`;
  let text = issue.message.trim().replace(/\.+$/, "");
  // Schema libraries start their messages with a capital ("Invalid input: …").
  if (/^[A-Z][a-z]/.test(text)) text = text[0]!.toLowerCase() + text.slice(1);
  return `${where} ${state}; ${text}.`;
}

function message(head: string, subject: Subject, issues: readonly Found[]): string {
  const lines = issues.map((issue) => line(issue, subject));
  if (lines.length === 1) return `${head}: ${lines[0]}`;
  return `${head}, ${lines.length} problems:\n${lines.map((text) => `  - ${text}`).join("\n")}`;
}

function details(issues: readonly Found[]): Record<string, unknown> {
  const shown: OptionIssue[] = issues.map((issue) => ({
    path: pathText(issue.path),
    message: issue.message,
    ...(issue.present && !issue.secret ? { value: issue.value } : {}),
  }));
  const head = shown[0]!;
  return { field: head.path, ...("value" in head ? { value: head.value } : {}), issues: shown };
}
