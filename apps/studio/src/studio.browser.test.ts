import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serviceAvailable } from "@openrath/testing";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Debian's Chromium (installed by tooling/scripts/services.mjs); a browser is never downloaded. */
const CHROMIUM = process.env.OPENRATH_TEST_CHROMIUM ?? "/usr/bin/chromium";
const APP = fileURLToPath(new URL("..", import.meta.url));
const CLI = fileURLToPath(new URL("../../../packages/cli", import.meta.url));
const RESULTS = fileURLToPath(new URL("../../../test-results/studio", import.meta.url));
const WORKFLOWS = fileURLToPath(new URL("./testing/studio-workflows.ts", import.meta.url));
const BIN = ["--conditions=@openrath/source", "--import", "tsx", "src/bin.ts"];

const check = await serviceAvailable("chromium", () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install chromium)`);
  return spawnSync(CHROMIUM, ["--version"], { timeout: 30_000 }).status === 0;
});

function openrathSync(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, [...BIN, ...args], {
    cwd: CLI,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`openrath ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/** The newest modification time of the files under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

const builtAt = (file: string) => (existsSync(file) ? statSync(file).mtimeMs : 0);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Serve {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
}

/** `openrath serve` on the embedded store with tokens, on `port`, ready once it prints its address. */
async function serve(state: string, port: number): Promise<Serve> {
  const child = spawn(
    process.execPath,
    [...BIN, "serve", "--port", String(port), "--state", state, "--auth", "tokens", "--workflows", WORKFLOWS],
    {
      cwd: CLI,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        OPENRATH_STATE: state,
        OPENRATH_WORKER_LEASE_MS: "2000",
        OPENRATH_LOG_LEVEL: "silent",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on("data", (data: Buffer) => {
      stderr += data.toString();
      if (/OpenRath server on http/.test(stderr)) resolve();
    });
    exited.then((code) => reject(new Error(`serve exited ${code}:\n${stderr}`)));
  });
  return { child, exited };
}

