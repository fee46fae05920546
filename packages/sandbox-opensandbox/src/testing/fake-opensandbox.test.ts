import { request as httpRequest } from "node:http";
import { serviceAvailable } from "@openrath/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapWorks, type FakeOpenSandbox, startFakeOpenSandbox } from "./fake-opensandbox.js";

// The fake's own fidelity to backends-wire.md §3.1, checked on the raw wire.

const bubblewrap = await serviceAvailable("bubblewrap", bwrapWorks);

const json = { "content-type": "application/json" };

// biome-ignore lint/suspicious/noExplicitAny: raw wire bodies, checked field by field below.
type Wire = any;
/** A response's JSON body, loosely typed for field-by-field assertions. */
const wire = (response: Response): Promise<Wire> => response.json();
const createBody = {
  image: { uri: "python:3.12" },
  entrypoint: ["tail", "-f", "/dev/null"],
  resourceLimits: { cpu: "500m", memory: "512Mi" },
  env: { A: "1" },
  metadata: { team: "rath" },
  timeout: 600,
};

interface Frame {
  type: string;
  text?: string;
  timestamp?: number;
  execution_time?: number;
  execution_count?: number;
  results?: Record<string, unknown>;
  error?: { ename: string; evalue: string; traceback: string[] };
}

/** Splits an execd stream into its frames, checking the framing on the way. */
function frames(text: string): Frame[] {
  expect(text.endsWith("\n\n"), "a stream ends with a complete frame").toBe(true);
  return text
    .split("\n\n")
    .filter((part) => part !== "")
    .map((part) => {
      expect(part.startsWith("data:"), "frames have no data: prefix").toBe(false);
      expect(part.includes("\n"), "one JSON object per frame, on one line").toBe(false);
      return JSON.parse(part) as Frame;
    });
}

/** The frames without keep-alive pings. */
const content = (all: Frame[]) => all.filter((f) => f.type !== "ping");

