// The image, built here the only way this machine allows: no registry is reachable, so the
// Containerfile's bases cannot be pulled. The test assembles the same /app the Containerfile's
// build stage makes (deploy/image/assemble.mjs), puts it on a root filesystem holding only this
// machine's Node.js binary and the shared libraries it links (no shell, no package manager, as
// the distroless base), imports it with the Containerfile's user, entry point and labels, and
// runs the stack from it: migrate, the API and a worker, each read-only and without capabilities.
import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { assembleApp } from "../../deploy/image/assemble.mjs";

const ROOT = join(import.meta.dirname, "..", "..");
const POSTGRES_URL = process.env.OPENRATH_TEST_POSTGRES_URL;
const POSTGRES_BIN = process.env.OPENRATH_TEST_POSTGRES_BIN;
const dockerAnswers = spawnSync("docker", ["version"], { stdio: "ignore", timeout: 10_000 }).status === 0;
const available =
  dockerAnswers && POSTGRES_URL !== undefined && POSTGRES_BIN !== undefined && process.platform === "linux";
if (!available && process.env.OPENRATH_REQUIRE_SERVICES && process.env.OPENRATH_REQUIRE_SERVICES !== "0") {
  throw new Error(
    "the image test needs a Docker engine and OPENRATH_TEST_POSTGRES_URL and _BIN (tooling/scripts/services.mjs)",
  );
}

const id = randomUUID().slice(0, 8);
const IMAGE = `openrath-test/openrath:${id}`;
const SCHEMA = `deploy_image_${id}`;
const ROLE = `deploy_image_runtime_${id}`;
const containers: string[] = [];
const scratch: string[] = [];

/** The Containerfile's final-stage settings, read from it so the imported image cannot drift. */
function containerfileSettings() {
  const text = readFileSync(join(ROOT, "deploy", "Containerfile"), "utf8");
  const final = text.slice(text.lastIndexOf("\nFROM "));
  const line = (directive: string) => {
    const match = new RegExp(`^${directive} (.+)$`, "m").exec(final);
    if (!match?.[1]) throw new Error(`the Containerfile's last stage has no ${directive}`);
    return match[1];
  };
  const labels = [...final.matchAll(/(org\.opencontainers\.image\.[a-z]+)="([^"$]*)"/g)].map(
    ([, key, value]) => `${key}=${JSON.stringify(value)}`,
  );
  return {
    user: line("USER"),
    workdir: line("WORKDIR"),
    entrypoint: line("ENTRYPOINT"),
    cmd: line("CMD"),
    labels,
  };
}

/** Every shared library `binary` loads, by the path the dynamic linker finds it at. */
function sharedLibraries(binary: string): string[] {
  const out = execFileSync("ldd", [binary], { encoding: "utf8" });
  return [...out.matchAll(/(\/[^\s)]+)/g)]
    .map((m) => m[1] as string)
    .filter((path) => !path.includes("vdso"));
}

