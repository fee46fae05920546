import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpenRathError, type SandboxV1 } from "@openrath/core";
import { serviceAvailable } from "@openrath/testing";
import Dockerode from "dockerode";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { dockerSandbox } from "./docker-sandbox.js";
import { KEEP_ALIVE } from "./internal/scripts.js";
import { removeOrphanedSandboxes } from "./remove-orphaned-sandboxes.js";

const image = process.env.OPENRATH_TEST_DOCKER_IMAGE ?? "openrath-test/busybox:1";
const TEST_LABEL = "openrath-test-run";
const run = `${process.pid}-${Date.now()}`;
const docker = new Dockerode();
const check = await serviceAvailable("docker", async () => {
  await docker.ping();
  await docker.getImage(image).inspect();
  return true;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function errorOf(promise: Promise<unknown>): Promise<OpenRathError> {
  try {
    await promise;
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

/** Containers this test run created (through the backend or directly), found by label. */
async function ourContainers(): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${TEST_LABEL}=${run}`] } });
}

async function gone(id: string): Promise<boolean> {
  try {
    await docker.getContainer(id).inspect();
    return false;
  } catch (error) {
    return (error as { statusCode?: number }).statusCode === 404;
  }
}

/** A pid that belonged to a process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

describe("docker sandbox without a daemon", () => {
  it("fails fast with sandbox_unavailable naming the socket when nothing listens there", async () => {
    const socketPath = join(tmpdir(), `openrath-no-docker-${process.pid}.sock`);
    const backend = dockerSandbox({ docker: { socketPath } });
    const started = Date.now();
    const error = await errorOf(backend.open({ image: "busybox" }));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.code).toBe("sandbox_unavailable");
    expect(error.message).toContain(`unix://${socketPath}`);
    expect(error.message).toMatch(/Start Docker/);
  });

  it("fails fast with sandbox_unavailable when a TCP endpoint refuses connections", async () => {
    const backend = dockerSandbox({ docker: { host: "127.0.0.1", port: 1, protocol: "http" } });
    const error = await errorOf(backend.open({ image: "busybox" }));
    expect(error.code).toBe("sandbox_unavailable");
    expect(error.message).toContain("http://127.0.0.1:1");
  });
});

