import { randomBytes } from "node:crypto";
import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
});

/** A client connected as a new login role with no grant on anything of ours. */
async function stranger(): Promise<pg.Client> {
  const role = `stranger_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create role ${role} login`);
  const url = new URL(POSTGRES_URL!);
  url.username = role;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  cleanup.push(async () => {
    await client.end().catch(() => {});
    await admin.query(`drop role ${role}`);
    await admin.end();
  });
  return client;
}

describe.skipIf(!postgres.available)(`signals are hints, never authority (${postgres.reason})`, () => {
  it("a cancel NOTIFY sent by a role with no grant does not abort the step; a real cancel does", async () => {
    const schema = `hints_${process.pid}_${randomBytes(3).toString("hex")}`;
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema, migrate: true });
    const runtime = createDurableRuntime({ store });
    cleanup.push(() => runtime.close({ drain: false }));
    const aborted: string[] = [];
    const started: string[] = [];
    const lines: { message: string; data?: Record<string, unknown> }[] = [];
    const flow = defineWorkflow("patient").step(
      "wait",
      async (session, ctx) => {
        started.push(ctx.runId);
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, 1500);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            aborted.push(ctx.runId);
            reject(ctx.signal.reason);
          });
        });
        return session.append({ kind: "assistant", content: "waited", author: "patient" });
      },
      { entry: true },
    );
    await runtime.register(flow);
    await runtime
      .worker({
        leaseMs: 5_000,
        log: (_level, message, data) => lines.push({ message, ...(data ? { data } : {}) }),
      })
      .start();
    const forger = await stranger();
    // The stranger cannot read anything of ours...
    await expect(forger.query(`select count(*) from "${schema}".runs`)).rejects.toMatchObject({
      code: "42501",
    });
    // ...but PostgreSQL lets any role LISTEN and NOTIFY on any channel.
    const heard: { channel: string; payload: string }[] = [];
    forger.on("notification", (m) => heard.push({ channel: m.channel, payload: m.payload ?? "" }));
    await forger.query(`listen "${schema}_events"`);
    await forger.query(`listen "${schema}_work"`);

    const run = await runtime.submit("patient", Session.fromUserMessage("hold on"));
    while (!started.includes(run.id)) await new Promise((r) => setTimeout(r, 10));
    await forger.query("select pg_notify($1, $2)", [`${schema}_cancel`, run.id]);
    const ended = await runtime.wait(run.id, { signal: AbortSignal.timeout(20_000) });
    expect(ended).toMatchObject({ status: "succeeded", attempt: 1 });
    expect(aborted).toEqual([]);
    expect(lines.some((l) => l.message === "ignored a cancel signal the store does not confirm")).toBe(true);

    // What a listener learns: run ids, sequence numbers, statuses and plan hashes — no tenant, no content.
    await expect.poll(() => heard.length, { timeout: 3_000, interval: 20 }).toBeGreaterThan(0);
    for (const { channel, payload } of heard) {
      if (channel.endsWith("_events")) expect(payload).toMatch(/^[0-9a-f-]{36}:\d+(:[a-z_]+)?$/);
      else expect(payload).toMatch(/^([0-9a-f]{64})?$/);
    }

    // The store's own cancel still reaches the step at once.
    const second = await runtime.submit("patient", Session.fromUserMessage("never mind"));
    while (!started.includes(second.id)) await new Promise((r) => setTimeout(r, 10));
    await runtime.cancel(second.id, "changed my mind");
    expect((await runtime.wait(second.id)).status).toBe("cancelled");
    await expect.poll(() => aborted.includes(second.id), { timeout: 3_000, interval: 20 }).toBe(true);
  });
});