function buildImage() {
  execFileSync(
    "pnpm",
    ["exec", "turbo", "run", "build", "--filter", "@openrath/cli...", "--output-logs=errors-only"],
    {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const root = mkdtempSync(join(tmpdir(), "openrath-image-root-"));
  scratch.push(root);
  assembleApp(join(root, "app"), { offline: true });
  mkdirSync(join(root, "nodejs", "bin"), { recursive: true });
  copyFileSync(process.execPath, join(root, "nodejs", "bin", "node"));
  chmodSync(join(root, "nodejs", "bin", "node"), 0o755);
  for (const lib of sharedLibraries(process.execPath)) {
    mkdirSync(join(root, dirname(lib)), { recursive: true });
    copyFileSync(lib, join(root, lib));
  }
  for (const dir of ["etc", "tmp", "var/lib/openrath"]) mkdirSync(join(root, dir), { recursive: true });
  chmodSync(join(root, "tmp"), 0o1777);
  writeFileSync(
    join(root, "etc", "passwd"),
    "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
  );
  writeFileSync(join(root, "etc", "group"), "root:x:0:\nnonroot:x:65532:\n");
  const settings = containerfileSettings();
  const changes = [
    `USER ${settings.user}`,
    `WORKDIR ${settings.workdir}`,
    "ENV NODE_ENV=production OPENRATH_HOST=0.0.0.0 OPENRATH_STATE=/var/lib/openrath",
    `ENTRYPOINT ${settings.entrypoint}`,
    `CMD ${settings.cmd}`,
    ...settings.labels.map((label) => `LABEL ${label}`),
  ].flatMap((change) => ["--change", change]);
  execFileSync(
    "sh",
    [
      "-c",
      'root="$1"; image="$2"; shift 2; tar -C "$root" --owner=0 --group=0 -c . | docker import "$@" - "$image"',
      "sh",
      root,
      IMAGE,
      ...changes,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
}

/** `docker run` with the hardening compose and Kubernetes apply: read-only, no capabilities. */
function dockerRunArgs(name: string, env: Record<string, string>, mounts: string[] = []): string[] {
  containers.push(name);
  return [
    "run",
    "--name",
    name,
    // Networking is off for containers on this machine (dockerd --bridge=none): the host's
    // loopback is where PostgreSQL and the test listen.
    "--network",
    "host",
    "--read-only",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges:true",
    "--tmpfs",
    "/tmp:rw,mode=1777",
    "--tmpfs",
    "/var/lib/openrath:rw,mode=1777",
    ...mounts.flatMap((mount) => ["-v", mount]),
    ...Object.entries(env).flatMap(([key, value]) => ["-e", `${key}=${value}`]),
  ];
}

/** Runs one SQL statement on the test PostgreSQL as its superuser. */
function psql(statement: string) {
  return spawnSync(join(POSTGRES_BIN ?? "", "psql"), [POSTGRES_URL ?? "", "-qc", statement], {
    encoding: "utf8",
  });
}

function docker(args: string[], timeout = 120_000) {
  return spawnSync("docker", args, { encoding: "utf8", timeout });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function untilOk(url: string, name: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const response = await fetch(url).catch(() => undefined);
    if (response?.ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} never answered 200; ${name} logs:\n${docker(["logs", name]).stderr}`);
}

describe.skipIf(!available)("the container image (imported from a root filesystem built here)", () => {
  beforeAll(() => buildImage(), 600_000);

  afterAll(() => {
    for (const name of containers) docker(["rm", "-f", name]);
    docker(["rmi", "-f", IMAGE]);
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
    psql(`drop schema if exists ${SCHEMA} cascade`);
    psql(`drop owned by ${ROLE}`);
    psql(`drop role if exists ${ROLE}`);
  });

  it("runs as user 65532 with the OCI labels, and has no shell to run", () => {
    const [config] = JSON.parse(docker(["image", "inspect", IMAGE]).stdout) as {
      Config: { User: string; Entrypoint: string[]; Cmd: string[]; Labels: Record<string, string> };
    }[];
    expect(config?.Config.User).toBe("65532:65532");
    expect(config?.Config.Entrypoint).toEqual(["/nodejs/bin/node", "/app/dist/bin.js"]);
    expect(config?.Config.Cmd).toEqual(["serve", "--no-worker"]);
    expect(config?.Config.Labels["org.opencontainers.image.title"]).toBe("openrath");
    expect(config?.Config.Labels["org.opencontainers.image.licenses"]).toBe("BSD-3-Clause");
    for (const shell of ["/bin/sh", "/bin/bash", "/usr/bin/sh"]) {
      const tried = docker(["run", "--rm", "--network", "none", "--entrypoint", shell, IMAGE, "-c", "true"]);
      expect(tried.status, `${shell} ran`).not.toBe(0);
    }
  });

  it("runs migrate, the migrate Job's openrath-migrate --grant to a runtime role, then as that role the API (serve --no-worker) and a worker, read-only and without capabilities; compose's health checks pass inside them; a run submitted over HTTP succeeds, and both stop on SIGTERM with exit 0", async () => {
    const url = POSTGRES_URL ?? "";
    const port = await freePort();
    const healthPort = await freePort();
    const workflows = mkdtempSync(join(tmpdir(), "openrath-image-workflows-"));
    scratch.push(workflows);
    chmodSync(workflows, 0o755);
    writeFileSync(
      join(workflows, "greet.mjs"),
      [
        'import { defineWorkflow } from "@openrath/runtime-durable";',
        'export const greet = defineWorkflow("greet").step("answer", async (session) => session.append({ kind: "assistant", content: "hello from the image" }), { entry: true });',
        "",
      ].join("\n"),
    );
    chmodSync(join(workflows, "greet.mjs"), 0o644);
    const env = { DATABASE_URL: url, OPENRATH_DB_SCHEMA: SCHEMA, OPENRATH_LOG_LEVEL: "warn" };
    const mounts = [`${workflows}:/app/workflows:ro`];

    // compose's migrate, as the schema's owner.
    const migrate = docker([...dockerRunArgs(`openrath-migrate-${id}`, env), IMAGE, "migrate"]);
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain("the schema is up to date");

    // The Kubernetes migrate Job's command and arguments (openrath-migrate --grant, shipped in the
    // image), as the owner; then everything else as the runtime role it granted row rights to.
    psql(`create role ${ROLE} login`);
    const job = parseAllDocuments(
      readFileSync(join(ROOT, "deploy", "kubernetes", "base", "migrate-job.yaml"), "utf8"),
    )
      .map((doc) => doc.toJS())
      .find((doc) => doc.kind === "Job");
    const container = job.spec.template.spec.containers[0] as { command: string[]; args: string[] };
    const [entry, ...jobCommand] = container.command;
    const granted = docker([
      ...dockerRunArgs(`openrath-job-${id}`, { OPENRATH_DATABASE_URL: url, OPENRATH_DB_SCHEMA: SCHEMA }),
      "--entrypoint",
      entry as string,
      IMAGE,
      ...jobCommand,
      ...container.args.map((arg) => arg.replace("$(OPENRATH_RUNTIME_ROLE)", ROLE)),
    ]);
    expect(granted.status, granted.stderr).toBe(0);
    expect(`${granted.stdout}${granted.stderr}`).toContain(
      `granted row access on schema "${SCHEMA}" to ${ROLE}`,
    );
    const runtimeUrl = new URL(url);
    runtimeUrl.username = ROLE;
    runtimeUrl.password = "";
    const runtimeEnv = { ...env, DATABASE_URL: runtimeUrl.href };
    // The Deployments' init container, as the runtime role.
    const check = docker([...dockerRunArgs(`openrath-check-${id}`, runtimeEnv), IMAGE, "migrate", "--check"]);
    expect(check.status, check.stderr).toBe(0);

    const made = docker([
      ...dockerRunArgs(`openrath-token-${id}`, runtimeEnv),
      IMAGE,
      "tokens",
      "create",
      "--name",
      "image-test",
      "--grants",
      "*",
    ]);
    expect(made.status, made.stderr).toBe(0);
    const token = made.stdout.trim();

    const api = `openrath-api-${id}`;
    const started = docker([
      ...dockerRunArgs(api, { ...runtimeEnv, PORT: String(port), OPENRATH_HOST: "127.0.0.1" }, mounts),
      "-d",
      IMAGE,
      "serve",
      "--no-worker",
      "--workflows",
      "/app/workflows/greet.mjs",
    ]);
    expect(started.status, started.stderr).toBe(0);
    const worker = `openrath-worker-${id}`;
    const startedWorker = docker([
      ...dockerRunArgs(
        worker,
        { ...runtimeEnv, OPENRATH_HOST: "127.0.0.1", OPENRATH_WORKER_HEALTH_PORT: String(healthPort) },
        mounts,
      ),
      "-d",
      IMAGE,
      "worker",
      "--workflows",
      "/app/workflows/greet.mjs",
    ]);
    expect(startedWorker.status, startedWorker.stderr).toBe(0);
    const base = `http://127.0.0.1:${port}`;
    await untilOk(`${base}/health/ready`, api);
    await untilOk(`http://127.0.0.1:${healthPort}/health/ready`, worker);

    const created = await fetch(`${base}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ assistant: "greet", input: "hi" }),
    });
    expect(created.status).toBe(201);
    const run = (await created.json()) as { id: string };
    let status = "";
    for (let i = 0; i < 600 && status !== "succeeded" && status !== "failed"; i++) {
      const read = await fetch(`${base}/v1/runs/${run.id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      status = ((await read.json()) as { status: string }).status;
      if (status !== "succeeded") await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe("succeeded");

    // compose.yaml's health checks, run as compose runs them: exec'd in the container, no shell.
    const compose = parse(readFileSync(join(ROOT, "deploy", "compose.yaml"), "utf8"), { merge: true });
    for (const [service, name] of [
      ["api", api],
      ["worker", worker],
    ] as const) {
      const [kind, ...test] = compose.services[service].healthcheck.test as string[];
      expect(kind).toBe("CMD");
      const checked = docker(["exec", name, ...test]);
      expect(checked.status, `${service} health check: ${checked.stderr}`).toBe(0);
    }

    for (const name of [worker, api]) {
      expect(docker(["stop", "--time", "20", name], 60_000).status).toBe(0);
      const state = JSON.parse(docker(["inspect", "--format", "{{json .State}}", name]).stdout) as {
        ExitCode: number;
      };
      expect(state.ExitCode, docker(["logs", name]).stderr).toBe(0);
    }
  });
});
