// The repository's package-shape check (tooling/scripts/check-package-shape.mjs), run on small
// fixture repositories: here, the rule that an adapter's `./register` entry types its key.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const script = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../../tooling/scripts/check-package-shape.mjs",
);
const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A repository with one adapter package `sandbox-demo` whose files are `files`. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "package-shape-"));
  roots.push(root);
  const dir = join(root, "packages", "sandbox-demo");
  const entry = (name: string, source: string) => ({
    "@openrath/source": `./src/${source}.ts`,
    types: `./dist/${name}.d.ts`,
    default: `./dist/${name}.js`,
  });
  const manifest = {
    name: "@openrath/sandbox-demo",
    license: "BSD-3-Clause",
    type: "module",
    engines: { node: ">=20.19" },
    sideEffects: ["./dist/register.js", "./src/register.ts"],
    exports: { ".": entry("index", "index"), "./register": entry("register", "register") },
    peerDependencies: { "@openrath/core": "workspace:>=0.1.0 <1.0.0" },
  };
  const all: Record<string, string> = {
    "package.json": JSON.stringify(manifest),
    "tsup.config.ts": 'libraryConfig({ index: "src/index.ts", register: "src/register.ts" })',
    "src/demo.ts": "export const demoSandbox = () => ({ kind: 'sandbox', key: 'demo' });\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return root;
}

function check(root: string): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(process.execPath, [script, root], { encoding: "utf8" }) };
  } catch (error) {
    const e = error as { status: number; stdout: string };
    return { code: e.status, out: e.stdout };
  }
}

const augmentation = `declare module "@openrath/core" {
  interface SandboxBackends {
    /** A demo backend; see {@link DemoSpec}. */
    demo: { readonly image?: string } | undefined;
  }
}
`;

const register = (imports: string) => `import { defaultRegistry } from "@openrath/core";
import { demoSandbox } from "./demo.js";
${imports}
defaultRegistry().registerSandbox(demoSandbox());
`;

describe("package-shape: a ./register entry types its key", () => {
  it("passes when the register entry reaches the file declaring the key", () => {
    const root = fixture({
      "src/index.ts": `export { demoSandbox } from "./demo.js";\n${augmentation}`,
      "src/register.ts": register('import "./index.js";'),
    });
    expect(check(root)).toEqual({ code: 0, out: "package-shape: 1 packages ok\n" });
  });

  it("passes through a type-only re-export too", () => {
    const root = fixture({
      "src/index.ts": 'export { demoSandbox } from "./demo.js";\n',
      "src/spec.ts": `export interface DemoSpec { readonly image?: string }\n${augmentation}`,
      "src/register.ts": register('export type { DemoSpec } from "./spec.js";'),
    });
    expect(check(root).code).toBe(0);
  });

  it("fails when only the main entry declares the key", () => {
    const root = fixture({
      "src/index.ts": `export { demoSandbox } from "./demo.js";\n${augmentation}`,
      "src/register.ts": register(""),
    });
    const { code, out } = check(root);
    expect(code).toBe(1);
    expect(out).toContain(
      'package-shape: @openrath/sandbox-demo: export "./register" (./src/register.ts) does not type its key',
    );
    expect(out).toContain("interface SandboxBackends");
  });

  it("fails when the augmentation is of the other kind of backend", () => {
    const root = fixture({
      "src/index.ts": `export { demoSandbox } from "./demo.js";\n${augmentation.replace("SandboxBackends", "MemoryBackends")}`,
      "src/register.ts": register('import "./index.js";'),
    });
    expect(check(root).out).toContain("interface SandboxBackends { <key>: <Spec> }");
  });
});
