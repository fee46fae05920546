import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { serviceAvailable } from "@openrath/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionTarget, openFailure, redactUrl } from "./connection-errors.js";
import { postgresStore } from "./postgres-store.js";
import { type PgCluster, startPgCluster } from "./testing/pg-cluster.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const SECRET = `Pw-${randomBytes(6).toString("hex")}`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** The error `postgresStore` fails with, which must not carry `secret` anywhere a person reads. */
async function openError(options: Parameters<typeof postgresStore>[0], secret = SECRET) {
  let caught: unknown;
  try {
    const store = await postgresStore(options);
    await store.close();
  } catch (error) {
    caught = error;
  }
  expect(caught, "the store opened").toBeDefined();
  expectNoSecret(caught, secret);
  return caught as Error & { code?: string; details?: Record<string, unknown> };
}

function expectNoSecret(error: unknown, secret: string) {
  let at: unknown = error;
  for (let depth = 0; at !== undefined && at !== null && depth < 10; depth++) {
    const e = at as Error & { details?: unknown; errors?: unknown[] };
    expect(String(e.message), `message at depth ${depth}`).not.toContain(secret);
    expect(String(e), `text at depth ${depth}`).not.toContain(secret);
    expect(JSON.stringify(e.details ?? {}), `details at depth ${depth}`).not.toContain(secret);
    for (const inner of e.errors ?? []) expect(String((inner as Error).message)).not.toContain(secret);
    at = e.cause;
  }
}

function serverBin(): string | undefined {
  if (process.env.OPENRATH_TEST_POSTGRES_BIN) return process.env.OPENRATH_TEST_POSTGRES_BIN;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort().at(-1);
  return version ? join(root, version, "bin") : undefined;
}

describe("malformed connection strings are invalid_argument before anything connects", () => {
  it.each([
    ["not a URL", "not a url"],
    ["an empty string", ""],
    ["user and password without a scheme", `runtime:${SECRET}@127.0.0.1/app`],
    ["a wrong scheme", `mysql://runtime:${SECRET}@127.0.0.1:3306/app`],
    ["an http URL", `http://runtime:${SECRET}@127.0.0.1/app`],
    ["a port out of range", `postgres://runtime:${SECRET}@127.0.0.1:99999/app`],
    ["port zero", `postgres://runtime:${SECRET}@127.0.0.1:0/app`],
  ])("%s", async (_, connectionString) => {
    const error = await openError({ connectionString });
    expect(error.code).toBe("invalid_argument");
    expect(error.details?.problem).toEqual(expect.any(String));
    if (connectionString) {
      // Named, without its password.
      expect(error.message).toContain(String(error.details?.url));
      expect(error.message).toContain(connectionString.includes("@") ? "runtime:***@" : connectionString);
    }
    expect(error.message).not.toMatch(/getaddrinfo|ENOTFOUND|Invalid URL/);
  });

  it("a connection string in the pool's settings is checked the same way", async () => {
    const error = await openError({ pool: { connectionString: `redis://u:${SECRET}@127.0.0.1/0` } });
    expect(error.code).toBe("invalid_argument");
  });
});

describe("redactUrl", () => {
  it("takes the password out of URLs, query parameters and text that is not a URL", () => {
    expect(redactUrl(`postgres://u:${SECRET}@h:5432/db`)).toBe("postgres://u:***@h:5432/db");
    expect(redactUrl(`postgres://u@h/db?password=${SECRET}&sslmode=require`)).toBe(
      "postgres://u@h/db?password=***&sslmode=require",
    );
    expect(redactUrl(`postgres://u:${SECRET}@/db?host=/tmp`)).toBe("postgres://u:***@/db?host=/tmp");
    expect(redactUrl(`postgres://u:p@ss/${SECRET}@h:99999/db`)).toBe("postgres://u:***@h:99999/db");
    expect(redactUrl(`u:${SECRET}@h`)).toBe("u:***@h");
    expect(redactUrl("not a url")).toBe("not a url");
  });

  it("the pool's separate password never reaches the named target", () => {
    const target = connectionTarget({ host: "127.0.0.1", port: 5433, user: "app", password: SECRET });
    expect(target.url).toBe("postgres://app@127.0.0.1:5433/app");
    expect(target.secrets).toEqual([SECRET]);
  });
});

describe("a host name that does not resolve", () => {
  // A real lookup would leave the machine (DNS); the driver's error is made as Node makes it.
  it("is store_unavailable with reason host_not_found, naming the URL without its password", () => {
    const target = connectionTarget({ connectionString: `postgres://u:${SECRET}@db.example.invalid/app` });
    const lookup = Object.assign(new Error("getaddrinfo ENOTFOUND db.example.invalid"), {
      code: "ENOTFOUND",
    });
    const error = openFailure(lookup, target) as Error & { code: string; details: Record<string, unknown> };
    expect(error.code).toBe("store_unavailable");
    expect(error.details).toMatchObject({ reason: "host_not_found", retryable: false });
    expect(error.message).toContain("postgres://u:***@db.example.invalid/app");
    expectNoSecret(error, SECRET);
  });
});

describe("a server with nothing listening", () => {
  it("is store_unavailable with reason unreachable, naming the URL without its password", async () => {
    const port = await freePort();
    const error = await openError({ connectionString: `postgres://runtime:${SECRET}@127.0.0.1:${port}/app` });
    expect(error.code).toBe("store_unavailable");
    expect(error.details).toMatchObject({
      reason: "unreachable",
      retryable: true,
      code: "ECONNREFUSED",
      url: `postgres://runtime:***@127.0.0.1:${port}/app`,
    });
    expect(error.message).toContain(`postgres://runtime:***@127.0.0.1:${port}/app`);
  });
});

