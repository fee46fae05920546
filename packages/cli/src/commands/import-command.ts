import { stat } from "node:fs/promises";
import { basename, relative } from "node:path";
import { OpenRathError } from "@openrath/core";
import { listSessionLogs, readSessionLog } from "@openrath/core/node";
import { readConfig } from "../config.js";
import { UsageError } from "../internal/args.js";
import type { Command } from "../internal/command.js";
import { openConfiguredStore } from "./operator-source.js";

/** The session log files a path names: the file itself, or every log in a directory. */
async function logFiles(path: string): Promise<string[]> {
  const found = await stat(path).catch(() => undefined);
  if (!found) throw new OpenRathError("not_found", `No file or directory ${path}`, { details: { path } });
  if (!found.isDirectory()) return [path];
  const logs = await listSessionLogs(path);
  if (logs.length === 0)
    throw new OpenRathError("not_found", `No session logs in ${path}`, { details: { path } });
  return logs.map((log) => log.path);
}

/** `openrath import <logs…>`: recorded sessions in as historical runs the API and Studio show. */
export const importCommand: Command = {
  name: "import",
  summary: "Bring recorded session logs (demo --record) into the store as historical runs.",
  description: [
    "Each session log becomes one run of the workflow openrath.import that ended at once:",
    "succeeded for a log its writer closed, failed (imported_partial) for one cut short. The runs",
    "are never executed; the API, `openrath runs` and Studio show them like any other, with their",
    "session and lineage. Importing a log again finds the run made the first time. Goes straight to",
    "the configured store (DATABASE_URL, else the embedded store under --state, made if missing).",
  ].join("\n"),
  args: [
    { name: "<path…>", description: "Session log files or directories of them (a --record directory)." },
  ],
  options: [
    {
      name: "state",
      value: "<dir>",
      description:
        "The embedded store's directory (default $OPENRATH_STATE or ./.openrath), without DATABASE_URL.",
    },
    {
      name: "tenant",
      value: "<id>",
      description: "The tenant the runs belong to (default $OPENRATH_TENANT).",
    },
    { name: "json", description: "One JSON object per imported log." },
  ],
  examples: ["openrath demo --record recording && openrath import recording"],
  async run(ctx, { positionals, options }) {
    if (positionals.length === 0) throw new UsageError("openrath import needs at least one path");
    const config = readConfig(ctx.env);
    const tenantId = typeof options.tenant === "string" ? options.tenant : config.OPENRATH_TENANT;
    const files: string[] = [];
    for (const path of positionals) files.push(...(await logFiles(ctx.resolve(path))));
    const { store } = await openConfiguredStore(ctx, options, true);
    const { createDurableRuntime } = await import("@openrath/runtime-durable");
    const runtime = createDurableRuntime({ store, tenantId });
    let imported = 0;
    try {
      for (const file of files) {
        const log = await readSessionLog(file);
        const { run, created } = await runtime.importSession(log.session, {
          complete: log.closed && !log.torn,
          source: basename(file),
        });
        if (created) imported++;
        const shown = relative(ctx.cwd, file) || file;
        ctx.stdout.write(
          options.json
            ? `${JSON.stringify({ source: shown, runId: run.id, sessionId: run.sessionId, status: run.status, created })}\n`
            : `${shown}: run ${run.id} (${run.status})${created ? "" : ", imported before"}\n`,
        );
      }
    } finally {
      await runtime.close();
    }
    if (!options.json)
      ctx.stderr.write(
        `${imported} imported, ${files.length - imported} already there. See them with: openrath runs list\n`,
      );
    return 0;
  },
};
