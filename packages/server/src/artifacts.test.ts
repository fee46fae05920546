import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { filesystemArtifactStore } from "@openrath/runtime-durable";
import { afterEach, describe, expect, it } from "vitest";
import { serverHarness } from "./testing/harness.js";

const harness = serverHarness();
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("artifacts over HTTP", () => {
  it("streams the caller's tenant's artifact by digest, and another tenant's is not found", async () => {
    const dir = await mkdtemp(join(tmpdir(), "openrath-server-artifacts-"));
    dirs.push(dir);
    const artifacts = filesystemArtifactStore({ root: dir });
    const body = Buffer.from("x".repeat(300_000));
    const mine = await artifacts.put("default", body);
    const theirs = await artifacts.put("acme", Buffer.from("acme's secret"));
    const { app } = await harness.setup({ artifacts });
    const read = await app.inject({ method: "GET", url: `/v1/artifacts/${mine.digest}` });
    expect(read.statusCode).toBe(200);
    expect(read.headers["content-length"]).toBe(String(body.length));
    expect(read.rawPayload.equals(body)).toBe(true);
    const foreign = await app.inject({ method: "GET", url: `/v1/artifacts/${theirs.digest}` });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe("artifact_not_found");
    const bad = await app.inject({ method: "GET", url: "/v1/artifacts/not-a-digest" });
    expect(bad.json().error.code).toBe("invalid_request");
    expect((await app.inject({ method: "GET", url: "/health/ready" })).json().checks).toEqual({
      store: "ok",
      artifacts: "ok",
    });
  });

  it("answers not_supported without an artifact store", async () => {
    const { app } = await harness.setup();
    const response = await app.inject({ method: "GET", url: `/v1/artifacts/${"a".repeat(64)}` });
    expect(response.statusCode).toBe(501);
    expect(response.json().error.code).toBe("not_supported");
  });
});
