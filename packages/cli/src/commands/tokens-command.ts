import { UsageError } from "../internal/args.js";
import type { Command, CommandGroup } from "../internal/command.js";
import { parseDuration } from "../parse-duration.js";
import { JSON_OPTION, SOURCE_OPTIONS, withSource } from "./runs-command.js";

const createCommand: Command = {
  name: "tokens create",
  summary: "Make an API token; its secret is printed once and only its hash is kept.",
  args: [],
  options: [
    ...SOURCE_OPTIONS,
    { name: "name", value: "<label>", description: "A label for people (required)." },
    {
      name: "grants",
      value: "<list>",
      description: "Comma-separated actions, namespaces (run.*) or * (required).",
    },
    { name: "project", value: "<id>", description: "Limit the token to one project of the tenant." },
    {
      name: "expires-in",
      value: "<duration>",
      description: "Expire after this long (30d, 12h); default never.",
    },
    JSON_OPTION,
  ],
  examples: ["openrath tokens create --name ci --grants run.create,run.read,event.read --expires-in 90d"],
  async run(ctx, { options }) {
    if (typeof options.name !== "string") throw new UsageError("openrath tokens create needs --name");
    if (typeof options.grants !== "string") throw new UsageError("openrath tokens create needs --grants");
    const grants = options.grants
      .split(",")
      .map((grant) => grant.trim())
      .filter((grant) => grant !== "");
    const expiresIn =
      typeof options["expires-in"] === "string" ? parseDuration(options["expires-in"]) : undefined;
    const made = await withSource(ctx, options, (source) =>
      source.createToken({
        name: options.name as string,
        grants,
        ...(typeof options.project === "string" ? { projectId: options.project } : {}),
        ...(expiresIn !== undefined ? { expiresInSeconds: Math.round(expiresIn / 1000) } : {}),
      }),
    );
    if (options.json) {
      ctx.stdout.write(`${JSON.stringify(made)}\n`);
    } else {
      ctx.stdout.write(`${made.secret}\n`);
      ctx.stderr.write(
        `Token ${made.token.id} (${made.token.name}): the secret above is shown once; keep it.\n`,
      );
    }
    return 0;
  },
};

const listCommand: Command = {
  name: "tokens list",
  summary: "List the tenant's tokens (never their secrets).",
  args: [],
  options: [...SOURCE_OPTIONS, JSON_OPTION],
  examples: ["openrath tokens list"],
  async run(ctx, { options }) {
    const tokens = await withSource(ctx, options, (source) => source.listTokens());
    if (options.json) {
      for (const token of tokens) ctx.stdout.write(`${JSON.stringify(token)}\n`);
      return 0;
    }
    if (tokens.length === 0) ctx.stdout.write("No tokens.\n");
    for (const token of tokens) {
      const state = token.revokedAt
        ? "revoked"
        : token.expiresAt && Date.parse(token.expiresAt) <= ctx.now()
          ? "expired"
          : "active";
      ctx.stdout.write(
        `${token.id}  ${state.padEnd(7)}  ${token.name}  ${token.grants.join(",")}${token.projectId ? `  project ${token.projectId}` : ""}\n`,
      );
    }
    return 0;
  },
};

const revokeCommand: Command = {
  name: "tokens revoke",
  summary: "Revoke a token: it authenticates nothing from now on.",
  args: [{ name: "<token id>", description: "The token's id (from tokens list)." }],
  options: [...SOURCE_OPTIONS, JSON_OPTION],
  examples: ["openrath tokens revoke 01a2…"],
  async run(ctx, { positionals, options }) {
    const token = await withSource(ctx, options, (source) => source.revokeToken(positionals[0] ?? ""));
    ctx.stdout.write(options.json ? `${JSON.stringify(token)}\n` : `Token ${token.id}: revoked\n`);
    return 0;
  },
};

/** `openrath tokens`: API tokens of a tenant. */
export const tokensCommand: CommandGroup = {
  name: "tokens",
  summary: "Create, list and revoke the Agent Server's API tokens.",
  commands: [createCommand, listCommand, revokeCommand],
};