describe("fake OpenSandbox: lifecycle", () => {
  let fake: FakeOpenSandbox;
  beforeAll(async () => {
    fake = await startFakeOpenSandbox({ apiKey: "key", maxTimeoutSeconds: 86_400, pendingPolls: 2 });
  });
  afterAll(async () => {
    await fake.close();
  });
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${fake.url}/v1${path}`, {
      ...init,
      headers: { "OPEN-SANDBOX-API-KEY": "key", ...json, ...init.headers },
    });
  const create = async (body: unknown = createBody) => {
    const response = await api("/sandboxes", { method: "POST", body: JSON.stringify(body) });
    return { response, body: (await wire(response)) as Record<string, unknown> };
  };

  it("health answers without a key at /health, and only there (not under /v1)", async () => {
    const response = await fetch(`${fake.url}/health`);
    expect(response.status).toBe(200);
    expect(await wire(response)).toEqual({ status: "healthy" });
    const prefixed = await fetch(`${fake.url}/v1/health`, { headers: { "OPEN-SANDBOX-API-KEY": "key" } });
    expect(prefixed.status).toBe(404);
  });

  it("create answers 202 with a Location header naming the new sandbox", async () => {
    const { response, body } = await create();
    expect(response.status).toBe(202);
    expect(response.headers.get("location")).toBe(`/v1/sandboxes/${body.id}`);
    await api(`/sandboxes/${body.id}`, { method: "DELETE" });
  });

  it("E1: a missing or wrong API key is a 401 with its code", async () => {
    const missing = await fetch(`${fake.url}/v1/sandboxes`);
    expect(missing.status).toBe(401);
    expect(await wire(missing)).toEqual({
      code: "MISSING_API_KEY",
      message: "Authentication credentials are missing. Provide API key via OPEN-SANDBOX-API-KEY header.",
    });
    const wrong = await fetch(`${fake.url}/v1/sandboxes`, { headers: { "OPEN-SANDBOX-API-KEY": "nope" } });
    expect(wrong.status).toBe(401);
    expect((await wire(wrong)).code).toBe("INVALID_API_KEY");
    expect(wrong.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("create answers 202 Pending with the documented fields and no image", async () => {
    const before = Date.now();
    const { response, body } = await create();
    expect(response.status).toBe(202);
    expect(response.headers.get("x-request-id")).toBeTruthy();
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body).not.toHaveProperty("image");
    expect(body.status).toMatchObject({ state: "Pending" });
    expect(body.entrypoint).toEqual(["tail", "-f", "/dev/null"]);
    expect(body.metadata).toEqual({ team: "rath" });
    const created = Date.parse(body.createdAt as string);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(body.expiresAt as string) - created).toBe(600_000);
  });

  it("GET turns Running after N polls and includes image.uri; renew, endpoint, delete", async () => {
    const { body } = await create({ ...createBody, resource_limits: undefined });
    const id = body.id as string;
    const first = await wire(await api(`/sandboxes/${id}`));
    expect(first.status.state).toBe("Pending");
    expect(first.image).toEqual({ uri: "python:3.12" });
    const second = await wire(await api(`/sandboxes/${id}`));
    expect(second.status).toMatchObject({ state: "Running", reason: "CONTAINER_RUNNING" });

    const endpoint = await api(`/sandboxes/${id}/endpoints/44772?use_server_proxy=false`);
    expect(endpoint.status).toBe(200);
    const { endpoint: address } = await wire(endpoint);
    expect(address).toMatch(/^127\.0\.0\.1:\d+\/proxy\/44772$/);
    expect((await fetch(`http://${address}/ping`)).status).toBe(200);
    const proxied = await wire(await api(`/sandboxes/${id}/endpoints/44772?use_server_proxy=true`));
    expect(proxied.endpoint).toBe(`${fake.domain}/sandboxes/${id}/proxy/44772`);
    expect((await fetch(`http://${proxied.endpoint}/ping`)).status).toBe(200);

    const later = new Date(Date.now() + 3_600_000).toISOString();
    const renewed = await api(`/sandboxes/${id}/renew-expiration`, {
      method: "POST",
      body: JSON.stringify({ expiresAt: later }),
    });
    expect(renewed.status).toBe(200);
    expect(await wire(renewed)).toEqual({ expiresAt: later });
    expect((await wire(await api(`/sandboxes/${id}`))).expiresAt).toBe(later);

    const deleted = await api(`/sandboxes/${id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    expect((await api(`/sandboxes/${id}`)).status).toBe(404);
  });

  it("E2: unknown ids are 404 DOCKER::SANDBOX_NOT_FOUND for GET, DELETE and renew", async () => {
    const id = "00000000-0000-4000-8000-000000000000";
    for (const [path, init] of [
      [`/sandboxes/${id}`, {}],
      [`/sandboxes/${id}`, { method: "DELETE" }],
      [
        `/sandboxes/${id}/renew-expiration`,
        { method: "POST", body: JSON.stringify({ expiresAt: new Date().toISOString() }) },
      ],
    ] as const) {
      const response = await api(path, init);
      expect(response.status).toBe(404);
      expect(await wire(response)).toEqual({
        code: "DOCKER::SANDBOX_NOT_FOUND",
        message: `Sandbox ${id} not found.`,
      });
    }
  });

  it("E3: body validation is FastAPI's 422 {detail: [...]}", async () => {
    for (const body of [
      { image: { uri: "x" }, resourceLimits: {} },
      { ...createBody, timeout: 30 },
      { ...createBody, entrypoint: [] },
      { entrypoint: ["x"], resourceLimits: {} },
    ]) {
      const { response, body: answer } = await create(body);
      expect(response.status).toBe(422);
      expect(Array.isArray(answer.detail)).toBe(true);
      const first = (answer.detail as { loc: unknown[]; msg: string; type: string }[])[0]!;
      expect(first.loc[0]).toBe("body");
      expect(typeof first.msg).toBe("string");
    }
    const broken = await api("/sandboxes", { method: "POST", body: "{not json" });
    expect(broken.status).toBe(422);
    expect((await wire(broken)).detail[0].type).toBe("json_invalid");
  });

  it("E4: a timeout above the maximum is 400 SANDBOX::INVALID_PARAMETER", async () => {
    const { response, body } = await create({ ...createBody, timeout: 86_401 });
    expect(response.status).toBe(400);
    expect(body.code).toBe("SANDBOX::INVALID_PARAMETER");
  });

  it("E5: renewing into the past is 400 DOCKER::INVALID_EXPIRATION", async () => {
    const { body } = await create();
    const response = await api(`/sandboxes/${body.id}/renew-expiration`, {
      method: "POST",
      body: JSON.stringify({ expiresAt: new Date(Date.now() - 1000).toISOString() }),
    });
    expect(response.status).toBe(400);
    expect((await wire(response)).code).toBe("DOCKER::INVALID_EXPIRATION");
  });

  it("E6: scripted provisioning failure shows Failed with PROVISIONING_ERROR", async () => {
    fake.control.nextSandbox({ failProvisioning: { afterPolls: 1, message: "pull failed" } });
    const { body } = await create();
    const got = await wire(await api(`/sandboxes/${body.id}`));
    expect(got.status).toMatchObject({
      state: "Failed",
      reason: "PROVISIONING_ERROR",
      message: "pull failed",
    });
  });

  it("E7: pausing a sandbox that is not running is 409 DOCKER::SANDBOX_NOT_RUNNING", async () => {
    const { body } = await create();
    const response = await api(`/sandboxes/${body.id}/pause`, { method: "POST" });
    expect(response.status).toBe(409);
    expect((await wire(response)).code).toBe("DOCKER::SANDBOX_NOT_RUNNING");
    await api(`/sandboxes/${body.id}`);
    await api(`/sandboxes/${body.id}`);
    expect((await api(`/sandboxes/${body.id}/pause`, { method: "POST" })).status).toBe(202);
    expect((await api(`/sandboxes/${body.id}/resume`, { method: "POST" })).status).toBe(202);
  });

  it("lists newest first with the five pagination keys and filters by state", async () => {
    const first = await api("/sandboxes?pageSize=1&page=1");
    const page = await wire(first);
    expect(Object.keys(page.pagination).sort()).toEqual([
      "hasNextPage",
      "page",
      "pageSize",
      "totalItems",
      "totalPages",
    ]);
    expect(page.items.length).toBe(1);
    expect(page.pagination.hasNextPage).toBe(true);
    const newest = fake.created.filter((id) => fake.sandboxes.has(id)).at(-1);
    expect(page.items[0].id).toBe(newest);
    const failed = await wire(await api("/sandboxes?state=Failed"));
    expect(failed.items.every((s: { status: { state: string } }) => s.status.state === "Failed")).toBe(true);
    expect(failed.items.length).toBeGreaterThan(0);
    const byMetadata = await wire(await api(`/sandboxes?metadata=${encodeURIComponent("team=nobody")}`));
    expect(byMetadata.pagination.totalItems).toBe(0);
  });

  it("scripted faults answer the chosen route", async () => {
    fake.control.fail({
      method: "GET",
      path: /^\/v1\/sandboxes$/,
      status: 502,
      body: { code: "X", message: "y" },
    });
    const response = await api("/sandboxes");
    expect(response.status).toBe(502);
    expect(await wire(response)).toEqual({ code: "X", message: "y" });
    expect((await api("/sandboxes")).status).toBe(200);
  });
});

describe.skipIf(!bubblewrap.available)(`fake OpenSandbox: execd (${bubblewrap.reason})`, () => {
  let fake: FakeOpenSandbox;
  let base = "";
  let id = "";
  beforeAll(async () => {
    fake = await startFakeOpenSandbox({
      createState: "Running",
      gracefulDelayMs: 50,
      execdAccessToken: "tok",
    });
    const created = await wire(
      await fetch(`${fake.url}/v1/sandboxes`, {
        method: "POST",
        headers: json,
        body: JSON.stringify(createBody),
      }),
    );
    id = created.id;
    const { endpoint } = await wire(await fetch(`${fake.url}/v1/sandboxes/${id}/endpoints/44772`));
    base = `http://${endpoint}`;
  });
  afterAll(async () => {
    await fake.close();
  });
  const execd = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { "X-EXECD-ACCESS-TOKEN": "tok", ...init.headers } });
  const command = async (body: unknown) => {
    const response = await execd("/command", { method: "POST", headers: json, body: JSON.stringify(body) });
    return { response, text: await response.text() };
  };

  it("X4: without the access token every route is 401 with execd's {error} body", async () => {
    for (const path of ["/ping", "/files/info?path=/workspace"]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(401);
      expect(await wire(response)).toEqual({
        error: "Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN",
      });
    }
  });

  it("ping fails K times when scripted, then answers 200 with an empty body", async () => {
    fake.control.failPings(id, 2);
    expect((await execd("/ping")).status).toBe(503);
    expect((await execd("/ping")).status).toBe(503);
    const ok = await execd("/ping");
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("");
  });

  it("9: /command streams {json}\\n\\n frames: init, one event per line, complete", async () => {
    const { response, text } = await command({
      command: "printf 'a\\nb\\n'; echo e >&2",
      cwd: "/workspace",
      timeout: 5000,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const all = frames(text);
    for (const frame of all) expect(typeof frame.timestamp).toBe("number");
    expect(all.some((f) => f.type === "ping" && f.text === "pong")).toBe(true);
    const events = content(all);
    expect(events[0]).toMatchObject({ type: "init" });
    expect(events[0]!.text).toMatch(/^[0-9a-f-]{36}$/);
    expect(events.filter((f) => f.type === "stdout").map((f) => f.text)).toEqual(["a", "b"]);
    expect(events.filter((f) => f.type === "stderr").map((f) => f.text)).toEqual(["e"]);
    const last = events.at(-1)!;
    expect(last.type).toBe("execution_complete");
    expect(typeof last.execution_time).toBe("number");
  });

  it("empty lines come as \\n and a last partial line is flushed", async () => {
    const { text } = await command({ command: "printf 'x\\n\\ny'" });
    expect(
      content(frames(text))
        .filter((f) => f.type === "stdout")
        .map((f) => f.text),
    ).toEqual(["x", "\n", "y"]);
  });

  it("a slow reader still gets every line before the terminal event, as execd's last read of its log file gives", async () => {
    // The 3 MB line overruns the response's buffers while nobody reads, so the fake pauses the
    // command's output; what comes after it (and the exit) arrives in that pause. Execd reads its
    // whole log file after the command exits and only then sends the terminal event.
    const url = new URL(`${base}/command`);
    const body = JSON.stringify({
      command: "head -c 3000000 /dev/zero | tr '\\000' x; echo; sleep 0.3; echo after; echo err >&2",
    });
    const text = await new Promise<string>((resolve, reject) => {
      const request = httpRequest(
        url,
        { method: "POST", headers: { ...json, "X-EXECD-ACCESS-TOKEN": "tok" } },
        (response) => {
          response.pause();
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
          response.on("error", reject);
          setTimeout(() => response.resume(), 1500);
        },
      );
      request.on("error", reject);
      request.end(body);
    });
    const events = content(frames(text));
    expect(events.at(-1)?.type).toBe("execution_complete");
    const stdout = events.filter((f) => f.type === "stdout").map((f) => f.text);
    expect(stdout.map((line) => (line!.length > 10 ? line!.length : line))).toEqual([3_000_000, "after"]);
    expect(events.filter((f) => f.type === "stderr").map((f) => f.text)).toEqual(["err"]);
  });

  it("10: a non-zero exit is an error event and no execution_complete", async () => {
    const { text } = await command({ command: "exit 3" });
    const events = content(frames(text));
    expect(events.some((f) => f.type === "execution_complete")).toBe(false);
    expect(events.at(-1)).toMatchObject({
      type: "error",
      error: { ename: "CommandExecError", evalue: "3", traceback: ["exit status 3"] },
    });
  });

  it("a server-side timeout kills with evalue -1 and signal: killed", async () => {
    const { text } = await command({ command: "sleep 30", timeout: 300 });
    expect(content(frames(text)).at(-1)).toMatchObject({
      type: "error",
      error: { evalue: "-1", traceback: ["signal: killed"] },
    });
  });

  it("11: DELETE /command?id= interrupts a running command (evalue -1); X3 errors", async () => {
    const response = await execd("/command", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ command: "sleep 30" }),
    });
    const reader = response.body!.getReader();
    let text = "";
    while (!text.includes('"init"')) text += new TextDecoder().decode((await reader.read()).value);
    const commandId = /"text":"([^"]+)"/.exec(text)![1]!;
    const interrupt = await execd(`/command?id=${commandId}`, { method: "DELETE" });
    expect(interrupt.status).toBe(200);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(content(frames(text)).at(-1)).toMatchObject({
      type: "error",
      error: { ename: "CommandExecError", evalue: "-1", traceback: ["signal: terminated"] },
    });
    const again = await execd(`/command?id=${commandId}`, { method: "DELETE" });
    expect(again.status).toBe(500);
    expect((await wire(again)).message).toMatch(/is not running/);
    const missing = await execd("/command", { method: "DELETE" });
    expect(missing.status).toBe(400);
    expect((await wire(missing)).code).toBe("MISSING_QUERY");
    const unknown = await execd("/command?id=nope", { method: "DELETE" });
    expect(unknown.status).toBe(500);
    expect(await wire(unknown)).toMatchObject({
      code: "RUNTIME_ERROR",
      message: expect.stringMatching(/no such session/),
    });
  });

  it("an interrupt signals the process group only: a setsid descendant survives, as under execd", async () => {
    const marker = `openrath-fake-setsid-${process.pid}`;
    const response = await execd("/command", {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        command: `setsid sh -c 'sleep 30' ${marker} & sleep 0.3; echo ready; sleep 30`,
      }),
    });
    const reader = response.body!.getReader();
    let text = "";
    // Once "ready" arrives the descendant has left the group.
    while (!text.includes('"ready"')) text += new TextDecoder().decode((await reader.read()).value);
    const commandId = /"text":"([^"]+)"/.exec(text)![1]!;
    expect((await execd(`/command?id=${commandId}`, { method: "DELETE" })).status).toBe(200);
    await reader.cancel();
    const scan = await command({
      command: `for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done | grep -c "$M" || true`,
      // A bracket in the pattern keeps grep's own command line from matching it.
      envs: { M: `[${marker[0]}]${marker.slice(1)}` },
    });
    const lines = content(frames(scan.text))
      .filter((f) => f.type === "stdout")
      .map((f) => f.text);
    // The grep's own shell does not hold the marker in its command line; the survivor does.
    expect(
      Number(lines[0]),
      "the setsid descendant died with its group; real execd leaves it",
    ).toBeGreaterThan(0);
  });

  it("12: background commands answer at once; status and logs follow", async () => {
    const { text } = await command({
      command: "echo one; while [ ! -e /workspace/go ]; do sleep 0.05; done; echo two >&2",
      background: true,
    });
    const events = content(frames(text));
    expect(events.map((f) => f.type)).toEqual(["init", "execution_complete"]);
    const commandId = events[0]!.text!;
    const running = await wire(await execd(`/command/status/${commandId}`));
    expect(running).toMatchObject({ id: commandId, running: true });
    // Go's omitempty: absent, not null, while the command runs.
    expect(running).not.toHaveProperty("exit_code");
    expect(running).not.toHaveProperty("finished_at");
    const unknown = await execd("/command/no-such-id/logs?cursor=0");
    expect(unknown.status).toBe(400);
    expect(await wire(unknown)).toMatchObject({ code: "INVALID_REQUEST_BODY" });
    await command({ command: "touch /workspace/go" });
    let status = await wire(await execd(`/command/status/${commandId}`));
    for (let i = 0; i < 100 && status.running; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = await wire(await execd(`/command/status/${commandId}`));
    }
    expect(status).toMatchObject({ running: false, exit_code: 0 });
    expect(status.content).toContain("echo one");
    const logs = await execd(`/command/${commandId}/logs?cursor=0`);
    expect(logs.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await logs.text()).toBe("one\ntwo\n");
    expect(logs.headers.get("execd-commands-tail-cursor")).toBe("2");
    expect(await (await execd(`/command/${commandId}/logs?cursor=1`)).text()).toBe("two\n");
    expect((await execd("/command/status/nope")).status).toBe(404);
  });

  it("X2: a non-JSON body or a missing command is 400 INVALID_REQUEST_BODY before any stream", async () => {
    for (const body of ["{", JSON.stringify({ cwd: "/" })]) {
      const response = await execd("/command", { method: "POST", headers: json, body });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/json");
      expect((await wire(response)).code).toBe("INVALID_REQUEST_BODY");
    }
    const { response } = await command({ command: "true", cwd: "/no/such/dir" });
    expect(response.status).toBe(400);
  });

  it("13: upload (metadata as a file part), download and info", async () => {
    const form = new FormData();
    form.append("metadata", new Blob([JSON.stringify({ path: "/workspace/dir/x.txt" })]), "metadata");
    form.append("file", new Blob([new Uint8Array([0, 1, 2, 255])]), "x.txt");
    const upload = await execd("/files/upload", { method: "POST", body: form });
    expect(upload.status).toBe(200);
    expect(await upload.text()).toBe("");
    const download = await execd("/files/download?path=/workspace/dir/x.txt");
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("application/octet-stream");
    expect(download.headers.get("content-disposition")).toBe('attachment; filename="x.txt"');
    expect(Array.from(new Uint8Array(await download.arrayBuffer()))).toEqual([0, 1, 2, 255]);
    const ranged = await execd("/files/download?path=/workspace/dir/x.txt", {
      headers: { Range: "bytes=1-2" },
    });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe("bytes 1-2/4");
    const info = await wire(await execd("/files/info?path=/workspace/dir/x.txt&path=/workspace/dir"));
    expect(Object.keys(info)).toEqual(["/workspace/dir/x.txt", "/workspace/dir"]);
    expect(info["/workspace/dir/x.txt"]).toMatchObject({
      path: "/workspace/dir/x.txt",
      type: "file",
      size: 4,
    });
    expect(String(info["/workspace/dir/x.txt"].mode)).toMatch(/^[0-7]{3}$/);
    expect(info["/workspace/dir"].type).toBe("directory");
    expect(await wire(await execd("/files/info"))).toEqual({});
    const cat = await command({ command: "od -An -tu1 /workspace/dir/x.txt" });
    expect(
      content(frames(cat.text))
        .find((f) => f.type === "stdout")!
        .text!.trim()
        .split(/\s+/),
    ).toEqual(["0", "1", "2", "255"]);
  });

  it("X1, X5: download and upload errors", async () => {
    const missing = await execd("/files/download?path=/nope");
    expect(missing.status).toBe(404);
    expect((await wire(missing)).code).toBe("FILE_NOT_FOUND");
    const noPath = await execd("/files/download");
    expect(noPath.status).toBe(400);
    expect((await wire(noPath)).code).toBe("MISSING_QUERY");
    const plainField = new FormData();
    plainField.append("metadata", JSON.stringify({ path: "/workspace/y.txt" }));
    plainField.append("file", new Blob(["y"]), "y.txt");
    for (const form of [
      plainField,
      (() => {
        const onlyFile = new FormData();
        onlyFile.append("file", new Blob(["y"]), "y.txt");
        return onlyFile;
      })(),
    ]) {
      const response = await execd("/files/upload", { method: "POST", body: form });
      expect(response.status).toBe(400);
      expect((await wire(response)).code).toBe("INVALID_FILE_METADATA");
    }
  });

  it("14: search is recursive over files only with a base-name glob; directories/list shows directories", async () => {
    await command({
      command: "mkdir -p /workspace/s/t && touch /workspace/s/a.py /workspace/s/t/b.py /workspace/s/t/c.txt",
    });
    const search = await wire(await execd("/files/search?path=/workspace/s&pattern=*.py"));
    expect(search.map((f: { path: string }) => f.path)).toEqual(["/workspace/s/a.py", "/workspace/s/t/b.py"]);
    const list = await wire(await execd("/directories/list?path=/workspace/s"));
    expect(list.map((f: { path: string; type: string }) => [f.path, f.type])).toEqual([
      ["/workspace/s/a.py", "file"],
      ["/workspace/s/t", "directory"],
    ]);
    const deep = await wire(await execd("/directories/list?path=/workspace/s&depth=2"));
    expect(deep.length).toBe(4);
    expect((await execd("/directories/list?path=/workspace/s/a.py")).status).toBe(400);
    expect((await execd("/files/search?path=/nowhere")).status).toBe(404);
    expect((await execd("/files/search")).status).toBe(400);
  });

  it("15: /code runs Python with init, execution_count, result text and complete", async () => {
    const response = await execd("/code", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ code: "1+1", context: { language: "python" } }),
    });
    const events = content(frames(await response.text()));
    expect(events.map((f) => f.type)).toEqual(["init", "execution_count", "result", "execution_complete"]);
    expect(events[1]!.execution_count).toBe(1);
    expect(events[2]!.results).toEqual({ text: "2" });
    const failing = await execd("/code", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ code: "undefined_name", context: { language: "python" } }),
    });
    const failed = content(frames(await failing.text()));
    expect(failed.at(-1)).toMatchObject({ type: "error", error: { ename: "NameError" } });
    expect(failed.some((f) => f.type === "execution_complete")).toBe(false);
  });

  it("contexts keep state between cells; X6: an unknown context is 500 RUNTIME_ERROR", async () => {
    const context = await wire(
      await execd("/code/context", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ language: "python", cwd: "/workspace" }),
      }),
    );
    expect(context, "the request is echoed back, cwd included").toEqual({
      id: expect.any(String),
      language: "python",
      cwd: "/workspace",
    });
    const run = async (code: string) =>
      content(
        frames(
          await (
            await execd("/code", {
              method: "POST",
              headers: json,
              body: JSON.stringify({ code, context: { id: context.id, language: "python" } }),
            })
          ).text(),
        ),
      );
    await run("x = 41");
    expect(
      (await run("print(x + 1)"))
        .filter((f) => f.type === "stdout")
        .map((f) => f.text)
        .join(""),
    ).toBe("42\n");
    const unknown = await execd("/code", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ code: "1", context: { id: "nope", language: "python" } }),
    });
    expect(unknown.status).toBe(500);
    expect((await wire(unknown)).code).toBe("RUNTIME_ERROR");
    expect((await execd(`/code/contexts/${context.id}`, { method: "DELETE" })).status).toBe(200);
    const gone = await execd(`/code/contexts/${context.id}`, { method: "DELETE" });
    expect(gone.status).toBe(404);
    expect((await wire(gone)).code).toBe("CONTEXT_NOT_FOUND");
  });

  it("X7: a scripted drop closes the stream before its terminal event", async () => {
    fake.control.dropStream({ mode: "end" });
    const { text } = await command({ command: "echo a" });
    const events = content(frames(text));
    expect(events.some((f) => f.type === "execution_complete" || f.type === "error")).toBe(false);
  });

  it("unknown routes get gin's plain 404", async () => {
    const response = await execd("/no/such/route");
    expect(response.status).toBe(404);
    expect(await response.text()).toBe("404 page not found");
  });

  it("commands have no network and see the workspace and /tmp of their own sandbox", async () => {
    const { text } = await command({
      command:
        "cat /proc/net/dev | grep -c : ; touch /tmp/kept; ls /tmp; test -w /etc && echo writable || echo ro",
    });
    const lines = content(frames(text))
      .filter((f) => f.type === "stdout")
      .map((f) => f.text);
    expect(lines).toEqual(["1", "kept", "ro"]);
  });
});
