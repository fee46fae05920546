// The repository's package-shape check (tooling/scripts/check-package-shape.mjs), run on small
// fixture repositories: the rules that an adapter declares its registry keys in one place (its
// factory's file) and that its `./register` entry types them, and the one README layout.
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

/** A README in the layout every package follows. */
const README = `# @openrath/sandbox-demo

A demo sandbox.

## Install

\`\`\`sh
pnpm add @openrath/sandbox-demo
\`\`\`

## Example

\`\`\`ts
import "@openrath/sandbox-demo/register";
\`\`\`

## Options

None.

## Behaviour

It demonstrates.

## Limits

It does nothing else.

## Testing

\`pnpm test\`.
`;

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
    "README.md": README,
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

const spec = "export interface DemoSpec { readonly image?: string }\n";
const factory = `${spec}export const demoSandbox = () => ({ kind: "sandbox", key: "demo" });\n${augmentation}`;
const typesReexport = 'export type { DemoSpec } from "./demo.js";';

describe("package-shape: the registry keys in one place, typed by ./register", () => {
  it("passes when the factory's file declares the key and ./register re-exports a type from it", () => {
    const root = fixture({
      "src/index.ts": 'export { type DemoSpec, demoSandbox } from "./demo.js";\n',
      "src/demo.ts": factory,
      "src/register.ts": register(typesReexport),
    });
    expect(check(root)).toEqual({ code: 0, out: "package-shape: 1 packages ok\n" });
  });

  it("fails when the key is declared elsewhere than the factory's file", () => {
    const root = fixture({
      "src/index.ts": `export { demoSandbox } from "./demo.js";\n${augmentation}`,
      "src/demo.ts": `${spec}export const demoSandbox = () => ({ kind: "sandbox", key: "demo" });\n`,
      "src/register.ts": register(typesReexport),
    });
    const { code, out } = check(root);
    expect(code).toBe(1);
    expect(out).toContain(
      'package-shape: @openrath/sandbox-demo: src/index.ts declares module "@openrath/core" registry keys; declare them in one place, at the end of src/demo.ts',
    );
    expect(out).toContain(
      "does not type its key: src/demo.ts, the file it imports its factory from, must declare",
    );
  });

  it("fails when ./register imports values from more than its factory's file", () => {
    const root = fixture({
      "src/index.ts": 'export { demoSandbox } from "./demo.js";\n',
      "src/demo.ts": factory,
      "src/register.ts": register(`${typesReexport}\nimport "./index.js";`),
    });
    expect(check(root).out).toContain(
      'export "./register" (./src/register.ts) imports values from src/demo.ts, src/index.ts; it imports the factory it registers from one file',
    );
  });

  it("fails when a second file declares keys too", () => {
    const root = fixture({
      "src/index.ts": 'export { demoSandbox } from "./demo.js";\n',
      "src/demo.ts": factory,
      "src/spec.ts": `${spec}${augmentation}`,
      "src/register.ts": register(typesReexport),
    });
    expect(check(root).out).toContain("src/spec.ts declares module");
  });

  it("fails when ./register imports only the factory's value, which the declaration bundle drops", () => {
    const root = fixture({
      "src/index.ts": 'export { demoSandbox } from "./demo.js";\n',
      "src/demo.ts": factory,
      "src/register.ts": register(""),
    });
    const { code, out } = check(root);
    expect(code).toBe(1);
    expect(out).toContain(
      'export "./register" (./src/register.ts) re-exports no type from src/demo.ts: add export type { <Spec> } from "./demo.js"',
    );
  });

  it("fails when the declaration is of the other kind of backend", () => {
    const root = fixture({
      "src/index.ts": 'export { demoSandbox } from "./demo.js";\n',
      "src/demo.ts": factory.replace("SandboxBackends", "MemoryBackends"),
      "src/register.ts": register(typesReexport),
    });
    expect(check(root).out).toContain("interface SandboxBackends { <key>: <Spec> }");
  });

  it("ignores declarations in tests and test helpers", () => {
    const root = fixture({
      "src/index.ts": 'export { demoSandbox } from "./demo.js";\n',
      "src/demo.ts": factory,
      "src/demo.test.ts": augmentation,
      "src/testing/fake.ts": augmentation,
      "src/register.ts": register(typesReexport),
    });
    expect(check(root).code).toBe(0);
  });
});

describe("package-shape: one README layout", () => {
  const ok = {
    "src/index.ts": 'export { demoSandbox } from "./demo.js";\n',
    "src/demo.ts": factory,
    "src/register.ts": register(typesReexport),
  };

  it("passes with other sections between the six and headings inside code blocks ignored", () => {
    const readme = README.replace("## Limits", "## Errors\n\nCoded.\n\n## Limits").replace(
      "pnpm add @openrath/sandbox-demo",
      "# not a heading\npnpm add @openrath/sandbox-demo\n## nor this",
    );
    expect(check(fixture({ ...ok, "README.md": readme })).code).toBe(0);
  });

  it("fails without a README", () => {
    const root = fixture(ok);
    rmSync(join(root, "packages", "sandbox-demo", "README.md"));
    expect(check(root).out).toContain("@openrath/sandbox-demo: has no README.md");
  });

  it("names the missing sections, and the near miss", () => {
    const { code, out } = check(fixture({ ...ok, "README.md": README.replace("## Testing", "## Tests") }));
    expect(code).toBe(1);
    expect(out).toContain('README.md has no "## Testing" (it has "## Tests")');
  });

  it("fails when the sections are out of order, or Install is not first, or Testing not last", () => {
    const swapped = README.replace("## Limits", "## TMP")
      .replace("## Behaviour", "## Limits")
      .replace("## TMP", "## Behaviour");
    expect(check(fixture({ ...ok, "README.md": swapped })).out).toContain(
      "sections are in the order Install, Example, Options, Limits, Behaviour, Testing",
    );
    const first = README.replace("## Install", "## Overview\n\nFirst.\n\n## Install");
    expect(check(fixture({ ...ok, "README.md": first })).out).toContain('first section is "## Overview"');
    const last = `${README}\n## Changelog\n\nSee releases.\n`;
    expect(check(fixture({ ...ok, "README.md": last })).out).toContain('last section is "## Changelog"');
  });

  it("takes an install command written inline, and fails without one", () => {
    const inline = README.replace(
      "```sh\npnpm add @openrath/sandbox-demo\n```",
      "`pnpm add @openrath/sandbox-demo`",
    );
    expect(check(fixture({ ...ok, "README.md": inline })).code).toBe(0);
    const none = README.replace("```sh\npnpm add @openrath/sandbox-demo\n```", "Add it.");
    expect(check(fixture({ ...ok, "README.md": none })).out).toContain(
      '"## Install" (line 5) names no install command',
    );
  });

  it("fails when Example holds no code, or the title is not the package name", () => {
    const prose = README.replace(
      '```ts\nimport "@openrath/sandbox-demo/register";\n```',
      "Import the register entry.",
    );
    expect(check(fixture({ ...ok, "README.md": prose })).out).toContain(
      '"## Example" (line 11) holds no code block',
    );
    const title = README.replace("# @openrath/sandbox-demo", "# Demo sandbox");
    expect(check(fixture({ ...ok, "README.md": title })).out).toContain(
      'README.md starts with "# Demo sandbox"; expected "# @openrath/sandbox-demo"',
    );
  });
});
