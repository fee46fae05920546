import * as z from "zod";
import { DEFAULT_ROOT } from "./layout.js";

const HEADER_VALUE = /^[\x21-\x7e]+$/;
const HEADER_RULE = "it must be a non-empty printable ASCII string without spaces (it is sent as a header)";

const header = z.string({ error: HEADER_RULE }).regex(HEADER_VALUE, HEADER_RULE);

const positiveInt = (fallback: number) =>
  z
    .int({ error: "it must be a positive integer" })
    .positive("it must be a positive integer")
    .default(fallback);

/** `url` as requests use it: an http(s) URL without query or hash or trailing `/`, or `undefined`. */
export function baseUrlOf(url: string): string | undefined {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
  if (!URL.canParse(withScheme)) return undefined;
  const parsed = new URL(withScheme);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined;
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, "");
}

/** Whether `value` is a `viking://` directory URI without empty, `.` or `..` segments. */
function isVikingRoot(value: string): boolean {
  const trimmed = value.replace(/\/+$/, "");
  const rest = trimmed.slice("viking://".length);
  return (
    trimmed.startsWith("viking://") &&
    rest !== "" &&
    !rest.split("/").some((part) => part === "" || part === "." || part === "..") &&
    !/[{}%?#\s]/.test(rest)
  );
}

/** The options of `openVikingMemory`, with their defaults. */
export const OpenVikingMemoryOptionsSchema = z.strictObject({
  url: z
    .string({ error: 'it must be an http or https URL such as "http://127.0.0.1:1933"' })
    .refine(
      (url) => baseUrlOf(url) !== undefined,
      'it must be an http or https URL such as "http://127.0.0.1:1933"',
    )
    .optional(),
  apiKey: header.optional(),
  account: header.default("default"),
  user: header.default("default"),
  actorPeer: header.optional(),
  agent: z
    .never({
      error:
        "it is not supported: OpenViking's server reads no agent header (identity is the key or account and user); pass actorPeer to narrow the peer collection",
    })
    .optional(),
  root: z
    .string({ error: 'it must be a viking:// directory URI such as "viking://~/memories/openrath"' })
    .refine(isVikingRoot, 'it must be a viking:// directory URI such as "viking://~/memories/openrath"')
    .transform((root) => root.replace(/\/+$/, ""))
    .default(DEFAULT_ROOT),
  requestTimeoutMs: positiveInt(60_000),
  commitSessions: z.boolean().default(true),
  waitForIndex: z.boolean().default(true),
  waitForExtraction: z.boolean().default(false),
  extractionTimeoutMs: positiveInt(120_000),
  maxScan: positiveInt(100_000),
  concurrency: positiveInt(8),
  fetch: z
    .custom<typeof fetch>((value) => typeof value === "function", { error: "it must be a fetch function" })
    .optional(),
});

/** The `openviking` spec. Its scope is judged by `checkScope` (`invalid_scope`), as a scope is everywhere. */
export const OpenVikingMemorySpecSchema = z.strictObject(
  { scope: z.unknown().optional() },
  { error: 'it must be an object such as { scope: { tenant: "acme", user: "bob" } }' },
);
