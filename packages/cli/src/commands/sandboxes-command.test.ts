import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { serviceAvailable } from "@openrath/testing";
import Dockerode from "dockerode";
import { describe, expect, it } from "vitest";
import { main } from "../main.js";

const image = process.env.OPENRATH_TEST_DOCKER_IMAGE ?? "openrath-test/busybox:1";
const docker = new Dockerode();
const check = await serviceAvailable("docker", async () => {
  await docker.ping();
  await docker.getImage(image).inspect();
  return true;
});

async function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: {},
  });
  return { code, stdout, stderr };
}

describe.skipIf(!check.available)(`openrath sandboxes prune (${check.reason})`, () => {
  it("removes a sandbox container whose owner process is gone, and keeps a live owner's", async () => {
    const dead = Number(
      spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout,
    );
    const labels = (pid: number) => ({
      "dev.openrath.sandbox": "1",
      "dev.openrath.owner-pid": String(pid),
      "dev.openrath.owner-host": hostname(),
    });
    const make = (pid: number) =>
      docker.createContainer({
        Image: image,
        Cmd: ["true"],
        Labels: labels(pid),
        HostConfig: { NetworkMode: "none" },
      });
    const orphan = await make(dead);
    const live = await make(process.pid);
    try {
      const run = await cli(["sandboxes", "prune"]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`removed ${orphan.id.slice(0, 12)}`);
      expect(run.stdout).not.toContain(live.id.slice(0, 12));
      await expect(orphan.inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect((await live.inspect()).Id).toBe(live.id);
    } finally {
      await live.remove({ force: true });
      await orphan.remove({ force: true }).catch(() => undefined);
    }
  });
});
