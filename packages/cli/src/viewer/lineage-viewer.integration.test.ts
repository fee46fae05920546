import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { serviceAvailable } from "@openrath/testing";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../main.js";

/** Debian's Chromium (installed by tooling/scripts/services.mjs); a browser is never downloaded. */
const CHROMIUM = process.env.OPENRATH_TEST_CHROMIUM ?? "/usr/bin/chromium";
const SCREENSHOT = fileURLToPath(new URL("../../../../test-results/lineage-viewer.png", import.meta.url));

const check = await serviceAvailable("chromium", () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install chromium)`);
  return spawnSync(CHROMIUM, ["--version"], { timeout: 30_000 }).status === 0;
});

interface ViewerData {
  finalId: string;
  nodes: { id: string; op: string; operator: string; parents: string[] }[];
}

async function cli(argv: string[]): Promise<void> {
  let stderr = "";
  const code = await main(argv, {
    stdout: { write: () => true },
    stderr: { write: (s: string) => (stderr += s) },
    env: {},
  });
  if (code !== 0) throw new Error(`openrath ${argv.join(" ")} failed (${code}): ${stderr}`);
}

describe.skipIf(!check.available)(`the lineage viewer in headless Chromium (${check.reason})`, () => {
  let dir: string;
  let context: BrowserContext;
  let page: Page;
  let data: ViewerData;
  const requests: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "openrath-viewer-"));
    await cli(["demo", "--record", join(dir, "recording")]);
    const file = join(dir, "lineage.html");
    await cli(["lineage", join(dir, "recording"), "--format", "html", "--out", file]);
    const html = await readFile(file, "utf8");
    data = JSON.parse(
      /<script type="application\/json" id="openrath-data">([\s\S]*?)<\/script>/.exec(html)![1]!,
    );
    context = await chromium.launchPersistentContext(join(dir, "profile"), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1920, height: 1080 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--no-pings",
        // Belt and braces: no host name resolves, and any proxied request stays on loopback.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
      ],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("request", (request) => requests.push(request.url()));
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(pathToFileURL(file).href);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("opens from a file with no network request and no script error", async () => {
    await expect(page.locator("g.node").count()).resolves.toBe(data.nodes.length);
    expect(requests.filter((url) => !url.startsWith("file:"))).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("shows both parents of a merge node in the side panel, each one a link", async () => {
    const merges = data.nodes.filter((n) => n.op === "merge");
    expect(merges).toHaveLength(2);
    for (const merge of merges) {
      await page.locator(`g.node[data-id="${merge.id}"]`).click();
      await expect(page.locator("g.node.selected").getAttribute("data-id")).resolves.toBe(merge.id);
      const parents = page.locator("#panel ul.parents [data-parent-id]");
      await expect(
        parents.evaluateAll((els) => els.map((e) => e.getAttribute("data-parent-id"))),
      ).resolves.toEqual(merge.parents);
      await expect(page.locator("#panel h3", { hasText: "Parents" }).textContent()).resolves.toBe(
        "Parents (2)",
      );
      for (const id of merge.parents) {
        const parent = data.nodes.find((n) => n.id === id)!;
        const label = await page.locator(`#panel [data-parent-id="${id}"]`).textContent();
        expect(label).toBe(`${parent.op}${parent.operator}${id.replace(/-/g, "").slice(-8)}`);
      }
      await expect(page.locator("#panel table.extras").textContent()).resolves.toContain(
        'strategy"three-way"',
      );
    }
    // A parent link selects that parent.
    const last = merges.at(-1)!;
    await page.locator(`#panel [data-parent-id="${last.parents[1]}"]`).click();
    await expect(page.locator("g.node.selected").getAttribute("data-id")).resolves.toBe(last.parents[1]);
    await expect(page.locator("#panel h2").textContent()).resolves.toBe("statistician");
  });

  it("finds the chunk behind a specialist's words and lights up its provenance path", async () => {
    await page.locator("#search").fill("The longest word is");
    await page.locator("#search-status", { hasText: "1 of" }).waitFor();
    const status = (await page.locator("#search-status").textContent()) ?? "";
    expect(status ?? "").toMatch(/^1 of \d+ · from mams\/analyst · path of \d+$/);
    const hit = page.locator("#panel .chunk.hit");
    await expect(hit.textContent()).resolves.toContain('The longest word is "quick".');
    await expect(hit.locator("mark").textContent()).resolves.toBe("The longest word is");
    await expect(hit.isVisible()).resolves.toBe(true);

    const analyst = data.nodes.find((n) => n.op === "loop" && n.operator === "analyst")!;
    await expect(page.locator("g.node.selected").getAttribute("data-id")).resolves.toBe(analyst.id);
    const onPath = await page
      .locator("g.node.on-path")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-id")));
    expect(onPath).toContain(analyst.id);
    expect(onPath).toContain(data.finalId);
    const ops = onPath.map((id) => data.nodes.find((n) => n.id === id)!.op);
    expect(ops.filter((op) => op === "merge")).toHaveLength(2);
    expect(ops).toEqual(expect.arrayContaining(["loop", "merge", "compress", "workflow"]));
    expect(status ?? "").toContain(`path of ${onPath.length}`);
    await expect(page.locator("path.edge.on-path").count()).resolves.toBe(onPath.length - 1);
    await expect(page.locator("#graph svg").getAttribute("class")).resolves.toContain("has-path");
    // Nodes off the path are dimmed, not hidden.
    const off = data.nodes.find((n) => n.operator === "wordsmith")!;
    // An expression string, because this package type-checks without the DOM library.
    const opacity = await page.evaluate(
      `getComputedStyle(document.querySelector('g.node[data-id="${off.id}"]')).opacity`,
    );
    expect(Number(opacity)).toBeLessThan(1);

    await mkdir(fileURLToPath(new URL("../../../../test-results/", import.meta.url)), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    expect(existsSync(SCREENSHOT)).toBe(true);
    expect(errors).toEqual([]);
  });

  it("clears the highlight with Escape and says when nothing matches", async () => {
    await page.locator("#search").fill("no chunk says this");
    await page.locator("#search-status", { hasText: "no chunk contains it" }).waitFor();
    await expect(page.locator("g.node.on-path").count()).resolves.toBe(0);
    await page.locator("#search").press("Escape");
    await expect(page.locator("#search").inputValue()).resolves.toBe("");
    await expect(page.locator("#graph svg").getAttribute("class")).resolves.not.toContain("has-path");
  });
});
