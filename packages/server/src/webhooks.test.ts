import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableRuntime,
  verifyWebhook,
  WEBHOOK_HEADERS,
} from "@openrath/runtime-durable";
import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { pgliteStore } from "@openrath/store-postgres";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { createServer } from "./server.js";
import { approval, bearer, echo, mint } from "./testing/harness.js";

const open: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => {});
});

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A receiver on 127.0.0.1 that answers 500 to its first `failures` requests, then 204. */
async function receiver(failures = 0) {
  const received: Received[] = [];
  let answered = 0;
  const server = createHttpServer((request, response) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(parts).toString("utf8") });
      response.statusCode = answered++ < failures ? 500 : 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  open.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

/** A runtime on `db` with a worker whose periodic jobs tick fast (or not at all), and a server. */
async function serverOn(
  db: PGlite,
  jobs: boolean,
  allowInternalTargets = true,
): Promise<{ runtime: DurableRuntime; app: FastifyInstance }> {
  const runtime = createDurableRuntime({ store: await pgliteStore({ db }) });
  open.push(() => runtime.close({ drain: false }));
  await runtime.register(echo);
  await runtime.register(approval);
  await runtime
    .worker({
      jobs: jobs ? { tickMs: 50, webhooks: { retryBaseMs: 100, allowInternalTargets } } : { tickMs: false },
    })
    .start();
  const app = await createServer({ runtime, auth: { mode: "tokens" } });
  open.push(() => app.close());
  return { runtime, app };
}

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function memoryDb(): Promise<PGlite> {
  const db = await PGlite.create();
  open.push(() => db.close());
  return db;
}

