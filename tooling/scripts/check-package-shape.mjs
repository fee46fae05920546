#!/usr/bin/env node
/**
 * Checks that every published package under `packages/*` has the shape the house style asks for:
 * its manifest (name, license, module type, engines, sideEffects, exports with the source condition
 * first), a tsup entry per export, core as a `workspace:>=0.1.0 <1.0.0` peer of every adapter, a
 * core main entry that runs in a browser (no `node:` module or Node builtin reachable from
 * `src/index.ts`), and:
 *
 * - The registry keys in one place. An adapter that types a key (`declare module "@openrath/core"
 *   { interface SandboxBackends | MemoryBackends { <key>: <Spec> } }`) declares it once, at the
 *   end of its factory's file: the file its `./register` entry imports the factory it registers
 *   from (`local-sandbox.ts`, `docker-sandbox.ts`, `bm25-memory.ts`). The register entry also
 *   re-exports a type from that file (`export type { LocalSandboxSpec } from "./local-sandbox.js"`),
 *   since the declaration bundler drops a value import, so importing only `…/register` types
 *   `session.to("<key>")`. Test files and `src/testing/` are not looked at.
 * - One README layout. `README.md` starts with `# <package name>`; its `##` headings (outside code
 *   blocks) hold these six, exactly as written, once each and in this order: `## Install`,
 *   `## Example`, `## Options`, `## Behaviour`, `## Limits`, `## Testing`. `## Install` is the
 *   first `##` heading and `## Testing` the last; other `##` sections (`## Errors`, a package's
 *   own topics) may stand between them, and `###` subsections anywhere. Install names the install
 *   command (`pnpm add …`, in a code block or inline) and Example holds a fenced code block (the
 *   example that runs). A section with nothing to say still exists and says so in a line (a package
 *   with no options of its own points at where its settings are).
 *
 * Usage: `node tooling/scripts/check-package-shape.mjs [root]`, where `root` is the repository to
 * check (default: the one this script lives in). Prints one `package-shape: <package>: <problem>`
 * line per problem and exits 1, or prints `package-shape: N packages ok`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SCOPE = "@openrath/";
const CORE = "@openrath/core";
const ENGINES = ">=20.19";
const LICENSE = "BSD-3-Clause";
const CONDITION_ORDER = ["@openrath/source", "types", "default"];
const DEPENDENCY_FIELDS = ["dependencies", "peerDependencies", "optionalDependencies", "devDependencies"];
const BUILTINS = new Set(builtinModules.filter((m) => !m.startsWith("_")));

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..", ".."));
const problems = [];
const report = (pkg, problem) => problems.push(`package-shape: ${pkg}: ${problem}`);

const isFile = (path) => existsSync(path) && statSync(path).isFile();
const json = (value) => JSON.stringify(value);
/** `./src/x.ts` and `src/x.ts` name the same file. */
const normalize = (path) => path.replace(/^\.\//, "");

/** Whether a `sideEffects` entry names a `./register` entry file (source or built). */
const isRegisterEntry = (entry) =>
  typeof entry === "string" && /^(?:\.\/)?(?:src|dist)\/register\.(?:[cm]?[jt]s|d\.[cm]?ts)$/.test(entry);

/**
 * The `name: "src/....ts"` pairs of the object literal passed to `libraryConfig(...)` in a
 * package's tsup config, or `undefined` when the call is not there.
 */
function tsupEntries(source) {
  const call = /libraryConfig\(\s*\{([^}]*)\}/.exec(source);
  if (!call) return undefined;
  const entries = new Map();
  const pair = /(?:"([^"]+)"|'([^']+)'|([A-Za-z_$][\w$]*))\s*:\s*(?:"([^"]+)"|'([^']+)')/g;
  for (const m of call[1].matchAll(pair)) entries.set(m[1] ?? m[2] ?? m[3], m[4] ?? m[5]);
  return entries;
}

/**
 * Static `import`/`export ... from` specifiers at statement starts, plus dynamic `import("...")`:
 * `{ specifier, typeOnly, statement }`, `statement` being `import` or `export`.
 */
function importsOf(source) {
  const found = [];
  // Statement-level only: the clause before `from` holds names, braces, commas, `*`, `as` and
  // `type`, never a string, so JSDoc examples (lines starting with `*`) and messages are skipped.
  const statement = /^[ \t]*(import|export)\s+(type\s+)?(?:[\w$*\s{},]+?\s+from\s*)?["']([^"'\n]+)["']/gm;
  for (const m of source.matchAll(statement)) {
    found.push({ specifier: m[3], typeOnly: m[2] !== undefined, statement: m[1] });
  }
  for (const line of source.split("\n")) {
    const code = line.trimStart();
    if (code.startsWith("*") || code.startsWith("//") || code.startsWith("/*")) continue;
    for (const m of code.matchAll(/\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g)) {
      found.push({ specifier: m[1], typeOnly: false, statement: "import" });
    }
  }
  return found;
}

