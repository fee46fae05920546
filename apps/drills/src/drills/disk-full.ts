import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { bulk } from "../bulk.js";
import {
  client,
  freePort,
  type Report,
  type Submitted,
  settle,
  stage,
  start,
  statuses,
  tally,
  teardown,
} from "../harness.js";
import { BUCKET, S3 } from "./s3-restart.js";

/** Objects in the bucket (staging area aside) whose bytes do not hash to the digest their key names. */
function corruptObjects(bucketDir: string): { objects: number; corrupt: string[] } {
  const files = readdirSync(bucketDir, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith("._S3rver_object") && !name.includes(".staging"));
  const corrupt: string[] = [];
  for (const file of files) {
    const digest =
      file
        .replace(/\._S3rver_object$/, "")
        .split("/")
        .pop() ?? "";
    const hex = createHash("sha256")
      .update(readFileSync(join(bucketDir, file)))
      .digest("hex");
    if (!digest.includes(hex)) corrupt.push(file);
  }
  return { objects: files.length, corrupt };
}

/**
 * Drill 8: the artifact store's disk fills up (s3rver's directory on a 12 MiB tmpfs) while runs
 * commit 2 MiB chunks; after a while space returns (the tmpfs grows to 512 MiB). Puts must fail
 * with coded errors, no object may be corrupt (each hashes to its key's digest), and the runs
 * must finish once there is room, the ones that gave up (failed) reported as such.
 */
export async function diskFull(quick: boolean): Promise<Report> {
  const fullMs = quick ? 10_000 : 30_000;
  const s = await stage("disk-full");
  const s3 = new S3(join(s.dir, "s3"), await freePort());
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=12m", "tmpfs", s3.dir]);
  let mounted = true;
  await s3.start();
  Object.assign(s.env, {
    OPENRATH_S3_BUCKET: BUCKET,
    OPENRATH_S3_ENDPOINT: `http://127.0.0.1:${s3.port}`,
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    OPENRATH_LOG_LEVEL: "info",
  });
  const started = new Date();
  try {
    const serve = await start(s, "serve");
    const api = client(serve.port);
    const workers = [await start(s, "worker"), await start(s, "worker")];
    const runs: Submitted[] = [];
    for (let i = 0; i < (quick ? 8 : 20); i++) {
      const input = `full-${i}`;
      const run = await api.runs.create({ assistant: "bulky", input });
      runs.push({ id: run.id, workflow: "bulky", input });
    }
    await sleep(fullMs);
    const whileFull = await statuses(s, runs);
    const duringFull = corruptObjects(join(s3.dir, BUCKET));
    execFileSync("mount", ["-o", "remount,size=512m", s3.dir]);
    const spaceAt = Date.now();
    // The S3 server itself may have died of the full disk: brought back as a supervisor would.
    const s3Died = !s3.running;
    if (s3Died) await s3.start();
    const settled = await settle(s, runs, 120_000);
    const recovery = settled === null ? null : (Date.now() - spaceAt) / 1000;
    const t = await tally(s, api, runs);
    const after = corruptObjects(join(s3.dir, BUCKET));
    // Only the end state counts: s3rver writes an object's file in place, so one seen mid-write while
    // the disk was full is the test server's, not what a reader is served.
    const corrupt = after.corrupt;
    for (const file of corrupt) t.problems.push(`object ${file} does not match its digest`);
    const final = await statuses(s, runs);
    let verified = 0;
    for (const run of runs.filter((r) => final.get(r.id) === "succeeded")) {
      const session = await api.runs.session(run.id);
      const contents = (session.chunks as { content?: string }[]).map((chunk) => chunk.content);
      if (
        JSON.stringify(contents) ===
        JSON.stringify([run.input, bulk(run.input, 1), bulk(run.input, 2), bulk(run.input, 3)])
      )
        verified++;
      else {
        t.lostRecords++;
        t.problems.push(`run ${run.id}: its session does not read back as written`);
      }
    }
    const failures = await s.postgres.query<{ error: string | null }>(
      "select error from openrath.runs where id = any($1::uuid[]) and status = 'failed'",
      [runs.map((run) => run.id)],
    );
    const logged = [serve, ...workers].flatMap((proc) => proc.stderr().match(/artifact_[a-z_]+/g) ?? []);
    const codes: Record<string, number> = {};
    for (const code of logged) codes[code] = (codes[code] ?? 0) + 1;
    const statusWhileFull: Record<string, number> = {};
    for (const status of whileFull.values()) statusWhileFull[status] = (statusWhileFull[status] ?? 0) + 1;
    return {
      drill: "disk-full",
      quick,
      fault: `the artifact store's disk full (s3rver on a 12 MiB tmpfs) for ${fullMs / 1000} s under runs committing 2 MiB chunks`,
      start: started.toISOString(),
      end: new Date().toISOString(),
      recoverySeconds: recovery,
      ...t,
      details: {
        statusWhileFull,
        s3ServerDiedOfFullDisk: s3Died,
        artifactCodesLogged: codes,
        failedRunErrors: failures.map((row) => (row.error ?? "").slice(0, 300)),
        objectsChecked: after.objects,
        corruptObjects: corrupt.length,
        partialFilesSeenWhileFull: duringFull.corrupt.length,
        sessionsVerified: verified,
      },
      ok: recovery !== null && corrupt.length === 0 && t.lostRecords === 0 && t.duplicatedEffects === 0,
    };
  } finally {
    await s3.kill();
    if (mounted) {
      execFileSync("umount", [s3.dir]);
      mounted = false;
    }
    await teardown(s);
  }
}
