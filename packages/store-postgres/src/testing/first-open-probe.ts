/**
 * Where the first open of a new PGlite data directory goes: each case runs in a new Node process
 * (nothing warm), several times, and prints the median wall time and CPU time (user + system, all
 * threads: V8 compiles WebAssembly on background threads) as JSON lines. The numbers are in
 * docs/perf/pglite-first-open.md.
 *
 * `tsx --conditions @openrath/source src/testing/first-open-probe.ts [runs] [case…] [--node-flag…]`
 * (from packages/store-postgres; default 5 runs, every case).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const CASES = [
  "import",
  "pglite-new-dir",
  "pglite-existing-dir",
  "pglite-memory",
  "pglite-new-dir-from-template",
  "store-new-dir",
  "store-existing-dir",
  "store-new-dir-from-template",
  "phases-new-dir",
] as const;
type Case = (typeof CASES)[number];

interface Sample {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly sqlMs?: number;
  readonly statements?: number;
  readonly phases?: Record<string, number>;
}

const self = fileURLToPath(import.meta.url);

/** One case, in this process (the child side). */
async function child(which: Case, dir: string, template: string): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { PGlite } = await import("@electric-sql/pglite");
  const { pgliteStore } = await import("../postgres-store.js");
  const imported = performance.now() - t0;
  const phases: Record<string, number> = { import: imported };
  let sqlMs = 0;
  let statements = 0;
  const onQuery = (e: { durationMs: number }) => {
    sqlMs += e.durationMs;
    statements++;
  };
  const loadDataDir = () => new Blob([readFileSync(template)]);
  if (which === "phases-new-dir") {
    // PGlite's debug log marks the steps of its initdb; each phase ends at its marker.
    const markers: [string, RegExp][] = [
      ["pglite-setup", /no db in filesystem, running initdb/],
      ["initdb-instance", /calling initdb\.main/],
      ["initdb-checks", /executing pg main with --boot/],
      ["initdb-bootstrap", /running bootstrap script/],
      ["initdb-post-bootstrap", /performing post-bootstrap initialization/],
      ["initdb-sync", /syncing data to disk/],
    ];
    let at = performance.now();
    let next = 0;
    const log = console.log;
    console.log = (...parts: unknown[]) => {
      const text = parts.map(String).join(" ");
      while (next < markers.length && markers[next]![1].test(text)) {
        const now = performance.now();
        phases[markers[next]![0]] = now - at;
        at = now;
        next++;
      }
    };
    const db = await PGlite.create({ dataDir: dir, debug: 1 });
    console.log = log;
    // The rest: initdb's files copied into the directory, then the server started on them.
    phases["copy-and-start"] = performance.now() - at;
    at = performance.now();
    await (await pgliteStore({ db, onQuery })).close();
    phases["store-open-and-migrate"] = performance.now() - at;
    await db.close();
  } else if (which === "pglite-new-dir" || which === "pglite-existing-dir") {
    await (await PGlite.create({ dataDir: dir })).close();
  } else if (which === "pglite-memory") {
    await (await PGlite.create()).close();
  } else if (which === "pglite-new-dir-from-template") {
    await (await PGlite.create({ dataDir: dir, loadDataDir: loadDataDir() })).close();
  } else if (which === "store-new-dir" || which === "store-existing-dir") {
    await (await pgliteStore({ dataDir: dir, onQuery })).close();
  } else if (which === "store-new-dir-from-template") {
    const t = performance.now();
    const db = await PGlite.create({ dataDir: dir, loadDataDir: loadDataDir() });
    phases.pglite = performance.now() - t;
    await (await pgliteStore({ db, onQuery })).close();
    await db.close();
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    ...(statements > 0 ? { sqlMs, statements } : {}),
    phases,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]!);
}

async function parent(runs: number, only: readonly string[], nodeFlags: readonly string[]) {
  const work = mkdtempSync(join(tmpdir(), "openrath-first-open-"));
  try {
    // A migrated data directory, dumped as PGlite's gzipped tarball (the loadDataDir template).
    const template = join(work, "template.tar.gz");
    const { PGlite } = await import("@electric-sql/pglite");
    const { pgliteStore } = await import("../postgres-store.js");
    const source = await PGlite.create();
    await (await pgliteStore({ db: source })).close();
    const dump = await source.dumpDataDir("gzip");
    writeFileSync(template, Buffer.from(await dump.arrayBuffer()));
    await source.close();
    process.stdout.write(`${JSON.stringify({ template: "gzip", bytes: dump.size })}\n`);
    for (const which of CASES.filter((c) => only.length === 0 || only.includes(c))) {
      const samples: Sample[] = [];
      for (let i = 0; i < runs; i++) {
        const dir = join(work, `${which}-${i}`, "db");
        mkdirSync(dirname(dir), { recursive: true });
        if (which.endsWith("existing-dir")) {
          // Made by a process of its own, so the measured one starts cold.
          const maker = which.startsWith("store") ? "store-new-dir" : "pglite-new-dir";
          execFileSync(process.execPath, [...process.execArgv, self, "--child", maker, dir, template]);
        }
        const out = execFileSync(
          process.execPath,
          [...process.execArgv, ...nodeFlags, self, "--child", which, dir, template],
          {
            encoding: "utf8",
          },
        );
        samples.push(JSON.parse(out.trim().split("\n").at(-1)!) as Sample);
        rmSync(join(work, `${which}-${i}`), { recursive: true, force: true });
      }
      const result: Record<string, unknown> = {
        case: which,
        runs,
        wallMs: median(samples.map((s) => s.wallMs)),
        cpuMs: median(samples.map((s) => s.cpuMs)),
        importMs: median(samples.map((s) => s.phases?.import ?? 0)),
      };
      if (samples[0]?.statements !== undefined) {
        result.sqlMs = median(samples.map((s) => s.sqlMs ?? 0));
        result.statements = samples[0].statements;
      }
      if (samples[0]?.phases?.pglite !== undefined)
        result.pgliteMs = median(samples.map((s) => s.phases!.pglite!));
      if (which === "phases-new-dir") {
        const names = Object.keys(samples[0]!.phases!);
        result.phasesMs = Object.fromEntries(
          names.map((k) => [k, median(samples.map((s) => s.phases![k] ?? 0))]),
        );
      }
      process.stdout.write(`${JSON.stringify(result)}\n`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
if (args[0] === "--child") {
  const sample = await child(args[1] as Case, args[2]!, args[3]!);
  process.stdout.write(`${JSON.stringify(sample)}\n`);
} else {
  const rest = args.slice(1);
  await parent(
    Number(args[0] ?? 5),
    rest.filter((a) => !a.startsWith("--")),
    rest.filter((a) => a.startsWith("--")),
  );
}
