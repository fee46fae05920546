/**
 * How long Studio's session graph takes to open at size (issue 25: 2,000 nodes in under a second).
 *
 *   node --import tsx scripts/graph-bench.ts [--size 2000] [--runs 3] [--browser]
 *
 * In Node: `layoutWith` (the ELK settings the page uses) on the lineage of scripts/many-rounds.ts,
 * the first call in a fresh process (ELK not yet compiled, as in a page that just opened) and the
 * calls after it; wall and CPU time, since on a busy machine wall time mostly measures the others.
 * With `--browser`: scripts/graph-page (LineageView alone, Studio's Vite config) built to a
 * temporary folder, served with the server's content security policy, and opened `--runs` times
 * in Debian's Chromium, each in a fresh profile: navigation to the first node drawn, and the
 * longest main-thread task on the way (what decides whether the page stays responsive).
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { layoutRuns, layoutWith } from "../src/graph/elk-layout.js";
import { manyRounds } from "./many-rounds.js";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "2000" },
    runs: { type: "string", default: "3" },
    browser: { type: "boolean", default: false },
  },
});
const size = Number(values.size);
const runs = Number(values.runs);
const CHROMIUM = process.env.OPENRATH_TEST_CHROMIUM ?? "/usr/bin/chromium";
const APP = fileURLToPath(new URL("..", import.meta.url));

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const ms = (n: number) => `${Math.round(n)} ms`;

const data = manyRounds(size);
console.log(
  `lineage: ${data.graph.nodes.length} nodes, ${data.graph.edges.length} edges, ` +
    `${data.graph.nodes.filter((n) => n.op === "merge").length} merges`,
);

const { default: Elk } = await import("elkjs/lib/elk.bundled.js");
const elk = new Elk();
for (let i = 0; i < runs; i++) {
  const [wall, cpu] = [performance.now(), cpuMs()];
  const placed = await layoutWith(elk, data.graph.nodes, 1.6);
  console.log(
    `node layout ${i === 0 ? "first" : `again ${i}`}: ${ms(performance.now() - wall)} wall, ` +
      `${ms(cpuMs() - cpu)} cpu (${placed.size} placed)`,
  );
}

// Run by run, as the page lays out a large graph: the last run (drawn first), then all of them.
for (const part of ["last", "all"] as const) {
  const [wall, cpu] = [performance.now(), cpuMs()];
  const placed = await layoutRuns(elk, data.graph.nodes, 1.6, part);
  console.log(
    `node layout run by run, ${part}: ${ms(performance.now() - wall)} wall, ${ms(cpuMs() - cpu)} cpu (${placed.size} placed)`,
  );
}

if (values.browser) await browser();

async function browser() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install chromium)`);
  const { build } = await import("vite");
  const { chromium } = await import("playwright-core");
  const dir = await mkdtemp(join(tmpdir(), "studio-graph-bench-"));
  const out = join(dir, "dist");
  await build({
    configFile: join(APP, "vite.config.ts"),
    root: join(APP, "scripts", "graph-page"),
    base: "/",
    logLevel: "warn",
    build: { outDir: out, emptyOutDir: true, rolldownOptions: { checks: { pluginTimings: false } } },
  });
  const types: Record<string, string> = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
  };
  const server = createServer(async (request, response) => {
    const path = normalize(new URL(request.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
    const file = path === "" ? "index.html" : path;
    try {
      const body = await readFile(join(out, file));
      response.writeHead(200, {
        "content-type": types[extname(file)] ?? "application/octet-stream",
        // What @openrath/server sends (helmet's defaults with its directives).
        "content-security-policy":
          "default-src 'self';img-src 'self' data:;style-src 'self' 'unsafe-inline';script-src 'self';object-src 'none';script-src-attr 'none'",
      });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/?size=${size}`;
  try {
    for (let i = 0; i < runs; i++) {
      const context = await chromium.launchPersistentContext(join(dir, `profile-${i}`), {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1366, height: 860 },
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
        ],
      });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        const errors: string[] = [];
        page.on("pageerror", (error) => errors.push(error.message));
        await page.goto(url);
        await page.locator(".lineage-node").first().waitFor({ timeout: 120_000 });
        const marks: Record<string, number> = await page.evaluate(() => {
          const timing = window.performance;
          const nav = timing.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
          return {
            ...(window as unknown as { graphBench: Record<string, number> }).graphBench,
            loaded: nav.loadEventEnd,
            layout: timing.getEntriesByName("studio graph layout")[0]?.duration ?? 0,
            last: timing.getEntriesByName("studio graph layout last")[0]?.duration ?? 0,
            all: timing.getEntriesByName("studio graph layout all")[0]?.duration ?? 0,
          };
        });
        // Two frames right after the graph is drawn: how soon the page answers.
        const pan = await page.evaluate(
          () =>
            new Promise<number>((resolve) => {
              const start = performance.now();
              requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - start)));
            }),
        );
        // A graph laid out run by run: when every run is placed (0 when laid out whole).
        const all = (await (
          await page.waitForFunction(
            () => {
              const timing = window.performance;
              const entry = timing.getEntriesByName("studio graph layout all")[0];
              if (entry) return entry.startTime + entry.duration;
              return timing.getEntriesByName("studio graph layout last")[0] ? false : 0;
            },
            undefined,
            { timeout: 120_000 },
          )
        ).jsonValue()) as number;
        const settled = await page.locator(".lineage-node").count();
        console.log(
          `chromium open ${i + 1}: first node drawn ${ms(marks.drawnAt ?? 0)} after navigation ` +
            `(page loaded at ${ms(marks.loaded ?? 0)}, layout ${marks.layout ? ms(marks.layout) : `of the last run ${ms(marks.last ?? 0)}`}), ${marks.drawn} nodes in the DOM, longest ` +
            `main-thread task ${ms(marks.longestTask ?? 0)} (${marks.tasksOver50} over 50 ms), ` +
            `next two frames ${ms(pan)}, then ${settled} nodes in the DOM${all ? `; every run placed ${ms(all)} after navigation` : ""}${errors.length > 0 ? `; errors: ${errors.join("; ")}` : ""}`,
        );
      } finally {
        await context.close();
      }
    }
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
