import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { describe, expect, it } from "vitest";
import { bearer, mint, serverHarness } from "./testing/harness.js";

const harness = serverHarness();

async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("schedules over HTTP", () => {
  it("create, read, list, change and delete a schedule; its firings start runs of the assistant; each mutation is audited", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const access = runtime.store.access as AccessStoreV1;
    const admin = await mint(access, { grants: ["*"] });
    const created = await app.inject({
      method: "POST",
      url: "/v1/schedules",
      headers: bearer(admin),
      payload: { assistant: "echo", input: "tick", cron: "* * * * * *", metadata: { team: "ops" } },
    });
    expect(created.statusCode).toBe(201);
    const schedule = created.json();
    expect(schedule).toMatchObject({
      assistant: "echo",
      input: "tick",
      cron: "* * * * * *",
      timezone: "UTC",
      enabled: true,
      lastRunId: null,
    });
    expect(Date.parse(schedule.nextFireAt)).toBeGreaterThan(Date.parse(schedule.createdAt) - 1000);

    // The worker's tick fires it: a run of echo on the schedule's input, labelled with the schedule.
    const fired = await until(async () => {
      const read = (
        await app.inject({ method: "GET", url: `/v1/schedules/${schedule.id}`, headers: bearer(admin) })
      ).json();
      return read.lastRunId ? read : undefined;
    }, "the first firing");
    const run = (
      await app.inject({ method: "GET", url: `/v1/runs/${fired.lastRunId}`, headers: bearer(admin) })
    ).json();
    expect(run).toMatchObject({ workflow: "echo", metadata: { team: "ops", schedule: { id: schedule.id } } });
    expect(run.idempotencyKey).toBe(`schedule:${schedule.id}:${Date.parse(fired.lastFiredAt)}`);

    const listed = (await app.inject({ method: "GET", url: "/v1/schedules", headers: bearer(admin) })).json();
    expect(listed.items.map((s: { id: string }) => s.id)).toEqual([schedule.id]);

    const paused = await app.inject({
      method: "PATCH",
      url: `/v1/schedules/${schedule.id}`,
      headers: bearer(admin),
      payload: { enabled: false, cron: "0 7 * * 1-5", timezone: "Europe/Berlin" },
    });
    expect(paused.statusCode).toBe(200);
    expect(paused.json()).toMatchObject({ enabled: false, nextFireAt: null, timezone: "Europe/Berlin" });
    const resumed = (
      await app.inject({
        method: "PATCH",
        url: `/v1/schedules/${schedule.id}`,
        headers: bearer(admin),
        payload: { enabled: true },
      })
    ).json();
    // 07:00 in Berlin is 05:00 or 06:00 UTC.
    expect(new Date(resumed.nextFireAt).getUTCHours()).toBeGreaterThanOrEqual(5);
    expect(new Date(resumed.nextFireAt).getUTCHours()).toBeLessThanOrEqual(6);

    const deleted = await app.inject({
      method: "DELETE",
      url: `/v1/schedules/${schedule.id}`,
      headers: bearer(admin),
    });
    expect(deleted.statusCode).toBe(204);
    const gone = await app.inject({
      method: "GET",
      url: `/v1/schedules/${schedule.id}`,
      headers: bearer(admin),
    });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.code).toBe("schedule_not_found");

    const audit = (await access.listAudit({ tenantId: "default", action: "schedule.write", limit: 500 }))
      .items;
    expect(audit.map((entry) => [entry.outcome, entry.resourceId])).toEqual([
      ["allowed", schedule.id],
      ["allowed", schedule.id],
      ["allowed", schedule.id],
      ["allowed", schedule.id],
    ]);
    // The firings are audited too, as the schedule creating runs.
    const firings = (await access.listAudit({ tenantId: "default", action: "run.create", limit: 500 })).items;
    expect(firings.some((entry) => entry.actor === `schedule:${schedule.id}`)).toBe(true);
  });

  it("a bad cron expression or time zone is 400 invalid_cron, an undeployed assistant 404, and nothing is stored", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const admin = await mint(runtime.store.access as AccessStoreV1, { grants: ["*"] });
    for (const payload of [
      { assistant: "echo", input: "x", cron: "every day at noon" },
      { assistant: "echo", input: "x", cron: "61 * * * *" },
      { assistant: "echo", input: "x", cron: "0 7 * * *", timezone: "Mars/Olympus" },
    ]) {
      const refused = await app.inject({
        method: "POST",
        url: "/v1/schedules",
        headers: bearer(admin),
        payload,
      });
      expect(refused.statusCode, JSON.stringify(payload)).toBe(400);
      expect(refused.json().error.code).toBe("invalid_cron");
    }
    const unknown = await app.inject({
      method: "POST",
      url: "/v1/schedules",
      headers: bearer(admin),
      payload: { assistant: "nope", input: "x", cron: "0 7 * * *" },
    });
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, "unknown_plan"]);
    expect(
      (await app.inject({ method: "GET", url: "/v1/schedules", headers: bearer(admin) })).json().items,
    ).toEqual([]);
  });

  it("another tenant's or project's schedule is 404 for every verb, and a token without schedule.write is 403", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const access = runtime.store.access as AccessStoreV1;
    const owner = await mint(access, { grants: ["*"], projectId: "alpha" });
    const stranger = await mint(access, { tenantId: "other", grants: ["*"] });
    const otherProject = await mint(access, { grants: ["*"], projectId: "beta" });
    const reader = await mint(access, { grants: ["schedule.read"] });
    const schedule = (
      await app.inject({
        method: "POST",
        url: "/v1/schedules",
        headers: bearer(owner),
        payload: { assistant: "echo", input: "x", cron: "0 7 * * *" },
      })
    ).json();
    expect(schedule.projectId).toBe("alpha");
    for (const token of [stranger, otherProject]) {
      for (const [method, payload] of [
        ["GET", undefined],
        ["PATCH", { enabled: false }],
        ["DELETE", undefined],
      ] as const) {
        const response = await app.inject({
          method,
          url: `/v1/schedules/${schedule.id}`,
          headers: bearer(token),
          ...(payload ? { payload } : {}),
        });
        expect(response.statusCode, method).toBe(404);
      }
      expect(
        (await app.inject({ method: "GET", url: "/v1/schedules", headers: bearer(token) })).json().items,
      ).toEqual([]);
    }
    expect(
      (await app.inject({ method: "GET", url: `/v1/schedules/${schedule.id}`, headers: bearer(reader) }))
        .statusCode,
    ).toBe(200);
    const denied = await app.inject({
      method: "PATCH",
      url: `/v1/schedules/${schedule.id}`,
      headers: bearer(reader),
      payload: { enabled: false },
    });
    expect(denied.statusCode).toBe(403);
    expect(
      (
        await app.inject({ method: "GET", url: `/v1/schedules/${schedule.id}`, headers: bearer(owner) })
      ).json().enabled,
    ).toBe(true);
  });
});