/** The TypeScript file a relative specifier names: `./x.js` → `./x.ts`, `./dir` → `./dir/index.ts`. */
function resolveRelative(fromFile, specifier) {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [
    base
      .replace(/\.js$/, ".ts")
      .replace(/\.mjs$/, ".mts")
      .replace(/\.jsx$/, ".tsx"),
    base,
    `${base}.ts`,
    join(base, "index.ts"),
  ];
  return candidates.find(isFile);
}

const builtinName = (specifier) => {
  if (specifier.startsWith("node:")) return specifier;
  const [first] = specifier.split("/");
  return BUILTINS.has(specifier) || BUILTINS.has(first) ? specifier : undefined;
};

/**
 * Walks core's main entry through relative imports and reports every file in it that imports a
 * Node builtin or any other package: the main entry must run in a browser with zero dependencies.
 */
function checkPortableEntry(pkg, dir, entry) {
  const start = resolve(dir, entry);
  if (!isFile(start)) return;
  const rel = (file) => relative(dir, file).split("\\").join("/");
  const via = new Map([[start, undefined]]);
  const queue = [start];
  const chain = (file) => {
    const steps = [];
    for (let f = via.get(file); f !== undefined; f = via.get(f)) steps.unshift(rel(f));
    return steps.length === 0 ? "" : ` (reached via ${steps.join(" → ")})`;
  };
  for (let i = 0; i < queue.length; i++) {
    const file = queue[i];
    for (const { specifier, typeOnly } of importsOf(readFileSync(file, "utf8"))) {
      if (specifier.startsWith(".")) {
        const target = resolveRelative(file, specifier);
        if (target === undefined) {
          report(pkg, `${rel(file)} imports ${json(specifier)}, which resolves to no file`);
        } else if (!via.has(target)) {
          via.set(target, file);
          queue.push(target);
        }
        continue;
      }
      const kind = typeOnly ? "has a type-only import of" : "imports";
      if (builtinName(specifier)) {
        report(
          pkg,
          `${rel(file)} ${kind} the Node builtin ${json(specifier)}${chain(file)}; the main entry ${entry} must also run in a browser, so move Node-only code under src/node/ (the ./node export)`,
        );
      } else {
        report(
          pkg,
          `${rel(file)} ${kind} ${json(specifier)}${chain(file)}; core has zero runtime dependencies`,
        );
      }
    }
  }
}

/** The backend interface a `declare module "@openrath/core"` block in `source` augments with a key, if any. */
function augmentedKeys(text) {
  const found = new Set();
  // Comments may hold braces (`{@link X}`); strings in them do not matter here.
  const source = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'])\/\/.*$/gm, "$1");
  const block = /declare\s+module\s+["']@openrath\/core["']\s*\{([\s\S]*?)\n\}/g;
  for (const m of source.matchAll(block)) {
    for (const i of m[1].matchAll(/interface\s+(SandboxBackends|MemoryBackends)\s*\{([^}]*)\}/g)) {
      // A key looks like `docker: DockerSandboxSpec` or `"my-key": Spec`.
      if (/(?:^|[\s;,{])(?:"[^"]+"|'[^']+'|[A-Za-z_$][\w$-]*)\??\s*:/.test(i[2])) found.add(i[1]);
    }
  }
  return found;
}

/** Source files under `dir` that are not tests nor test helpers (`*.test.ts`, `*.test-d.ts`, `src/testing/`). */
function sourceFiles(dir) {
  const out = [];
  const walk = (at) => {
    if (!existsSync(at)) return;
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "testing" && entry.name !== "node_modules") walk(path);
      } else if (/\.[cm]?tsx?$/.test(entry.name) && !/\.test(-d)?\.[cm]?tsx?$/.test(entry.name)) {
        out.push(path);
      }
    }
  };
  walk(join(dir, "src"));
  return out.sort();
}

/**
 * The registry keys in one place: the file that declares an adapter's keys is the one its
 * `./register` entry imports the factory from, no other file declares any, and the register entry
 * re-exports a type from it, so that importing only the register entry types the key (the
 * `interface` augmented must match what it registers: `SandboxBackends` for `registerSandbox`,
 * `MemoryBackends` for `registerMemory`).
 */