describe.skipIf(!check.available)(`docker sandbox integration (${check.reason})`, () => {
  const backend = dockerSandbox({ labels: { [TEST_LABEL]: run } });
  const open = (spec: Parameters<typeof backend.open>[0] = {}) =>
    backend.open(backend.parseSpec!({ image, ...spec }));
  const opened: SandboxV1[] = [];
  const scratch = mkdtempSync(join(tmpdir(), "openrath-docker-test-"));

  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((sandbox) => sandbox.close()));
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    for (const container of await ourContainers()) {
      await docker
        .getContainer(container.Id)
        .remove({ force: true })
        .catch(() => undefined);
    }
  });

  async function track(pending: Promise<SandboxV1>): Promise<SandboxV1> {
    const sandbox = await pending;
    opened.push(sandbox);
    return sandbox;
  }

  it("applies the limits, networking off and the labels, and removes the container on close", async () => {
    const sandbox = await track(open({ cpus: 0.5, memoryBytes: 64 * 1024 * 1024, pidsLimit: 64 }));
    const info = await docker.getContainer(sandbox.id).inspect();
    expect(info.State.Running).toBe(true);
    expect(info.HostConfig).toMatchObject({
      NanoCpus: 500_000_000,
      Memory: 64 * 1024 * 1024,
      PidsLimit: 64,
      NetworkMode: "none",
      AutoRemove: false,
    });
    expect(info.Config.Labels).toMatchObject({
      "dev.openrath.sandbox": "1",
      "dev.openrath.owner-pid": String(process.pid),
      "dev.openrath.owner-host": hostname(),
      [TEST_LABEL]: run,
    });
    expect(Number.isNaN(Date.parse(info.Config.Labels["dev.openrath.created"]!))).toBe(false);
    const interfaces = await sandbox.exec("cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '");
    expect(interfaces.stdout.trim().split("\n")).toEqual(["lo"]);
    await sandbox.close();
    expect(await gone(sandbox.id)).toBe(true);
  });

  it("is safe without a spec: docker inspect shows the limits, no capability, no-new-privileges, nobody, no network", async () => {
    const sandbox = await track(open());
    const info = await docker.getContainer(sandbox.id).inspect();
    expect(info.HostConfig).toMatchObject({
      NanoCpus: 1_000_000_000,
      Memory: 1024 ** 3,
      MemorySwap: 1024 ** 3,
      PidsLimit: 256,
      NetworkMode: "none",
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
    });
    expect(info.Config.User, "the image runs as root, so the sandbox runs as nobody").toBe("65534:65534");
    const inside = await sandbox.exec("id -u; grep -E 'Cap(Eff|Prm|Bnd)|NoNewPrivs' /proc/self/status");
    expect(inside.stdout.split("\n")[0]).toBe("65534");
    for (const line of inside.stdout.split("\n").filter((l) => l.startsWith("Cap")))
      expect(line).toMatch(/:\s+0+$/);
    expect(inside.stdout).toMatch(/NoNewPrivs:\s+1/);
    // The workspace was handed to nobody through the archive API (no root exec, no capability).
    expect((await sandbox.exec("touch made && stat -c %u made")).stdout).toBe("65534\n");
  });

  it("lets spec values override the defaults, root included (still without capabilities)", async () => {
    const sandbox = await track(open({ cpus: 2, memoryBytes: 128 * 1024 ** 2, pidsLimit: 32, user: "root" }));
    const info = await docker.getContainer(sandbox.id).inspect();
    expect(info.HostConfig).toMatchObject({
      NanoCpus: 2e9,
      Memory: 128 * 1024 ** 2,
      PidsLimit: 32,
      CapDrop: ["ALL"],
    });
    expect(info.Config.User).toBe("root");
    const inside = await sandbox.exec(
      "id -u; grep CapEff /proc/self/status; chown 65534 /workspace 2>&1 || echo refused",
    );
    expect(inside.stdout).toMatch(/^0\nCapEff:\s+0+\n[\s\S]*refused/);
  });

  it("spends no exec on path resolution: file operations go through the archive API alone", async () => {
    const sandbox = await track(open());
    await sandbox.exec("mkdir -p real && ln -s real link && ln -s /etc out");
    const container = (sandbox as unknown as { container: Dockerode.Container }).container;
    let execs = 0;
    const original = container.exec.bind(container);
    container.exec = ((options: Dockerode.ExecCreateOptions) => {
      execs++;
      return original(options);
    }) as typeof container.exec;
    await sandbox.writeFile("link/new/deep/file.txt", "through a link");
    expect(await sandbox.readFile("real/new/deep/file.txt")).toBe("through a link");
    expect(await sandbox.exists("link/new")).toBe(true);
    expect((await errorOf(sandbox.readFile("out/passwd"))).code).toBe("path_outside_workspace");
    expect(execs, "a file operation started an exec").toBe(0);
    expect((await sandbox.exec("pwd", { cwd: "link/new" })).stdout).toBe("/workspace/real/new\n");
    expect(execs, "exec with a cwd started more than the command itself").toBe(1);
  });

  it("kills a detached, environment-clearing, SIGTERM-ignoring grandchild on timeout (found by its group id)", async () => {
    const sandbox = await track(open());
    const marker = `openrath-hostile-${process.pid}-${Date.now()}`;
    const error = await errorOf(
      sandbox.exec(
        `(setsid env -i /bin/sh -c 'trap "" TERM HUP INT; while :; do sleep 0.1; done' ${marker} &); sleep 100`,
        { timeoutMs: 800 },
      ),
    );
    expect(error.code).toBe("exec_timeout");
    const scan = await sandbox.exec(
      "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done",
    );
    expect(scan.stdout).not.toContain(marker);
  });

  it("reports sandbox_unavailable when close() cannot reach a dead daemon, and removes the container later", async () => {
    const sandbox = await track(open());
    // The same container through a client whose socket leads nowhere: a daemon that died.
    const dead = new Dockerode({ socketPath: join(scratch, "dead-docker.sock") });
    (sandbox as unknown as { container: Dockerode.Container }).container = dead.getContainer(sandbox.id);
    const error = await errorOf(sandbox.close());
    expect(error.code).toBe("sandbox_unavailable");
    expect(await gone(sandbox.id), "the container is still there: close() must not claim it is").toBe(false);
    (sandbox as unknown as { container: Dockerode.Container }).container = docker.getContainer(sandbox.id);
    await sandbox.close();
    expect(await gone(sandbox.id)).toBe(true);
  });

  it("enforces the pids limit, and recovers once the processes end", async () => {
    const sandbox = await track(open({ pidsLimit: 16 }));
    const result = await sandbox.exec("i=0; while [ $i -lt 40 ]; do sleep 2 & i=$((i+1)); done; wait", {
      timeoutMs: 20_000,
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/can't fork|resource temporarily unavailable/i);
    let alive = "";
    for (let i = 0; i < 50 && alive !== "alive\n"; i++) {
      alive = (await sandbox.exec("echo alive")).stdout;
      if (alive !== "alive\n") await sleep(200);
    }
    expect(alive).toBe("alive\n");
  });

  it("removes containers whose owner process is gone, and only those", async () => {
    const labels = (pid: number, host = hostname()) => ({
      "dev.openrath.sandbox": "1",
      "dev.openrath.owner-pid": String(pid),
      "dev.openrath.owner-host": host,
      [TEST_LABEL]: run,
    });
    const make = (containerLabels: Record<string, string>) =>
      docker.createContainer({
        Image: image,
        Entrypoint: ["/bin/sh", "-c"],
        Cmd: [KEEP_ALIVE],
        Labels: containerLabels,
        HostConfig: { NetworkMode: "none" },
      });
    const dead = deadPid();
    const orphan = await make(labels(dead));
    await orphan.start();
    const stopped = await make(labels(dead));
    const live = await make(labels(process.pid));
    const elsewhere = await make(labels(dead, `not-${hostname()}`));
    const removed = await removeOrphanedSandboxes();
    expect(removed).toEqual(expect.arrayContaining([orphan.id, stopped.id]));
    expect(removed).not.toContain(live.id);
    expect(removed).not.toContain(elsewhere.id);
    expect(await gone(orphan.id)).toBe(true);
    expect(await gone(stopped.id)).toBe(true);
    expect(await gone(live.id)).toBe(false);
    expect(await gone(elsewhere.id)).toBe(false);
    await Promise.all([live.remove({ force: true }), elsewhere.remove({ force: true })]);
  });

  it("fails with sandbox_open_failed naming a missing image, without pulling or leaving a container", async () => {
    const missing = `openrath-test/not-there:${run}`;
    const error = await errorOf(open({ image: missing }));
    expect(error.code).toBe("sandbox_open_failed");
    expect(error.message).toContain(missing);
    expect(error.message).toMatch(/never pulls/);
    expect(await ourContainers()).toEqual([]);
  });

  it("fails with sandbox_open_failed when a declared language is missing from the image", async () => {
    const pythonBackend = dockerSandbox({ languages: ["sh", "python"], labels: { [TEST_LABEL]: run } });
    const error = await errorOf(pythonBackend.open({ image }));
    expect(error.code).toBe("sandbox_open_failed");
    expect(error.message).toContain("python3");
    expect(await ourContainers()).toEqual([]);
  });

  it("honours an abort during open and removes the container it created", async () => {
    for (const delay of [0, 30, 80]) {
      const controller = new AbortController();
      const pending = backend.open(backend.parseSpec!({ image }), { signal: controller.signal });
      setTimeout(() => controller.abort(), delay);
      const outcome = await pending.then(
        (sandbox) => {
          opened.push(sandbox);
          return "opened";
        },
        (error: OpenRathError) => error.code,
      );
      // A fast open may finish before the abort; either way nothing may leak.
      expect(["aborted", "opened"]).toContain(outcome);
      await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
      expect(await ourContainers()).toEqual([]);
    }
  });

  it("kills the whole process tree on timeout, including children that start a new session", async () => {
    const sandbox = await track(open());
    const script = [
      "(while :; do echo tick >> tick; sleep 0.05; done) &",
      "setsid sh -c 'while :; do echo tock >> tock; sleep 0.05; done' &",
      "sleep 100",
    ].join("\n");
    const error = await errorOf(sandbox.exec(script, { timeoutMs: 800 }));
    expect(error.code).toBe("exec_timeout");
    expect(error.details).toMatchObject({ timeoutMs: 800 });
    const count = async () => (await sandbox.exec("cat tick tock | wc -l")).stdout.trim();
    const before = await count();
    await sleep(500);
    expect(await count()).toBe(before);
    const processes = await sandbox.exec("ps -o pid,args");
    expect(processes.stdout).not.toMatch(/tick|tock|sleep 100/);
  });

  it("runs commands as the spec's user (each with a group of its own) and writes files owned by it", async () => {
    const sandbox = await track(open({ user: "65534:65534", workspace: "/home/nobody/work" }));
    expect(sandbox.workspace).toBe("/home/nobody/work");
    const ids = (await sandbox.exec("id -u; id -g; pwd")).stdout.split("\n");
    expect(ids[0]).toBe("65534");
    expect(ids[2]).toBe("/home/nobody/work");
    const again = (await sandbox.exec("id -g")).stdout.trim();
    expect(Number(ids[1]), "two commands share a group id").not.toBe(Number(again));
    await sandbox.writeFile("sub/owned.txt", "mine");
    expect((await sandbox.exec("stat -c '%u:%g' sub sub/owned.txt")).stdout).toBe(
      "65534:65534\n65534:65534\n",
    );
    expect((await sandbox.exec("echo more >> sub/owned.txt && cat sub/owned.txt")).stdout).toBe("minemore\n");
  });

  it("keeps a file's executable bit when writeFile replaces it", async () => {
    const sandbox = await track(open());
    await sandbox.writeFile("run.sh", "echo one");
    await sandbox.exec("chmod +x run.sh");
    await sandbox.writeFile("run.sh", "echo two");
    expect((await sandbox.exec("./run.sh")).stdout).toBe("two\n");
  });

  it("refuses to replace a directory or write below a file", async () => {
    const sandbox = await track(open());
    await sandbox.writeFile("dir/inner.txt", "x");
    expect((await errorOf(sandbox.writeFile("dir", "x"))).code).toBe("not_a_file");
    expect((await errorOf(sandbox.writeFile("dir/inner.txt/below", "x"))).code).toBe("not_a_directory");
    expect(await sandbox.readFile("dir/inner.txt")).toBe("x");
  });

  it("lists symlinks as symlinks and names with spaces and newlines exactly", async () => {
    const sandbox = await track(open());
    await sandbox.exec(
      "mkdir d && printf 12 > 'd/a b.txt' && printf 123 > \"d/line$(printf '\\nbreak')\" && ln -s 'a b.txt' d/link",
    );
    const entries = await sandbox.listFiles("d");
    expect(entries).toEqual([
      { name: "a b.txt", path: "d/a b.txt", type: "file", size: 2 },
      { name: "line\nbreak", path: "d/line\nbreak", type: "file", size: 3 },
      { name: "link", path: "d/link", type: "symlink", size: 7 },
    ]);
  });

  it("runs code too long for one argument through a file", async () => {
    const sandbox = await track(open());
    const code = `${"# padding line\n".repeat(10_000)}echo "$((6 * 7))"`;
    const result = await sandbox.runCode(code, "sh");
    expect(result).toMatchObject({ exitCode: 0, stdout: "42\n" });
    expect((await sandbox.exec("ls -a /tmp")).stdout).not.toMatch(/openrath-code/);
  });

  it("uses the spec's timeoutMs as the default of each exec", async () => {
    const sandbox = await track(open({ timeoutMs: 500 }));
    expect((await errorOf(sandbox.exec("sleep 30"))).code).toBe("exec_timeout");
    expect((await sandbox.exec("sleep 1", { timeoutMs: 10_000 })).exitCode).toBe(0);
  });

  it("closes cleanly when the container was removed behind its back", async () => {
    const sandbox = await track(open());
    await docker.getContainer(sandbox.id).remove({ force: true });
    const error = await errorOf(sandbox.exec("true"));
    expect(error.code).toBe("sandbox_closed");
    await sandbox.close();
  });

  describe("cleanup when the owning process ends", () => {
    const childScript = (mode: "exit" | "signal") => {
      const file = join(scratch, `child-${mode}.mts`);
      const entry = fileURLToPath(new URL("./index.ts", import.meta.url));
      writeFileSync(
        file,
        [
          `import { dockerSandbox } from ${JSON.stringify(entry)};`,
          `const backend = dockerSandbox({ labels: { ${JSON.stringify(TEST_LABEL)}: ${JSON.stringify(run)} } });`,
          `const sandbox = await backend.open({ image: ${JSON.stringify(image)} });`,
          `process.stdout.write(sandbox.id + "\\n");`,
          mode === "exit" ? "process.exit(0);" : "setInterval(() => {}, 1000);",
        ].join("\n"),
      );
      return file;
    };

    async function ownedBy(mode: "exit" | "signal"): Promise<string> {
      const child = spawn(
        process.execPath,
        ["--conditions=@openrath/source", "--import", "tsx", childScript(mode)],
        {
          stdio: ["ignore", "pipe", "inherit"],
        },
      );
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
      while (!output.includes("\n")) {
        if (child.exitCode !== null) throw new Error(`child exited early (${child.exitCode})`);
        await sleep(50);
      }
      const id = output.trim();
      expect(await gone(id)).toBe(false);
      if (mode === "signal") child.kill("SIGTERM");
      await exited;
      for (let i = 0; i < 100 && !(await gone(id)); i++) await sleep(100);
      return id;
    }

    it("removes its containers when the process gets SIGTERM", async () => {
      expect(await gone(await ownedBy("signal"))).toBe(true);
    });

    it("removes its containers when the process exits without closing them", async () => {
      expect(await gone(await ownedBy("exit"))).toBe(true);
    });
  });
});
