import { OpenRathError, SandboxError, type StandardSchemaLike } from "@openrath/core";
import { checkOptions, checkSpec } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";
import * as z from "zod";

function thrown(fn: () => unknown): OpenRathError {
  try {
    fn();
  } catch (error) {
    expect(OpenRathError.isInstance(error), String(error)).toBe(true);
    return error as OpenRathError;
  }
  throw new Error("expected a throw");
}

const Options = z.strictObject({
  isolation: z.enum(["none", "bubblewrap"]).default("none"),
  maxOutputBytes: z.number().int().min(0).optional(),
  apiKey: z.string().min(20).optional(),
  env: z.record(z.string(), z.string()).optional(),
  fetch: z.custom<typeof fetch>((v) => typeof v === "function").optional(),
});

describe("checkOptions", () => {
  it("returns the schema's output, defaults applied", () => {
    expect(checkOptions(Options, {}, { backend: "demoSandbox" })).toEqual({ isolation: "none" });
    const out = checkOptions(Options, { isolation: "bubblewrap", maxOutputBytes: 0 }, { backend: "x" });
    expect(out).toEqual({ isolation: "bubblewrap", maxOutputBytes: 0 });
  });

  it("refuses a bad field with invalid_argument naming the factory, the field, the value and what is valid", () => {
    const error = thrown(() => checkOptions(Options, { isolation: "vm" }, { backend: "demoSandbox" }));
    expect(error.code).toBe("invalid_argument");
    expect(error.name).toBe("OpenRathError");
    expect(error.message).toBe(
      'Invalid options of demoSandbox(): "isolation" is "vm"; invalid option: expected one of "none"|"bubblewrap".',
    );
    expect(error.details).toMatchObject({ backend: "demoSandbox", field: "isolation", value: "vm" });
  });

  it("names every bad field with its path, one line each", () => {
    const error = thrown(() =>
      checkOptions(Options, { maxOutputBytes: 1.5, env: { LANG: 1 } }, { backend: "demoSandbox" }),
    );
    expect(error.message.split("\n")).toEqual([
      "Invalid options of demoSandbox(), 2 problems:",
      '  - "maxOutputBytes" is 1.5; invalid input: expected int, received number.',
      '  - "env.LANG" is 1; invalid input: expected string, received number.',
    ]);
    expect(error.details.issues).toEqual([
      { path: "maxOutputBytes", message: expect.any(String), value: 1.5 },
      { path: "env.LANG", message: expect.any(String), value: 1 },
    ]);
  });

  it("names an unknown field and lists the known ones, functions and all", () => {
    const error = thrown(() => checkOptions(Options, { timeout: 5 }, { backend: "demoSandbox" }));
    expect(error.details).toMatchObject({ field: "timeout", value: 5 });
    expect(error.message).toBe(
      'Invalid options of demoSandbox(): "timeout" is 5; it is not an option of demoSandbox(); the fields are isolation, maxOutputBytes, apiKey, env, fetch.',
    );
  });

  it("does not suggest a field declared to accept nothing, and gives its own message for it", () => {
    const schema = z.strictObject({
      user: z.string().optional(),
      agent: z.never({ error: "no agent header exists; use user" }).optional(),
    });
    expect(() => checkOptions(schema, { usr: "x" }, { backend: "demo" })).toThrow(/the fields are user\.$/);
    expect(() => checkOptions(schema, { agent: "x" }, { backend: "demo" })).toThrow(
      'Invalid options of demo(): "agent" is "x"; no agent header exists; use user.',
    );
  });

  it("never shows a secret's value, in the message or the details", () => {
    const secret = "sk-short-but-secret";
    const error = thrown(() => checkOptions(Options, { apiKey: secret }, { backend: "demoProvider" }));
    expect(error.message).not.toContain(secret);
    expect(error.message).toContain('"apiKey" is given (not shown: it may be a secret)');
    expect(JSON.stringify(error.details)).not.toContain(secret);
    expect(error.details.field).toBe("apiKey");

    const headers = z.strictObject({
      url: z.string().startsWith("http").optional(),
      headers: z.record(z.string(), z.number()),
    });
    const leaky = { url: "u:hunter22@x y", headers: { Authorization: "Bearer hunter22" } };
    const other = thrown(() => checkOptions(headers, leaky, { backend: "demo", secrets: ["url"] }));
    expect(other.message).not.toContain("hunter22");
    expect(JSON.stringify(other.details)).not.toContain("hunter22");
    expect(other.details.issues).toHaveLength(2);
  });

  it("hides fields named for secrets, not fields that only look alike", () => {
    const schema = z.strictObject({
      maxTokens: z.int(),
      tokenizer: z.string(),
      headers: z.record(z.string(), z.int()),
    });
    const error = thrown(() =>
      checkOptions(
        schema,
        {
          maxTokens: 1.5,
          tokenizer: 1,
          headers: { "x-api-key": "k1", "X-Session-Token": "k2", Accept: "json" },
        },
        { backend: "demo" },
      ),
    );
    expect(error.message).toContain('"maxTokens" is 1.5;');
    expect(error.message).toContain('"tokenizer" is 1;');
    expect(error.message).toContain('"headers.Accept" is "json";');
    expect(error.message).not.toMatch(/k1|k2/);
  });

  it("gives the reason a record key fails, not only that it does", () => {
    const schema = z.strictObject({
      env: z.record(
        z.string().refine((name) => !name.includes("="), "names have no '='"),
        z.string(),
      ),
    });
    const error = thrown(() => checkOptions(schema, { env: { "A=B": "1" } }, { backend: "demo" }));
    expect(error.details.field).toBe("env.A=B");
    expect(error.message).toContain("invalid key in record: names have no '='.");
  });

  it("says what is wrong with the options as a whole", () => {
    const error = thrown(() => checkOptions(Options, "bubblewrap", { backend: "demoSandbox" }));
    expect(error.message).toBe(
      'Invalid options of demoSandbox(): the options are "bubblewrap"; invalid input: expected object, received string.',
    );
    expect(error.details.field).toBe("");
  });

  it("shows a missing field as missing, and a long value cut short", () => {
    const schema = z.strictObject({ image: z.string(), tags: z.array(z.string()).max(1).optional() });
    const error = thrown(() => checkOptions(schema, { tags: Array(40).fill("tag") }, { backend: "demo" }));
    expect(error.message).toContain(
      '"image" is missing; invalid input: expected string, received undefined.',
    );
    expect(error.message).toMatch(/"tags" is \["tag","tag",[^;]{40,}\.\.\.; too big/);
  });

  it("names another argument than the options when told", () => {
    const Server = z.strictObject({ command: z.string().min(1) });
    const error = thrown(() =>
      checkOptions(Server, { command: "", cmd: "x" }, { backend: "mcpTools", argument: "server" }),
    );
    expect(error.message.split("\n")).toEqual([
      "Invalid server of mcpTools(), 2 problems:",
      '  - "command" is ""; too small: expected string to have >=1 characters.',
      '  - "cmd" is "x"; it is not a field of the server; the fields are command.',
    ]);
    expect(thrown(() => checkOptions(Server, 5, { backend: "mcpTools", argument: "server" })).message).toBe(
      "Invalid server of mcpTools(): the server is 5; invalid input: expected object, received number.",
    );
  });

  it("works with any Standard Schema: paths as { key } segments, no JSON Schema", () => {
    const custom: StandardSchemaLike<{ port: number }> = {
      "~standard": {
        version: 1,
        vendor: "custom",
        validate: (value) =>
          typeof (value as { port?: unknown }).port === "number"
            ? { value: value as { port: number } }
            : { issues: [{ message: "Port must be a number", path: [{ key: "port" }] }] },
      },
    };
    expect(checkOptions(custom, { port: 1 }, { backend: "demo" })).toEqual({ port: 1 });
    const error = thrown(() => checkOptions(custom, { port: "80" }, { backend: "demo" }));
    expect(error.message).toBe('Invalid options of demo(): "port" is "80"; port must be a number.');
  });

  it("refuses a schema that answers asynchronously, without an unhandled rejection", () => {
    const slow = z.strictObject({ a: z.string().refine(async () => true) });
    const error = thrown(() => checkOptions(slow, { a: "x" }, { backend: "demo" }));
    expect(error.message).toMatch(/validated asynchronously/);
    const throwing = z.strictObject({
      a: z.string().transform(() => {
        throw new Error("a transform that throws");
      }),
    });
    expect(thrown(() => checkOptions(throwing, { a: "x" }, { backend: "demo" })).message).toMatch(
      /asynchronously/,
    );
  });

  it("refuses something that is not a Standard Schema", () => {
    const error = thrown(() => checkOptions({} as StandardSchemaLike, {}, { backend: "demo" }));
    expect(error.message).toMatch(/not a Standard Schema/);
  });
});

describe("checkSpec", () => {
  const Spec = z.strictObject({
    workspace: z.string().min(1).optional(),
    env: z.record(z.string(), z.string()).optional(),
  });

  it("returns the schema's output", () => {
    expect(checkSpec(Spec, { workspace: "/w" }, { kind: "sandbox", key: "demo" })).toEqual({
      workspace: "/w",
    });
  });

  it("refuses a sandbox spec with a SandboxError invalid_spec", () => {
    const error = thrown(() => checkSpec(Spec, { workdir: "/x" }, { kind: "sandbox", key: "demo" }));
    expect(SandboxError.isInstance(error, "invalid_spec")).toBe(true);
    expect(error.name).toBe("SandboxError");
    expect(error.message).toBe(
      'Invalid "demo" sandbox spec: "workdir" is "/x"; it is not a field of the spec; the fields are workspace, env.',
    );
    expect(error.details).toMatchObject({ backend: "demo", kind: "sandbox", field: "workdir", value: "/x" });
  });

  it("refuses a memory spec with an OpenRathError invalid_spec", () => {
    const error = thrown(() => checkSpec(Spec, "./work", { kind: "memory", key: "demo" }));
    expect(error.code).toBe("invalid_spec");
    expect(error.name).toBe("OpenRathError");
    expect(error.message).toBe(
      'Invalid "demo" memory spec: the spec is "./work"; invalid input: expected object, received string.',
    );
  });

  it("names an unknown field below the top level by its path", () => {
    const nested = z.strictObject({ limits: z.strictObject({ cpu: z.string() }) });
    const error = thrown(() =>
      checkSpec(nested, { limits: { cpu: "1", gpu: "2" } }, { kind: "sandbox", key: "demo" }),
    );
    expect(error.details.field).toBe("limits.gpu");
    expect(error.message).toContain("the fields are cpu");
  });

  it("lists the fields of the object side of a union", () => {
    const schema = z.strictObject({
      transport: z.union([z.literal("stdio"), z.strictObject({ port: z.int() })]),
    });
    const error = thrown(() =>
      checkSpec(schema, { transport: { port: 1, prot: 2 } }, { kind: "memory", key: "demo" }),
    );
    expect(error.message).toBe(
      'Invalid "demo" memory spec: "transport.prot" is 2; it is not a field of the spec; the fields are port.',
    );
  });
});
