// The deploy/ definitions, checked without a cluster or a compose plugin: every Kubernetes
// manifest against the Kubernetes API schemas (kubernetes-models, Kubernetes 1.27), the kustomize
// base against its files, and the properties the operations docs promise (hardening, probes,
// grace periods, migrate-first) on the manifests and compose.yaml.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { Job } from "kubernetes-models/batch/v1/Job";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";

const DEPLOY = join(import.meta.dirname, "..", "..", "deploy");
const BASE = join(DEPLOY, "kubernetes", "base");

type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: parsed YAML, checked by the schemas below
  spec?: any;
  [key: string]: unknown;
};

/** The model of each kind the base uses; a kind missing here fails the test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "rbac.authorization.k8s.io/v1/Role": Role,
  "rbac.authorization.k8s.io/v1/RoleBinding": RoleBinding,
  "batch/v1/Job": Job,
  "apps/v1/Deployment": Deployment,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
};

const kustomization = parse(readFileSync(join(BASE, "kustomization.yaml"), "utf8")) as {
  namespace: string;
  resources: string[];
  images: { name: string; newName: string; digest?: string }[];
};
const files = readdirSync(BASE).filter((file) => file.endsWith(".yaml") && file !== "kustomization.yaml");
const manifests: (Manifest & { file: string })[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(BASE, file), "utf8")).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
    return { ...(doc.toJS() as Manifest), file };
  }),
);
const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const named = (kind: string, name: string) => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};

describe("deploy/kubernetes/base", () => {
  it("lists every manifest file in its kustomization, and only those", () => {
    expect([...kustomization.resources].sort()).toEqual([...files].sort());
  });

  it.each(manifests.map((m) => [`${m.file}: ${m.kind} ${m.metadata.name}`, m] as const))(
    "%s is valid against the Kubernetes API schema",
    (_, manifest) => {
      const { file: _file, ...object } = manifest;
      const model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      expect(model, `no schema for ${manifest.apiVersion} ${manifest.kind}`).toBeDefined();
      expect(() => new (model as NonNullable<typeof model>)(object as never).validate()).not.toThrow();
    },
  );

  it("is namespace-scoped: no object sets a namespace (the kustomization does) or is cluster-wide", () => {
    expect(kustomization.namespace).toBe("openrath");
    for (const m of manifests) expect(m.metadata.namespace, `${m.kind} ${m.metadata.name}`).toBeUndefined();
    const clusterWide = ["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"];
    expect(manifests.filter((m) => clusterWide.includes(m.kind))).toEqual([]);
  });

  it("pins the image by digest", () => {
    expect(kustomization.images).toEqual([
      expect.objectContaining({ name: "openrath", digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }),
    ]);
  });

  const pods = [
    ...byKind("Deployment").map((d) => [d.metadata.name, d.spec.template.spec] as const),
    ...byKind("Job").map((j) => [j.metadata.name, j.spec.template.spec] as const),
  ];

  it.each(pods)(
    "%s runs non-root, seccomp RuntimeDefault, read-only root, no capabilities, no API token",
    (_, pod) => {
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 65532,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        expect(container.image, container.name).toBe("openrath");
        expect(container.securityContext, container.name).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
        expect(
          container.resources?.requests?.cpu,
          `${container.name} needs a CPU request for the HPA`,
        ).toBeDefined();
        expect(container.resources?.limits?.memory, container.name).toBeDefined();
      }
    },
  );

  it("gives the migrate Job its own service account, role and secret, which nothing else uses", () => {
    const job = named("Job", "openrath-migrate").spec.template.spec;
    expect(job.serviceAccountName).toBe("openrath-migrate");
    expect(named("RoleBinding", "openrath-migrate")).toMatchObject({
      roleRef: { kind: "Role", name: "openrath-migrate" },
      subjects: [{ kind: "ServiceAccount", name: "openrath-migrate" }],
    });
    expect(job.containers[0].envFrom).toContainEqual({ secretRef: { name: "openrath-migrate" } });
    expect(job.containers[0].args).toEqual(["--grant", "$(OPENRATH_RUNTIME_ROLE)"]);
    for (const deployment of byKind("Deployment")) {
      const spec = deployment.spec.template.spec;
      expect(spec.serviceAccountName).not.toBe("openrath-migrate");
      for (const container of [...spec.initContainers, ...spec.containers]) {
        expect(container.envFrom).not.toContainEqual({ secretRef: { name: "openrath-migrate" } });
        expect(container.envFrom).toContainEqual({ secretRef: { name: "openrath-runtime" } });
      }
      // Started only on a schema this release can run on.
      expect(spec.initContainers.map((c: { args: string[] }) => c.args)).toContainEqual([
        "migrate",
        "--check",
      ]);
    }
  });

  it("runs the API as serve --no-worker and the worker as worker, each with live and ready probes on its own endpoint", () => {
    const api = named("Deployment", "openrath-api").spec.template.spec.containers[0];
    expect(api.args).toEqual(["serve", "--no-worker"]);
    expect(api.livenessProbe.httpGet).toEqual({ path: "/health/live", port: "http" });
    expect(api.readinessProbe.httpGet).toEqual({ path: "/health/ready", port: "http" });
    expect(api.ports).toContainEqual(expect.objectContaining({ name: "http", containerPort: 8787 }));
    const worker = named("Deployment", "openrath-worker").spec.template.spec.containers[0];
    expect(worker.args).toEqual(["worker"]);
    expect(worker.livenessProbe.httpGet).toEqual({ path: "/health/live", port: "health" });
    expect(worker.readinessProbe.httpGet).toEqual({ path: "/health/ready", port: "health" });
    const config = named("ConfigMap", "openrath-config").data as Record<string, string>;
    expect(worker.ports).toContainEqual(
      expect.objectContaining({ name: "health", containerPort: Number(config.OPENRATH_WORKER_HEALTH_PORT) }),
    );
    expect(api.ports[0].containerPort).toBe(Number(config.PORT));
  });

  it("gives workers a termination grace above their drain deadline (the worker's drainMs default, 10 s)", () => {
    const source = readFileSync(
      join(DEPLOY, "..", "packages", "runtime-durable", "src", "worker", "worker.ts"),
      "utf8",
    );
    const drainMs = Number(/options\.drainMs \?\? ([\d_]+)\)/.exec(source)?.[1]?.replaceAll("_", ""));
    expect(drainMs).toBeGreaterThan(0);
    const grace = named("Deployment", "openrath-worker").spec.template.spec.terminationGracePeriodSeconds;
    expect(grace * 1000).toBeGreaterThan(drainMs);
    expect(grace * 1000).toBeLessThanOrEqual(drainMs + 15_000);
  });

  it("has disruption budgets for the API and the workers, selecting their pods", () => {
    for (const name of ["openrath-api", "openrath-worker"]) {
      const pdb = named("PodDisruptionBudget", name);
      expect(pdb.spec.selector.matchLabels).toEqual(named("Deployment", name).spec.selector.matchLabels);
    }
  });

  it("autoscales the API on CPU and the workers on the queue depth metric", () => {
    const api = named("HorizontalPodAutoscaler", "openrath-api").spec;
    expect(api.scaleTargetRef).toMatchObject({ kind: "Deployment", name: "openrath-api" });
    expect(api.metrics).toEqual([
      {
        type: "Resource",
        resource: { name: "cpu", target: expect.objectContaining({ type: "Utilization" }) },
      },
    ]);
    const worker = named("HorizontalPodAutoscaler", "openrath-worker").spec;
    expect(worker.scaleTargetRef).toMatchObject({ kind: "Deployment", name: "openrath-worker" });
    expect(worker.metrics[0]).toMatchObject({
      type: "External",
      external: { metric: { name: "openrath_queue_depth" } },
    });
    // The name is the Prometheus form of the OTel metric @openrath/otel records.
    const names = readFileSync(join(DEPLOY, "..", "packages", "otel", "src", "metrics", "names.ts"), "utf8");
    const otel = /queueDepth: "([^"]+)"/.exec(names)?.[1];
    expect(otel?.replaceAll(".", "_")).toBe("openrath_queue_depth");
  });

  it("denies all traffic by default and allows the API's ingress on its port and the workers' scrape on their health port only", () => {
    const deny = named("NetworkPolicy", "default-deny").spec;
    expect(deny).toEqual({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
    const ingress = byKind("NetworkPolicy").filter((p) => p.spec.policyTypes.includes("Ingress"));
    expect(ingress.map((p) => p.metadata.name).sort()).toEqual([
      "api-ingress",
      "api-metrics-scrape",
      "default-deny",
      "worker-metrics-scrape",
    ]);
    for (const name of ["api-ingress", "api-metrics-scrape"]) {
      const policy = named("NetworkPolicy", name).spec;
      expect(policy.podSelector.matchLabels["app.kubernetes.io/component"]).toBe("api");
      expect(policy.ingress.flatMap((rule: { ports: unknown[] }) => rule.ports)).toEqual([
        { protocol: "TCP", port: 8787 },
      ]);
    }
    // The worker's health port (probes and its own /metrics) is open to the monitoring namespace alone.
    const scrape = named("NetworkPolicy", "worker-metrics-scrape").spec;
    const worker = named("Deployment", "openrath-worker").spec.template.spec.containers[0];
    const healthPort = worker.ports.find((p: { name?: string }) => p.name === "health")?.containerPort;
    expect(scrape.podSelector.matchLabels["app.kubernetes.io/component"]).toBe("worker");
    expect(scrape.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }],
        ports: [{ protocol: "TCP", port: healthPort }],
      },
    ]);
    expect(healthPort).toBe(8788);
    // No egress rule reaches link-local (cloud metadata) addresses.
    for (const policy of byKind("NetworkPolicy")) {
      for (const rule of policy.spec.egress ?? []) {
        for (const peer of rule.to ?? []) {
          if (peer.ipBlock) expect(peer.ipBlock.except, policy.metadata.name).toContain("169.254.0.0/16");
        }
      }
    }
  });
});

describe("deploy/compose.yaml", () => {
  // biome-ignore lint/suspicious/noExplicitAny: parsed YAML
  const compose = parse(readFileSync(join(DEPLOY, "compose.yaml"), "utf8"), { merge: true }) as any;
  const services = compose.services as Record<string, Record<string, unknown>>;
  const openrath = ["migrate", "api", "worker"];

  it("has migrate, api, worker and PostgreSQL by default, Redis and an S3-compatible server behind profiles", () => {
    for (const name of ["postgres", ...openrath]) expect(services[name]?.profiles, name).toBeUndefined();
    expect(services.redis?.profiles).toEqual(["redis"]);
    expect(services.s3?.profiles).toEqual(["s3"]);
    expect(services["s3-bucket"]?.profiles).toEqual(["s3"]);
  });

  it("runs each role from the one image by its command", () => {
    expect(services.migrate?.command).toEqual(["migrate"]);
    expect(services.api?.command).toEqual(["serve", "--no-worker"]);
    expect(services.worker?.command).toEqual(["worker"]);
    for (const name of openrath) {
      expect(services[name]?.build).toEqual({ context: "..", dockerfile: "deploy/Containerfile" });
      expect(services[name]?.image).toBe(services.api?.image);
    }
  });

  it("migrates once, after PostgreSQL is healthy and before the API and workers start", () => {
    expect(services.migrate?.restart).toBe("no");
    expect(services.migrate?.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
    for (const name of ["api", "worker"]) {
      expect(services[name]?.depends_on).toMatchObject({
        migrate: { condition: "service_completed_successfully" },
        redis: { required: false },
      });
    }
  });

  it.each(openrath)(
    "hardens %s as the image: read-only root, cap_drop ALL, no-new-privileges, user 65532",
    (name) => {
      const service = services[name] as Record<string, unknown>;
      expect(service.read_only).toBe(true);
      expect(service.cap_drop).toEqual(["ALL"]);
      expect(service.security_opt).toEqual(["no-new-privileges:true"]);
      expect(service.user).toBe("65532:65532");
      expect(service.tmpfs).toEqual(expect.arrayContaining([expect.stringMatching(/^\/tmp:/)]));
    },
  );

  it("has health checks on every long-running service, without a shell in the OpenRath image", () => {
    for (const name of ["postgres", "api", "worker", "redis", "s3"]) {
      expect((services[name]?.healthcheck as { test?: unknown[] })?.test?.[0], name).toBe("CMD");
    }
    for (const name of ["api", "worker"]) {
      const test = (services[name]?.healthcheck as { test: string[] } | undefined)?.test ?? [];
      expect(test[1]).toBe("/nodejs/bin/node");
    }
    const workerEnv = (services.worker?.environment ?? {}) as Record<string, string>;
    expect(String(workerEnv.OPENRATH_WORKER_HEALTH_PORT)).toBe("8788");
  });

  it("lets workers scale: no container name, no published port, grace above the drain deadline", () => {
    expect(services.worker?.container_name).toBeUndefined();
    expect(services.worker?.ports).toBeUndefined();
    expect(services.worker?.stop_grace_period).toBe("20s");
  });
});

describe("deploy/Containerfile", () => {
  const text = readFileSync(join(DEPLOY, "Containerfile"), "utf8");
  const stages = text.split(/^FROM /m).slice(1);
  const final = stages.at(-1) ?? "";

  it("is multi-stage, and every base is an ARG pinned by digest", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const bases = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1] as string);
    const args = Object.fromEntries(
      [...text.matchAll(/^ARG ([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    );
    for (const base of bases) {
      const name = /^\$\{([A-Z_]+)\}$/.exec(base)?.[1];
      expect(name, `FROM ${base} names an ARG`).toBeDefined();
      expect(args[name as string]).toMatch(/@sha256:[0-9a-f]{64}$/);
    }
  });

  it("runs as a non-root user with an exec-form entry point and no RUN in the final stage (no shell there)", () => {
    expect(/^USER (\S+)$/m.exec(final)?.[1]).toBe("65532:65532");
    expect(/^ENTRYPOINT (\[.+\])$/m.exec(final)?.[1]).toBe('["/nodejs/bin/node", "/app/dist/bin.js"]');
    expect(/^CMD (\[.+\])$/m.exec(final)?.[1]).toBe('["serve", "--no-worker"]');
    expect(final).not.toMatch(/^RUN /m);
    for (const label of ["title", "description", "licenses", "version", "revision", "source"]) {
      expect(final).toContain(`org.opencontainers.image.${label}=`);
    }
  });
});
