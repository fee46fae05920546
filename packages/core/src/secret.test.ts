import { inspect } from "node:util";
import {
  Agent,
  defineTool,
  OpenRathError,
  redactSecrets,
  resolveSecret,
  ScriptedProvider,
  type SecretProviderV1,
  Session,
  secret,
  setSecretProvider,
  type ToolResultChunk,
} from "@openrath/core";
import { afterEach, describe, expect, it } from "vitest";

const mapSecrets = (values: Record<string, string>, name = "map"): SecretProviderV1 & { asked: string[] } => {
  const asked: string[] = [];
  return {
    specVersion: "v1",
    name,
    asked,
    async get(key) {
      asked.push(key);
      return values[key];
    },
  };
};

const VALUE = "sk-planted-7f3e9a1c";

describe("secret()", () => {
  afterEach(() => {
    setSecretProvider(undefined);
    delete process.env.OPENRATH_TEST_SECRET;
  });

  it("holds and serializes the name only", () => {
    const ref = secret("OPENAI_API_KEY");
    expect(ref.secret).toBe("OPENAI_API_KEY");
    expect(JSON.stringify({ apiKey: ref })).toBe('{"apiKey":{"secret":"OPENAI_API_KEY"}}');
    expect(String(ref)).toBe("secret(OPENAI_API_KEY)");
    expect(inspect({ apiKey: ref })).toBe(`{ apiKey: secret("OPENAI_API_KEY") }`);
    expect(Object.isFrozen(ref)).toBe(true);
  });

  it("refuses a name that is not one", () => {
    for (const bad of ["", "1ABC", "has space", "x".repeat(300)]) {
      let error: unknown;
      try {
        secret(bad);
      } catch (e) {
        error = e;
      }
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    }
  });

  it("resolves from the environment by default, at the time of use", async () => {
    const ref = secret("OPENRATH_TEST_SECRET");
    process.env.OPENRATH_TEST_SECRET = "first";
    expect(await resolveSecret(ref)).toBe("first");
    process.env.OPENRATH_TEST_SECRET = "rotated";
    expect(await resolveSecret(ref)).toBe("rotated");
    expect(await resolveSecret("plain")).toBe("plain");
  });

  it("fails with secret_not_found naming the secret and the provider, never a value", async () => {
    const error = await resolveSecret(secret("OPENRATH_TEST_SECRET")).catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "secret_not_found")).toBe(true);
    expect((error as OpenRathError).message).toContain('"OPENRATH_TEST_SECRET"');
    expect((error as OpenRathError).message).toContain("env");
    expect((error as OpenRathError).details).toEqual({ secret: "OPENRATH_TEST_SECRET", provider: "env" });
  });

  it("asks the provider passed, else the process-wide one", async () => {
    const global = mapSecrets({ A: "from-global" }, "global");
    const local = mapSecrets({ A: "from-local" }, "local");
    setSecretProvider(global);
    expect(await resolveSecret(secret("A"))).toBe("from-global");
    expect(await resolveSecret(secret("A"), { secrets: local })).toBe("from-local");
    const error = await resolveSecret(secret("B")).catch((e: unknown) => e);
    expect((error as OpenRathError).message).toContain('"B"');
    expect((error as OpenRathError).message).toContain("global");
    expect(() => setSecretProvider({ name: "x" } as never)).toThrow(/specVersion/);
  });

  it("redacts resolved values in plain text and inside JSON strings", () => {
    const values = new Map([
      ["K", VALUE],
      ["Q", 'a"quoted\\value'],
      ["S", "ab"],
    ]);
    expect(redactSecrets(`key=${VALUE}; again ${VALUE}`, values)).toBe("key=[secret K]; again [secret K]");
    expect(redactSecrets(JSON.stringify({ v: 'a"quoted\\value' }), values)).toBe('{"v":"[secret Q]"}');
    expect(redactSecrets("ab stays", values)).toBe("ab stays");
  });
});

describe("ctx.secret in tools", () => {
  const results = (session: Session) =>
    session.chunks.filter((c): c is ToolResultChunk => c.kind === "tool_result");

  it("reads the run's secret provider and keeps the value out of the transcript", async () => {
    const secrets = mapSecrets({ SERVICE_TOKEN: VALUE });
    let seen: string | undefined;
    const tool = defineTool({
      name: "call_service",
      description: "",
      parameters: { type: "object", properties: {} },
      execute: async (_args, ctx) => {
        seen = await ctx.secret!("SERVICE_TOKEN");
        // A careless tool that echoes its credential: the transcript still must not hold it.
        return { used: seen, header: `Bearer ${seen}` };
      },
    });
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "call_service" }] }, { text: "done" }]);
    const out = await new Agent({ name: "a", provider, tools: [tool] }).run(Session.fromUserMessage("go"), {
      secrets,
    });
    expect(seen).toBe(VALUE);
    expect(secrets.asked).toEqual(["SERVICE_TOKEN"]);
    expect(JSON.parse(results(out)[0]!.content)).toEqual({
      used: "[secret SERVICE_TOKEN]",
      header: "Bearer [secret SERVICE_TOKEN]",
    });
    expect(JSON.stringify(out.toJSON())).not.toContain(VALUE);
    expect(JSON.stringify(provider.requests)).not.toContain(VALUE);
  });

  it("turns a missing secret into an error result naming it", async () => {
    const tool = defineTool({
      name: "call_service",
      description: "",
      parameters: { type: "object", properties: {} },
      execute: async (_args, ctx) => ctx.secret!("NOT_THERE"),
    });
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "call_service" }] }, { text: "done" }]);
    const out = await new Agent({ name: "a", provider, tools: [tool] }).run(Session.fromUserMessage("go"), {
      secrets: mapSecrets({}),
    });
    const result = results(out)[0]!;
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content)).toMatchObject({ error_kind: "secret_not_found" });
    expect(result.content).toContain("NOT_THERE");
  });

  it("redacts a secret that a failing tool puts in its error", async () => {
    const tool = defineTool({
      name: "call_service",
      description: "",
      parameters: { type: "object", properties: {} },
      execute: async (_args, ctx) => {
        throw new Error(`refused with key ${await ctx.secret!("SERVICE_TOKEN")}`);
      },
    });
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "call_service" }] }, { text: "done" }]);
    const out = await new Agent({ name: "a", provider, tools: [tool] }).run(Session.fromUserMessage("go"), {
      secrets: mapSecrets({ SERVICE_TOKEN: VALUE }),
    });
    const result = results(out)[0]!;
    expect(result.isError).toBe(true);
    expect(result.content).toContain("refused with key [secret SERVICE_TOKEN]");
    expect(result.content).not.toContain(VALUE);
  });
});
