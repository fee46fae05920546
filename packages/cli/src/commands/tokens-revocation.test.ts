import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { POSTGRES_URL, postgresAvailable, schemaPerFile } from "../testing/postgres.js";
import { spawnOpenrath, spawnSyncOpenrath, startOpenrath } from "../testing/run-cli.js";

const postgres = await postgresAvailable();
const schema = schemaPerFile("cli_revoke", postgres);
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What a server answers a token on a read of the runs list: the status and the error's reason. */
async function answer(base: string, secret: string): Promise<{ status: number; reason?: string }> {
  const response = await fetch(`${base}/v1/runs`, { headers: { authorization: `Bearer ${secret}` } });
  const body = (await response.json()) as { error?: { code: string; details?: { reason?: string } } };
  return { status: response.status, ...(body.error ? { reason: body.error.details?.reason } : {}) };
}

describe.skipIf(!postgres.available)(`a token revoked in one process (${postgres.reason})`, () => {
  it("is refused by every other server process on the same PostgreSQL", async () => {
    const env = { DATABASE_URL: POSTGRES_URL ?? "", OPENRATH_DB_SCHEMA: schema };
    const migrated = spawnSyncOpenrath(["migrate"], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    // Two API processes, each with its own token cache, as a deployment with two replicas has.
    const bases: string[] = [];
    for (let i = 0; i < 2; i++) {
      const state = mkdtempSync(join(tmpdir(), "openrath-revoke-"));
      dirs.push(state);
      const serve = startOpenrath(
        ["serve", "--port", "0", "--auth", "tokens", "--state", state],
        /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
        env,
      );
      children.push(serve.child);
      bases.push((await serve.matched)[1] ?? "");
    }
    const made = await spawnOpenrath(
      ["tokens", "create", "--name", "ops", "--grants", "run.read", "--json"],
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const { secret, token } = JSON.parse(made.stdout) as { secret: string; token: { id: string } };
    // Both servers accept it, so each now holds it in its cache.
    for (const base of bases) expect(await answer(base, secret)).toEqual({ status: 200 });

    // Revoked by a third process (the operator's command), straight to the store.
    const revoked = await spawnOpenrath(["tokens", "revoke", token.id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Token ${token.id}: revoked`);

    // Each server refuses it once its cached entry lapses (5 s by default, ADR 0027), and from
    // then on for good. The bound below is a deadline for the test, not a measured figure.
    for (const base of bases) {
      let last = await answer(base, secret);
      for (let i = 0; i < 200 && last.status === 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        last = await answer(base, secret);
      }
      expect(last).toEqual({ status: 401, reason: "token_revoked" });
      // Never accepted again: the refusal is not a cache miss that a later read could undo.
      for (let i = 0; i < 3; i++)
        expect(await answer(base, secret)).toEqual({ status: 401, reason: "token_revoked" });
    }
  }, 120_000);
});