describe.skipIf(!check.available)(
  `Studio in headless Chromium against openrath serve (${check.reason})`,
  () => {
    let dir: string;
    let state: string;
    let port: number;
    let base: string;
    let server: Serve;
    let context: BrowserContext;
    let page: Page;
    let acme: string;
    let other: string;
    const errors: string[] = [];
    const outside: string[] = [];
    const ids: { mams?: string; review?: string; mailer?: string } = {};

    const api = async (path: string, init: { method?: string; body?: unknown; token?: string } = {}) => {
      const response = await fetch(`${base}${path}`, {
        method: init.method ?? "GET",
        headers: {
          authorization: `Bearer ${init.token ?? acme}`,
          ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const shot = (name: string) => page.screenshot({ path: join(RESULTS, `${name}.png`) });

    beforeAll(async () => {
      // The assets under test are this checkout's: rebuilt when a source is newer than the build
      // (the test command builds first, so a full run never rebuilds under the other projects).
      const sources = Math.max(
        newestMtime(join(APP, "src")),
        newestMtime(join(APP, "..", "..", "packages", "lineage-view", "src")),
        builtAt(join(APP, "index.html")),
        builtAt(join(APP, "vite.config.ts")),
      );
      if (sources > builtAt(join(APP, "dist", "index.html"))) {
        const built = spawnSync("pnpm", ["exec", "vite", "build", "--logLevel", "warn"], {
          cwd: APP,
          encoding: "utf8",
        });
        if (built.status !== 0) throw new Error(`vite build failed: ${built.stderr}`);
      }
      await mkdir(RESULTS, { recursive: true });
      dir = await mkdtemp(join(tmpdir(), "openrath-studio-"));
      state = join(dir, "state");
      openrathSync(["migrate", "--state", state], {});
      const token = (tenant: string) =>
        (
          JSON.parse(
            openrathSync(
              [
                "tokens",
                "create",
                "--state",
                state,
                "--tenant",
                tenant,
                "--name",
                "studio",
                "--grants",
                "*",
                "--json",
              ],
              {},
            ),
          ) as { secret: string }
        ).secret;
      acme = token("acme");
      other = token("other");
      port = await freePort();
      base = `http://127.0.0.1:${port}`;
      server = await serve(state, port);
      context = await chromium.launchPersistentContext(join(dir, "profile"), {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1366, height: 860 },
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-pings",
          "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        ],
      });
      page = context.pages()[0] ?? (await context.newPage());
      page.on("pageerror", (error) => errors.push(error.message));
      page.on("console", (message) => {
        // A refused call (the wrong token's 401, the other tenant's 404) is logged by the browser; the UI
        // shows it. So is a live stream's reconnect while the restart test has the server down.
        if (
          message.type() === "error" &&
          !/status of (401|404)|net::ERR_CONNECTION_REFUSED/.test(message.text())
        )
          errors.push(message.text());
      });
      page.on("request", (request) => {
        if (!request.url().startsWith(base)) outside.push(request.url());
      });
    }, 240_000);

    afterAll(async () => {
      await context?.close();
      server?.child.kill("SIGKILL");
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("serves Studio under /studio with a CSP of 'self' only, and signs in with a token", async () => {
      const response = await page.goto(`${base}/studio/`);
      expect(response?.status()).toBe(200);
      const csp = response?.headers()["content-security-policy"] ?? "";
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      await page.getByLabel("API token").fill("ort_wrong");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page.getByRole("alert").textContent()).resolves.toMatch(/unauthorized|token/i);
      await page.getByLabel("API token").fill(acme);
      await shot("01-sign-in");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Runs" }).waitFor();
      await expect(page.evaluate(() => sessionStorage.getItem("openrath.studio.token"))).resolves.toBe(acme);
    });

    it("starts the durable MAMS run and follows it live: the run page streams its events, the list row changes state without a reload", async () => {
      await page.getByLabel("Workflow to run").selectOption("durable-mams");
      await page.getByLabel("Input").fill("Find the longest word in: the quick brown fox");
      await page.getByRole("button", { name: "Start run" }).click();
      await page.waitForURL(/#\/runs\/[0-9a-f-]+$/);
      ids.mams = decodeURIComponent(page.url().split("/").at(-1)!);
      await page.locator(".status-running").first().waitFor();
      await page.locator('ol.events li[data-type="run.checkpoint"]').nth(1).waitFor();
      await shot("02-run-live");
      await page.locator(".screen-head .status-succeeded").waitFor({ timeout: 60_000 });
      await expect(page.getByLabel("Final answer").textContent()).resolves.toMatch(/\S/);
      await expect(page.locator('ol.timeline li[data-step="plan"]').count()).resolves.toBe(1);
      await shot("03-run-done");

      // A run started from outside appears on the list, and its row changes state there.
      await page.goto(`${base}/studio/#/runs`);
      await page.locator(`tr[data-run-id="${ids.mams}"][data-status="succeeded"]`).waitFor();
      const created = await api("/v1/runs", {
        method: "POST",
        body: { assistant: "review", input: "first draft" },
      });
      const parked = created.body.id as string;
      const row = page.locator(`tr[data-run-id="${parked}"]`);
      await row.locator(".status-waiting").waitFor();
      await shot("04-runs-list-live");
      let pending: { id: string }[] = [];
      while (pending.length === 0)
        pending = (await api(`/v1/interrupts?runId=${parked}`)).body.items as { id: string }[];
      await api(`/v1/interrupts/${pending[0]!.id}/decision`, { method: "POST", body: { kind: "approve" } });
      await page.locator(`tr[data-run-id="${parked}"][data-status="succeeded"]`).waitFor({ timeout: 30_000 });
      await expect(page.locator(`tr[data-run-id="${ids.mams}"] td.num`).textContent()).resolves.toMatch(
        /^\d[\d,]*$/,
      );
    });

    it("opens the run's session graph fitted to the window, shows a merge's shared prefix and sides, and lights up every path of a search hit", async () => {
      await page.goto(`${base}/studio/#/runs/${ids.mams}/graph`);
      await page.locator(".lineage-node").first().waitFor();
      const count = await page.locator(".lineage-node").count();
      expect(count).toBeGreaterThanOrEqual(10);
      // Fitted: every node is inside the canvas, none behind the side panel.
      const canvas = (await page.locator(".lineage-canvas").boundingBox())!;
      const boxes = await page
        .locator(".lineage-node")
        .evaluateAll((els) =>
          els.map((e) => e.getBoundingClientRect()).map((r) => ({ x: r.x, y: r.y, w: r.width, h: r.height })),
        );
      for (const b of boxes) {
        expect(b.x).toBeGreaterThanOrEqual(canvas.x - 1);
        expect(b.y).toBeGreaterThanOrEqual(canvas.y - 1);
        expect(b.x + b.w).toBeLessThanOrEqual(canvas.x + canvas.width + 1);
        expect(b.y + b.h).toBeLessThanOrEqual(canvas.y + canvas.height + 1);
      }
      await expect(page.locator(".react-flow__minimap").count()).resolves.toBe(1);
      await shot("05-graph");

      const merges = page.locator('.lineage-node[data-op="merge"]');
      expect(await merges.count()).toBeGreaterThanOrEqual(2);
      await merges.last().click();
      const panel = page.getByRole("complementary", { name: "Session details" });
      await expect(panel.locator("h3", { hasText: "Parents" }).textContent()).resolves.toBe("Parents (2)");
      const merged = panel.getByRole("region", { name: "What this merge merged" });
      await expect(merged.locator("h4").first().textContent()).resolves.toMatch(/^Shared prefix \(\d+\)$/);
      const right = await merged.locator("h4", { hasText: "Right:" }).textContent();
      expect(right).toMatch(/\((\d+)\)$/);
      expect(Number(/\((\d+)\)$/.exec(right ?? "")?.[1])).toBeGreaterThan(0);
      await expect(merged.locator(".merge-sides .chunk").count()).resolves.toBeGreaterThan(0);
      await shot("06-graph-merge");

      // Keyboard: a focused node opens with Enter.
      const leaf = page.locator('.react-flow__node:has(.lineage-node[data-op="leaf_user"])');
      await leaf.focus();
      await page.keyboard.press("Enter");
      await expect(panel.locator("h2").first().textContent()).resolves.toBe("Session.fromUserMessage");

      await page.getByLabel("Search chunks").fill("The longest word is");
      await page.locator(".search-status", { hasText: "1 of" }).waitFor();
      const onPath = await page.locator(".lineage-node.on-path").count();
      // From the analyst's branch through both later merges, the compression and on to the end.
      expect(onPath).toBeGreaterThanOrEqual(4);
      await expect(page.locator(".lineage-node.on-path .badge").count()).resolves.toBe(1);
      await expect(page.locator(".react-flow__edge.on-path").count()).resolves.toBeGreaterThanOrEqual(
        onPath - 1,
      );
      await expect(panel.locator(".chunk.hit mark").first().textContent()).resolves.toBe(
        "The longest word is",
      );
      await shot("07-graph-search");

      await page.goto(`${base}/studio/#/usage/${ids.mams}`);
      await page.getByRole("figure", { name: "Tokens by agent" }).waitFor();
      await expect(
        page.getByRole("figure", { name: "Tokens by agent" }).locator("li").count(),
      ).resolves.toBeGreaterThan(2);
      await shot("08-usage");
    });

    it("approves a pending interrupt from the inbox, and the run finishes on screen", async () => {
      const created = await api("/v1/runs", {
        method: "POST",
        body: { assistant: "review", input: "ship it" },
      });
      ids.review = created.body.id as string;
      await page.goto(`${base}/studio/#/inbox`);
      const card = page
        .locator(`article[data-run-id], article[data-interrupt-id]`)
        .filter({ hasText: "approval" });
      await card.first().waitFor({ timeout: 30_000 });
      await expect(card.first().locator("pre.request").textContent()).resolves.toContain(
        "Publish this reply?",
      );
      await shot("09-inbox");
      await card.first().getByLabel("Reason").fill("reads well");
      await card.first().getByRole("button", { name: "Approve" }).click();
      await page.getByRole("status").filter({ hasText: "Decided (approve)" }).waitFor();
      await card.first().waitFor({ state: "detached" });
      await page.goto(`${base}/studio/#/runs/${ids.review}`);
      await page.locator(".screen-head .status-succeeded").waitFor({ timeout: 30_000 });
      await shot("10-review-done");
    });

    it("answers an input interrupt through the form its JSON Schema generates", async () => {
      const created = await api("/v1/runs", {
        method: "POST",
        body: { assistant: "intake", input: "order 7" },
      });
      const runId = created.body.id as string;
      await page.goto(`${base}/studio/#/inbox`);
      const card = page
        .locator("article[data-interrupt-id]")
        .filter({ hasText: "How should the order ship?" });
      await card.waitFor({ timeout: 30_000 });
      const respond = card.getByRole("button", { name: "Respond" });
      // Required fields first: the form will not send without them.
      await expect(respond.isDisabled()).resolves.toBe(true);
      await card.getByLabel("carrier *").selectOption("courier");
      await card.getByLabel("days *").fill("3");
      await card.getByLabel("insured").check();
      await shot("11-inbox-form");
      await respond.click();
      await page.getByRole("status").filter({ hasText: "Decided (respond)" }).waitFor();
      let status = "";
      while (status !== "succeeded") {
        await sleep(100);
        status = (await api(`/v1/runs/${runId}`)).body.status as string;
      }
      const session = await api(`/v1/runs/${runId}/session`);
      const chunks = session.body.chunks as { content?: string }[];
      expect(chunks.at(-1)?.content).toBe('Shipping: {"carrier":"courier","days":3,"insured":true}');
    });

    it("puts a send cut off mid-call under review after a restart, and resolves it there", async () => {
      const created = await api("/v1/runs", {
        method: "POST",
        body: { assistant: "mailer", input: "invoice" },
      });
      ids.mailer = created.body.id as string;
      // The send kills the server's process mid-call; the next start finds its lease expired.
      await server.exited;
      server = await serve(state, port);
      await page.goto(`${base}/studio/#/effects`);
      const card = page.locator(`article[data-effect-id]`).filter({ hasText: "send_invoice" });
      await card.first().waitFor({ timeout: 60_000 });
      await expect(card.first().textContent()).resolves.toContain("ana@example.com");
      await shot("12-effects");
      await card.first().getByLabel("Reason").fill("the provider's log shows no send");
      await card
        .first()
        .getByRole("button", { name: /did not happen/ })
        .click();
      await page.getByRole("status").filter({ hasText: "as failed" }).waitFor();
      const effects = await api(`/v1/effects?status=needs_review&runId=${ids.mailer}`);
      expect(effects.body.items).toEqual([]);
      const run = await api(`/v1/runs/${ids.mailer}`);
      expect(run.body.status).not.toBe("needs_review");
    });

    it("shows another tenant's token none of it", async () => {
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("API token").fill(other);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      await page.goto(`${base}/studio/#/runs`);
      await page.getByText("No runs match.").waitFor();
      await expect(page.locator("tr[data-run-id]").count()).resolves.toBe(0);
      await shot("13-other-tenant");
      await page.goto(`${base}/studio/#/inbox`);
      await page.getByText("Nothing waits for a decision.").waitFor();
      await page.goto(`${base}/studio/#/effects`);
      await page.getByText("No effect waits for review.").waitFor();
      await page.goto(`${base}/studio/#/runs/${ids.mams}`);
      await expect(page.getByRole("alert").textContent()).resolves.toContain("run_not_found");
      await page.goto(`${base}/studio/#/runs/${ids.mams}/graph`);
      await expect(page.getByRole("alert").textContent()).resolves.toContain("run_not_found");
      // Joined, so a failure prints each message rather than an elided array.
      expect(errors.join("\n")).toBe("");
      expect(outside.join("\n")).toBe("");
    });
  },
);