describe("webhooks", () => {
  it("a run that parks and then ends is POSTed signed: the signature verifies over the timestamp and the exact body, a changed body does not", async () => {
    const { runtime, app } = await serverOn(await memoryDb(), true);
    const admin = await mint(runtime.store.access as AccessStoreV1, { grants: ["*"] });
    const hooks = await receiver();
    const registered = await app.inject({
      method: "POST",
      url: "/v1/webhooks",
      headers: bearer(admin),
      payload: { url: hooks.url },
    });
    expect(registered.statusCode).toBe(201);
    const { webhook, secret } = registered.json();
    expect(webhook).toMatchObject({ url: hooks.url, events: ["run.ended", "run.parked"], enabled: true });
    expect(secret).toMatch(/^whsec_/);
    expect(
      JSON.stringify(
        (await app.inject({ method: "GET", url: "/v1/webhooks", headers: bearer(admin) })).json(),
      ),
    ).not.toContain(secret);

    const run = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(admin),
        payload: { assistant: "approval", input: "ship?" },
      })
    ).json();
    const parked = await until(() => hooks.received[0], "the park's delivery");
    const body = JSON.parse(parked.body);
    expect(body).toMatchObject({ type: "run.parked", data: { runId: run.id, status: "waiting" } });
    expect(parked.headers[WEBHOOK_HEADERS.id]).toBe(body.id);
    const check = (raw: string, key = secret) =>
      verifyWebhook({
        secret: key,
        body: raw,
        timestamp: parked.headers[WEBHOOK_HEADERS.timestamp] as string,
        signature: parked.headers[WEBHOOK_HEADERS.signature] as string,
      });
    expect(check(parked.body)).toBe(true);
    expect(check(parked.body.replace("waiting", "succeeded"))).toBe(false);
    expect(check(parked.body, "whsec_another")).toBe(false);
    expect(
      verifyWebhook({
        secret,
        body: parked.body,
        timestamp: parked.headers[WEBHOOK_HEADERS.timestamp] as string,
        signature: parked.headers[WEBHOOK_HEADERS.signature] as string,
        now: Date.now() + 3_600_000,
      }),
    ).toBe(false);

    await app.inject({ method: "POST", url: `/v1/runs/${run.id}/cancel`, headers: bearer(admin) });
    const ended = await until(() => hooks.received[1], "the end's delivery");
    expect(JSON.parse(ended.body)).toMatchObject({
      type: "run.ended",
      data: { runId: run.id, status: "cancelled" },
    });

    const deliveries = await until(async () => {
      const listed = (
        await app.inject({
          method: "GET",
          url: `/v1/webhooks/${webhook.id}/deliveries`,
          headers: bearer(admin),
        })
      ).json();
      return listed.items.every((d: { status: string }) => d.status === "delivered") &&
        listed.items.length === 2
        ? listed
        : undefined;
    }, "both deliveries recorded");
    expect(deliveries.items.map((d: { event: string; attempts: number }) => [d.event, d.attempts])).toEqual([
      ["run.parked", 1],
      ["run.ended", 1],
    ]);
  });

  it("a receiver that fails twice gets the delivery on the third attempt, the same delivery id each time", async () => {
    const { runtime, app } = await serverOn(await memoryDb(), true);
    const admin = await mint(runtime.store.access as AccessStoreV1, { grants: ["*"] });
    const hooks = await receiver(2);
    const { webhook } = (
      await app.inject({
        method: "POST",
        url: "/v1/webhooks",
        headers: bearer(admin),
        payload: { url: hooks.url, events: ["run.ended"] },
      })
    ).json();
    const run = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(admin),
        payload: { assistant: "echo", input: "hi" },
      })
    ).json();
    const delivered = await until(async () => {
      const listed = (
        await app.inject({
          method: "GET",
          url: `/v1/webhooks/${webhook.id}/deliveries`,
          headers: bearer(admin),
        })
      ).json();
      return listed.items[0]?.status === "delivered" ? listed.items[0] : undefined;
    }, "the delivery");
    expect(delivered).toMatchObject({ runId: run.id, attempts: 3, lastError: null });
    expect(hooks.received).toHaveLength(3);
    expect(new Set(hooks.received.map((r) => r.headers[WEBHOOK_HEADERS.id]))).toEqual(
      new Set([delivered.id]),
    );
    expect(new Set(hooks.received.map((r) => r.body)).size).toBe(1);
  });

  it("by default refuses to deliver to an internal address (here loopback): failed at once, no request made", async () => {
    const { runtime, app } = await serverOn(await memoryDb(), true, false);
    const admin = await mint(runtime.store.access as AccessStoreV1, { grants: ["*"] });
    const hooks = await receiver();
    const { webhook } = (
      await app.inject({
        method: "POST",
        url: "/v1/webhooks",
        headers: bearer(admin),
        payload: { url: hooks.url, events: ["run.ended"] },
      })
    ).json();
    await app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: bearer(admin),
      payload: { assistant: "echo", input: "hi" },
    });
    const failed = await until(async () => {
      const listed = (
        await app.inject({
          method: "GET",
          url: `/v1/webhooks/${webhook.id}/deliveries`,
          headers: bearer(admin),
        })
      ).json();
      return listed.items[0]?.status === "failed" ? listed.items[0] : undefined;
    }, "the refused delivery");
    expect(failed.lastError).toBe("refused: 127.0.0.1 is an internal address");
    expect(hooks.received).toEqual([]);
  });

  it("a run that ended while no dispatcher ran (its process gone) is still delivered by the next one: the outbox", async () => {
    const db = await memoryDb();
    const hooks = await receiver();
    const first = await serverOn(db, false);
    const admin = await mint(first.runtime.store.access as AccessStoreV1, { grants: ["*"] });
    await first.app.inject({
      method: "POST",
      url: "/v1/webhooks",
      headers: bearer(admin),
      payload: { url: hooks.url, events: ["run.ended"] },
    });
    const run = await first.runtime.submit("echo", Session.fromUserMessage("hi"));
    expect((await first.runtime.wait(run.id)).status).toBe("succeeded");
    // The process that ran it stops before any delivery was sent.
    await first.app.close();
    await first.runtime.close({ drain: false });
    expect(hooks.received).toEqual([]);

    await serverOn(db, true);
    const delivered = await until(() => hooks.received[0], "the delivery from the outbox");
    expect(JSON.parse(delivered.body)).toMatchObject({
      type: "run.ended",
      data: { runId: run.id, status: "succeeded" },
    });
  });

  it("another tenant's runs are never delivered to a tenant's webhook, and its webhooks and deliveries are 404 to them", async () => {
    const { runtime, app } = await serverOn(await memoryDb(), true);
    const access = runtime.store.access as AccessStoreV1;
    const mine = await mint(access, { grants: ["*"] });
    const theirs = await mint(access, { tenantId: "other", grants: ["*"] });
    const hooks = await receiver();
    const { webhook } = (
      await app.inject({
        method: "POST",
        url: "/v1/webhooks",
        headers: bearer(mine),
        payload: { url: hooks.url, events: ["run.ended"] },
      })
    ).json();
    const foreign = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(theirs),
        payload: { assistant: "echo", input: "x" },
      })
    ).json();
    const own = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(mine),
        payload: { assistant: "echo", input: "y" },
      })
    ).json();
    await runtime.wait(foreign.id, { tenantId: "other" });
    await until(() => hooks.received[0], "the own run's delivery");
    // The foreign run ended first; a tick later still only the own run is delivered.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hooks.received.map((r) => JSON.parse(r.body).data.runId)).toEqual([own.id]);
    for (const url of [`/v1/webhooks/${webhook.id}`, `/v1/webhooks/${webhook.id}/deliveries`]) {
      const response = await app.inject({ method: "GET", url, headers: bearer(theirs) });
      expect([response.statusCode, response.json().error.code]).toEqual([404, "webhook_not_found"]);
    }
    expect(
      (await app.inject({ method: "DELETE", url: `/v1/webhooks/${webhook.id}`, headers: bearer(theirs) }))
        .statusCode,
    ).toBe(404);
    expect(
      (await app.inject({ method: "GET", url: "/v1/webhooks", headers: bearer(theirs) })).json().items,
    ).toEqual([]);
  });

  it("a URL that is not http(s) is 400 and nothing is stored", async () => {
    const { runtime, app } = await serverOn(await memoryDb(), false);
    const admin = await mint(runtime.store.access as AccessStoreV1, { grants: ["*"] });
    for (const url of ["ftp://127.0.0.1/hooks", "file:///etc/passwd", "not a url"]) {
      const refused = await app.inject({
        method: "POST",
        url: "/v1/webhooks",
        headers: bearer(admin),
        payload: { url },
      });
      expect(refused.statusCode, url).toBe(400);
    }
    expect(
      (await app.inject({ method: "GET", url: "/v1/webhooks", headers: bearer(admin) })).json().items,
    ).toEqual([]);
  });
});
