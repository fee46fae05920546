import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { OpenRathError, type Session } from "@openrath/core";
import { readSessionLog, readSessionLogs, type SessionLog, writeSessionLogs } from "@openrath/core/node";

/** The file in a recording directory that says which workflow made it. */
export const RECORDING_MANIFEST = "recording.json";

/** What `recording.json` holds: enough for `openrath replay` to re-run the workflow. */
export interface RecordingManifest {
  readonly format: "openrath.recording";
  readonly version: 1;
  /** The recorded workflow's name, a key of the CLI's replayable workflows (`mams`). */
  readonly workflow: string;
  /** The user message the run started from. */
  readonly input: string;
  /** The id of the run's final session, whose transcript a replay must reproduce. */
  readonly finalSessionId: string;
  /** The provider that answered the recorded calls (`scripted-brain`, `openai`, …). */
  readonly provider: string;
  /** ISO-8601 time the recording was written. */
  readonly createdAt: string;
}

/** A recording read back by {@link readRecording}. */
export interface Recording {
  /** The directory holding the logs (for a single log file: the file's directory). */
  readonly dir: string;
  /** The logs read, oldest first. */
  readonly logs: readonly SessionLog[];
  /** Their sessions, in the same order. */
  readonly sessions: readonly Session[];
  /** The manifest, when the directory has one. */
  readonly manifest?: RecordingManifest;
}

function fail(code: string, message: string, details: Record<string, unknown> = {}): never {
  throw new OpenRathError(code, message, { details });
}

/**
 * Writes a run's sessions as a recording: one closed session log per session and a
 * `recording.json` manifest, in `dir`. A previous recording in `dir` is replaced; a directory that
 * holds session logs but no manifest is left alone (code `recording_conflict`).
 *
 * @returns the paths of the session logs written.
 */
export async function writeRecording(
  dir: string,
  sessions: Iterable<Session>,
  manifest: Omit<RecordingManifest, "format" | "version" | "createdAt">,
): Promise<string[]> {
  const target = resolve(dir);
  await mkdir(target, { recursive: true });
  const names = await readdir(target);
  const logs = names.filter((n) => n.endsWith(".jsonl") || n.endsWith(".jsonl.partial"));
  if (logs.length > 0) {
    if (!names.includes(RECORDING_MANIFEST)) {
      fail(
        "recording_conflict",
        `${target} already holds ${logs.length} session log(s) that are not a recording (no ${RECORDING_MANIFEST}); record into an empty directory.`,
        { dir: target },
      );
    }
    for (const name of logs) await rm(join(target, name), { force: true });
  }
  const paths = await writeSessionLogs(sessions, target);
  const full: RecordingManifest = {
    format: "openrath.recording",
    version: 1,
    ...manifest,
    createdAt: new Date().toISOString(),
  };
  await writeFile(join(target, RECORDING_MANIFEST), `${JSON.stringify(full, null, 2)}\n`);
  return paths;
}

/** Reads `recording.json` in `dir`, or returns `undefined` when there is none. @throws `recording_corrupt`. */
export async function readManifest(dir: string): Promise<RecordingManifest | undefined> {
  const file = join(dir, RECORDING_MANIFEST);
  if (!existsSync(file)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, "utf8"));
  } catch (cause) {
    fail("recording_corrupt", `${file} is not valid JSON: ${(cause as Error).message}`, { file });
  }
  const m = data as Partial<RecordingManifest> | null;
  if (m?.format !== "openrath.recording" || typeof m.workflow !== "string" || typeof m.input !== "string") {
    fail(
      "recording_corrupt",
      `${file} is not a recording manifest: it needs "format": "openrath.recording", a "workflow" name and an "input" string.`,
      { file },
    );
  }
  if (m.version !== 1) {
    fail(
      "recording_corrupt",
      `${file} has version ${JSON.stringify(m.version)}; this CLI reads version 1. Upgrade @openrath/cli.`,
      { file },
    );
  }
  return m as RecordingManifest;
}

/**
 * Reads a recording: every session log in a directory (closed and unfinished), or one log file,
 * plus the directory's `recording.json` when there is one.
 *
 * @throws {OpenRathError} `not_found` for a missing path, `recording_empty` for a directory without
 *   session logs, `log_corrupt` (from core) for a damaged log.
 */
export async function readRecording(path: string): Promise<Recording> {
  const target = resolve(path);
  const info = await stat(target).catch(() => undefined);
  if (!info && !existsSync(`${target}.partial`)) {
    fail("not_found", `No such file or directory: ${target}`, { path: target });
  }
  if (info?.isDirectory()) {
    const logs = await readSessionLogs(target);
    if (logs.length === 0) {
      fail("recording_empty", `${target} holds no session logs (*.jsonl).`, { path: target });
    }
    const manifest = await readManifest(target);
    return {
      dir: target,
      logs,
      sessions: logs.map((l) => l.session),
      ...(manifest ? { manifest } : {}),
    };
  }
  const log = await readSessionLog(target);
  const manifest = await readManifest(dirname(target));
  return { dir: dirname(target), logs: [log], sessions: [log.session], ...(manifest ? { manifest } : {}) };
}