describe.skipIf(!postgres.available)(`the PostgreSQL test server (${postgres.reason})`, () => {
  const withCredentials = (user: string, database: string) => {
    const url = new URL(POSTGRES_URL!);
    url.username = user;
    url.password = SECRET;
    url.pathname = `/${database}`;
    return url.href;
  };

  it("a database that does not exist is store_unavailable with reason database_not_found", async () => {
    const database = `missing_${randomBytes(4).toString("hex")}`;
    const error = await openError({ connectionString: withCredentials("postgres", database) });
    expect(error.code).toBe("store_unavailable");
    expect(error.details).toMatchObject({ reason: "database_not_found", code: "3D000", retryable: false });
    expect(error.message).toContain(`postgres:***@`);
    expect(error.message).toContain(`/${database}`);
  });

  it("a role that does not exist is store_unavailable with reason authentication_failed", async () => {
    const error = await openError({ connectionString: withCredentials("nobody_here", "postgres") });
    expect(error.code).toBe("store_unavailable");
    expect(error.details).toMatchObject({ reason: "authentication_failed", retryable: false });
    expect(error.message).toContain("nobody_here:***@");
  });

  it("a password in a query parameter is kept out of the error as well", async () => {
    const url = new URL(POSTGRES_URL!);
    url.pathname = `/missing_${randomBytes(4).toString("hex")}`;
    url.searchParams.set("password", SECRET);
    const error = await openError({ connectionString: url.href });
    expect(error.details).toMatchObject({ reason: "database_not_found" });
    expect(error.message).toContain("password=***");
  });
});

// The shared test server trusts loopback logins, so passwords are checked on a private cluster.
const bin = serverBin();
const binaries = await serviceAvailable("postgres server binaries", () => {
  if (!bin || !existsSync(join(bin, "initdb")))
    throw new Error("no initdb (set OPENRATH_TEST_POSTGRES_BIN to PostgreSQL's bin directory)");
  return true;
});

describe.skipIf(!binaries.available)(`a server that checks passwords (${binaries.reason})`, () => {
  let cluster: PgCluster;
  let url: URL;
  beforeAll(async () => {
    cluster = await startPgCluster(bin!);
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query(`create role runtime login password '${SECRET}'`);
    await admin.query("create database app owner runtime");
    await admin.query("revoke connect on database app from public");
    await admin.query(`create role outsider login password '${SECRET}'`);
    const { rows } = await admin.query<{ hba_file: string }>("show hba_file");
    // Loopback logins by password (scram-sha-256); the socket stays trusted for the admin.
    await admin.query(
      `copy (values ('local all all trust'), ('host all all 127.0.0.1/32 scram-sha-256')) to '${rows[0]!.hba_file}'`,
    );
    await admin.query("select pg_reload_conf()");
    await admin.end();
    url = new URL(cluster.url);
    url.username = "runtime";
    url.pathname = "/app";
    // The reload is asynchronous: wait until a login without a password is refused.
    for (let attempt = 0; ; attempt++) {
      const probe = new pg.Client({ connectionString: url.href });
      const refused = await probe.connect().then(
        () => probe.end().then(() => false),
        () => true,
      );
      if (refused) break;
      if (attempt > 100) throw new Error("the server did not start checking passwords");
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 60_000);
  afterAll(() => cluster?.stop());

  it("the right password opens the store (the cluster is real and checks passwords)", async () => {
    const right = new URL(url);
    right.password = SECRET;
    const store = await postgresStore({ connectionString: right.href, migrate: true });
    expect(await store.now()).toBeGreaterThan(0);
    await store.close();
  });

  it("a wrong password is store_unavailable with reason authentication_failed and no password in it", async () => {
    const wrong = new URL(url);
    wrong.password = `${SECRET}-wrong`;
    const error = await openError({ connectionString: wrong.href }, SECRET);
    expectNoSecret(error, `${SECRET}-wrong`);
    expect(error.code).toBe("store_unavailable");
    expect(error.details).toMatchObject({ reason: "authentication_failed", code: "28P01", retryable: false });
    expect(error.message).toContain(`runtime:***@127.0.0.1:${url.port}/app`);
  });

  it("a wrong password in the pool's settings is named by its host, never by the password", async () => {
    const error = await openError(
      {
        pool: {
          host: "127.0.0.1",
          port: Number(url.port),
          user: "runtime",
          database: "app",
          password: "nope-x1",
        },
      },
      "nope-x1",
    );
    expect(error.details).toMatchObject({ reason: "authentication_failed" });
    expect(error.message).toContain(`postgres://runtime@127.0.0.1:${url.port}/app`);
  });

  it("no password where one is needed is store_unavailable with reason authentication_failed", async () => {
    const error = await openError({ connectionString: url.href });
    expect(error.code).toBe("store_unavailable");
    expect(error.details).toMatchObject({ reason: "authentication_failed" });
  });

  it("a role without CONNECT on the database is store_unavailable with reason permission_denied", async () => {
    const outsider = new URL(url);
    outsider.username = "outsider";
    outsider.password = SECRET;
    const error = await openError({ connectionString: outsider.href });
    expect(error.details).toMatchObject({ reason: "permission_denied", code: "42501" });
  });
});