function checkRegistryKeys(pkg, dir, registerSource) {
  const rel = (file) => relative(dir, file).split("\\").join("/");
  const declaring = sourceFiles(dir)
    .map((file) => ({ file, keys: augmentedKeys(readFileSync(file, "utf8")) }))
    .filter(({ keys }) => keys.size > 0);
  if (registerSource === undefined) {
    for (const { file } of declaring) {
      report(
        pkg,
        `${rel(file)} declares module "@openrath/core" registry keys but the package has no "./register" export; an adapter that types a key registers it from a ./register entry`,
      );
    }
    return;
  }
  const start = resolve(dir, registerSource);
  if (!isFile(start)) return;
  const source = readFileSync(start, "utf8");
  const wanted = [];
  if (/\bregisterSandbox\s*\(/.test(source)) wanted.push("SandboxBackends");
  if (/\bregisterMemory\s*\(/.test(source)) wanted.push("MemoryBackends");
  if (wanted.length === 0) {
    report(pkg, `export "./register" (${registerSource}) calls neither registerSandbox nor registerMemory`);
    return;
  }
  const imports = importsOf(source).filter(({ specifier }) => specifier.startsWith("."));
  const factoryFiles = [
    ...new Set(
      imports
        .filter(({ statement, typeOnly }) => statement === "import" && !typeOnly)
        .map(({ specifier }) => resolveRelative(start, specifier))
        .filter((file) => file !== undefined),
    ),
  ];
  if (factoryFiles.length !== 1) {
    report(
      pkg,
      `export "./register" (${registerSource}) imports values from ${factoryFiles.length === 0 ? "no file of the package" : factoryFiles.map(rel).join(", ")}; it imports the factory it registers from one file, its factory's file, which declares the key`,
    );
    return;
  }
  const [factory] = factoryFiles;
  const there = declaring.find(({ file }) => file === factory);
  for (const { file } of declaring) {
    if (file !== factory) {
      report(
        pkg,
        `${rel(file)} declares module "@openrath/core" registry keys; declare them in one place, at the end of ${rel(factory)} (the file ./register imports its factory from), as every adapter does`,
      );
    }
  }
  for (const name of wanted) {
    if (!there?.keys.has(name)) {
      report(
        pkg,
        `export "./register" (${registerSource}) does not type its key: ${rel(factory)}, the file it imports its factory from, must declare module "@openrath/core" { interface ${name} { <key>: <Spec> } }`,
      );
    }
  }
  const reexports = imports.some(
    ({ statement, typeOnly, specifier }) =>
      statement === "export" && typeOnly && resolveRelative(start, specifier) === factory,
  );
  if (!reexports) {
    report(
      pkg,
      `export "./register" (${registerSource}) re-exports no type from ${rel(factory)}: add export type { <Spec> } from "./${rel(
        factory,
      )
        .replace(/^src\//, "")
        .replace(/\.ts$/, ".js")}", or its built declarations drop the file that types the key`,
    );
  }
}

/** The README layout every package follows; see the header of this script. */
const README_SECTIONS = ["Install", "Example", "Options", "Behaviour", "Limits", "Testing"];
const INSTALL_COMMAND = /\b(?:pnpm add|npm install|npm i|yarn add)\b/;

/** `## ` sections of a Markdown text outside fenced code blocks: `{ title, line, hasCode, text }`. */
function readmeSections(text) {
  const sections = [];
  let fence;
  let first;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trimEnd();
    if (sections.length > 0) sections[sections.length - 1].text += `${line}\n`;
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) {
        fence = marker;
        if (sections.length > 0) sections[sections.length - 1].hasCode = true;
      } else if (
        line.trim().startsWith(fence[0].repeat(fence.length)) &&
        line.trim().replace(/[`~]/g, "") === ""
      ) {
        fence = undefined;
      }
      return;
    }
    if (fence !== undefined) return;
    if (first === undefined && line.trim() !== "") first = line;
    const heading = /^## (.*)$/.exec(line);
    if (heading) sections.push({ title: heading[1].trim(), line: index + 1, hasCode: false, text: "" });
  });
  return { first, sections };
}

function checkReadme(pkg, dir, name) {
  const path = join(dir, "README.md");
  if (!isFile(path)) {
    report(pkg, `has no README.md; write one with ${README_SECTIONS.map((t) => `## ${t}`).join(", ")}`);
    return;
  }
  const { first, sections } = readmeSections(readFileSync(path, "utf8"));
  if (name !== undefined && first !== `# ${name}`) {
    report(pkg, `README.md starts with ${json(first ?? "")}; expected "# ${name}"`);
  }
  const titles = sections.map((section) => section.title);
  const missing = README_SECTIONS.filter((title) => !titles.includes(title));
  if (missing.length > 0) {
    const near = (title) =>
      titles.find((t) => t.toLowerCase().startsWith(title.toLowerCase().slice(0, 4)) && t !== title);
    report(
      pkg,
      `README.md has no ${missing
        .map((title) => `"## ${title}"${near(title) ? ` (it has "## ${near(title)}")` : ""}`)
        .join(", ")}; every README has ${README_SECTIONS.map((t) => `## ${t}`).join(", ")}, in that order`,
    );
  }
  for (const title of README_SECTIONS) {
    const count = titles.filter((t) => t === title).length;
    if (count > 1) report(pkg, `README.md has "## ${title}" ${count} times; once`);
  }
  const order = titles.filter((title) => README_SECTIONS.includes(title));
  const expected = README_SECTIONS.filter((title) => titles.includes(title));
  if (missing.length === 0 && json(order) !== json(expected)) {
    report(
      pkg,
      `README.md's sections are in the order ${order.join(", ")}; expected ${README_SECTIONS.join(", ")}`,
    );
  }
  if (missing.length === 0 && titles[0] !== "Install") {
    report(pkg, `README.md's first section is "## ${titles[0]}"; "## Install" comes first`);
  }
  if (missing.length === 0 && titles[titles.length - 1] !== "Testing") {
    report(pkg, `README.md's last section is "## ${titles[titles.length - 1]}"; "## Testing" comes last`);
  }
  for (const section of sections) {
    if (section.title === "Example" && !section.hasCode) {
      report(pkg, `README.md's "## Example" (line ${section.line}) holds no code block`);
    }
    if (section.title === "Install" && !INSTALL_COMMAND.test(section.text)) {
      report(pkg, `README.md's "## Install" (line ${section.line}) names no install command (pnpm add …)`);
    }
  }
}

function checkPackage(dirName, dir) {
  const manifestPath = join(dir, "package.json");
  if (!isFile(manifestPath)) {
    report(dirName, "no package.json");
    return;
  }
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  } catch (error) {
    report(dirName, `package.json does not parse: ${error.message}`);
    return;
  }
  const name = typeof manifest.name === "string" ? manifest.name : undefined;
  const pkg = name ?? dirName;
  const isCore = name === CORE;

  if (name === undefined) report(pkg, `package.json has no "name"; expected "${SCOPE}${dirName}"`);
  else if (name !== `${SCOPE}${dirName}`) {
    report(
      pkg,
      `directory packages/${dirName} holds ${json(name)}; the directory must be named after the package without the scope (packages/${name.startsWith(SCOPE) ? name.slice(SCOPE.length) : name}) and the name must be "${SCOPE}<directory>"`,
    );
  }
  if (manifest.private === true) report(pkg, `is "private": true; packages under packages/ are published`);
  if (manifest.type !== "module") report(pkg, `"type" is ${json(manifest.type)}; expected "module"`);
  if (manifest.license !== LICENSE)
    report(pkg, `"license" is ${json(manifest.license)}; expected "${LICENSE}"`);
  if (manifest.engines?.node !== ENGINES) {
    report(pkg, `"engines.node" is ${json(manifest.engines?.node)}; expected "${ENGINES}"`);
  }

  const sideEffects = manifest.sideEffects;
  if (Array.isArray(sideEffects)) {
    const others = sideEffects.filter((entry) => !isRegisterEntry(entry));
    if (others.length > 0) {
      report(
        pkg,
        `"sideEffects" lists ${others.map(json).join(", ")}; only register entries (./dist/register.js, ./src/register.ts) may have side effects`,
      );
    }
    if (sideEffects.length > 0 && manifest.exports?.["./register"] === undefined) {
      report(pkg, `"sideEffects" lists register entries but "exports" has no "./register"`);
    }
  } else if (sideEffects !== false) {
    report(
      pkg,
      `"sideEffects" is ${json(sideEffects)}; expected false, or an array of register entries such as ["./dist/register.js", "./src/register.ts"]`,
    );
  }

  const exportsField = manifest.exports;
  const exportEntries = [];
  if (typeof exportsField !== "object" || exportsField === null || Array.isArray(exportsField)) {
    report(pkg, `"exports" is ${json(exportsField)}; expected an object of subpaths, starting with "."`);
  } else {
    for (const [subpath, target] of Object.entries(exportsField)) {
      if (subpath === "./package.json") continue;
      const where = `export ${json(subpath)}`;
      if (typeof target !== "object" || target === null || Array.isArray(target)) {
        report(pkg, `${where} is ${json(target)}; expected { "@openrath/source", "types", "default" }`);
        continue;
      }
      const keys = Object.keys(target);
      if (json(keys) !== json(CONDITION_ORDER)) {
        report(
          pkg,
          `${where} has conditions ${json(keys)}; expected exactly ${json(CONDITION_ORDER)} in that order`,
        );
      }
      const source = target["@openrath/source"];
      if (typeof source !== "string" || !source.startsWith("./src/")) {
        report(pkg, `${where} "@openrath/source" is ${json(source)}; expected a file under ./src`);
      } else if (!isFile(join(dir, source))) {
        report(pkg, `${where} "@openrath/source" points at ${source}, which does not exist`);
      }
      const built = typeof target.default === "string" ? /^\.\/dist\/(.+)\.js$/.exec(target.default) : null;
      if (!built) {
        report(pkg, `${where} "default" is ${json(target.default)}; expected ./dist/<name>.js`);
      } else if (target.types !== `./dist/${built[1]}.d.ts`) {
        report(pkg, `${where} "types" is ${json(target.types)}; expected "./dist/${built[1]}.d.ts"`);
      }
      if (built && typeof source === "string") exportEntries.push({ where, name: built[1], source });
    }
    if (exportsField["."] === undefined) report(pkg, `"exports" has no "." entry`);
  }

  const tsupPath = join(dir, "tsup.config.ts");
  if (!isFile(tsupPath)) {
    report(pkg, "has no tsup.config.ts");
  } else {
    const entries = tsupEntries(readFileSync(tsupPath, "utf8"));
    if (entries === undefined) {
      report(pkg, 'tsup.config.ts does not call libraryConfig({ <name>: "src/<file>.ts", ... })');
    } else {
      for (const { where, name: entryName, source } of exportEntries) {
        const entrySource = entries.get(entryName);
        if (entrySource === undefined) {
          report(
            pkg,
            `${where} builds dist/${entryName}.js but tsup.config.ts has no entry ${json(entryName)}; add ${entryName}: "${normalize(source)}" to libraryConfig`,
          );
        } else if (normalize(entrySource) !== normalize(source)) {
          report(
            pkg,
            `${where} has source ${source} but tsup entry ${json(entryName)} builds ${entrySource}; they must be the same file`,
          );
        }
      }
    }
  }

  checkReadme(pkg, dir, name);

  if (isCore) {
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
      const deps = manifest[field];
      if (deps !== undefined && (typeof deps !== "object" || deps === null || Object.keys(deps).length > 0)) {
        report(
          pkg,
          `has ${json(field)} (${Object.keys(deps ?? {}).join(", ")}); core has zero runtime dependencies`,
        );
      }
    }
    const main = exportsField?.["."]?.["@openrath/source"];
    checkPortableEntry(pkg, dir, typeof main === "string" ? main : "./src/index.ts");
  } else {
    const register = exportsField?.["./register"]?.["@openrath/source"];
    checkRegistryKeys(pkg, dir, typeof register === "string" ? register : undefined);
    const listed = DEPENDENCY_FIELDS.filter((field) => manifest[field]?.[CORE] !== undefined);
    if (listed.length > 0) {
      const peer = manifest.peerDependencies?.[CORE];
      if (manifest.dependencies?.[CORE] !== undefined) {
        report(
          pkg,
          `lists ${CORE} in "dependencies"; move it to "peerDependencies" as ${json(INTERNAL_PEER)} so one core (and one registry) exists at run time`,
        );
      }
      if (peer === undefined) {
        report(
          pkg,
          `depends on ${CORE} but does not list it in "peerDependencies" as ${json(INTERNAL_PEER)}`,
        );
      } else if (peer !== INTERNAL_PEER) {
        report(pkg, `"peerDependencies" has ${CORE}: ${json(peer)}; expected ${json(INTERNAL_PEER)}`);
      }
    }
  }
}

/**
 * The peer range of an internal package: the whole 0.x line, so a minor release of core does not
 * make changesets release every dependent as a major (the packages move in lockstep; ADR 0025).
 */
const INTERNAL_PEER = "workspace:>=0.1.0 <1.0.0";

const packagesDir = join(root, "packages");
if (!existsSync(packagesDir) || !statSync(packagesDir).isDirectory()) {
  console.log(`package-shape: ${root}: no packages/ directory`);
  process.exit(1);
}
const dirs = readdirSync(packagesDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && !d.name.startsWith("."))
  .map((d) => d.name)
  .sort();
for (const dirName of dirs) checkPackage(dirName, join(packagesDir, dirName));

if (problems.length > 0) {
  for (const line of problems) console.log(line);
  process.exitCode = 1;
} else {
  console.log(`package-shape: ${dirs.length} packages ok`);
}
