#!/usr/bin/env node
/**
 * Checks that every published package under `packages/*` has the shape the house style asks for:
 * its manifest (name, license, module type, engines, sideEffects, exports with the source condition
 * first), a tsup entry per export, core as a `workspace:>=0.1.0 <1.0.0` peer of every adapter, a `./register`
 * entry that types the key it registers (it reaches a `declare module "@openrath/core"` augmenting
 * `SandboxBackends` or `MemoryBackends`), and a core main entry that runs in a browser (no `node:`
 * module or Node builtin reachable from `src/index.ts`).
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

/** Static `import`/`export ... from` specifiers at statement starts, plus dynamic `import("...")`. */
function importsOf(source) {
  const found = [];
  // Statement-level only: the clause before `from` holds names, braces, commas, `*`, `as` and
  // `type`, never a string, so JSDoc examples (lines starting with `*`) and messages are skipped.
  const statement = /^[ \t]*(import|export)\s+(type\s+)?(?:[\w$*\s{},]+?\s+from\s*)?["']([^"'\n]+)["']/gm;
  for (const m of source.matchAll(statement)) {
    found.push({ specifier: m[3], typeOnly: m[2] !== undefined });
  }
  for (const line of source.split("\n")) {
    const code = line.trimStart();
    if (code.startsWith("*") || code.startsWith("//") || code.startsWith("/*")) continue;
    for (const m of code.matchAll(/\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g)) {
      found.push({ specifier: m[1], typeOnly: false });
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

/**
 * A `./register` entry must type the key it registers: importing only `@openrath/<adapter>/register`
 * has to make `session.to("<key>")` (or `memory: "<key>"`) compile, so some file the entry reaches
 * through its relative imports (type-only ones count: TypeScript loads them too) must augment
 * `SandboxBackends` (for `registerSandbox`) or `MemoryBackends` (for `registerMemory`).
 */
function checkRegisterTypesKey(pkg, dir, entry) {
  const start = resolve(dir, entry);
  if (!isFile(start)) return;
  const source = readFileSync(start, "utf8");
  const wanted = [];
  if (/\bregisterSandbox\s*\(/.test(source)) wanted.push("SandboxBackends");
  if (/\bregisterMemory\s*\(/.test(source)) wanted.push("MemoryBackends");
  if (wanted.length === 0) {
    report(pkg, `export "./register" (${entry}) calls neither registerSandbox nor registerMemory`);
    return;
  }
  const seen = new Set([start]);
  const queue = [start];
  const declared = new Set();
  for (let i = 0; i < queue.length; i++) {
    const text = i === 0 ? source : readFileSync(queue[i], "utf8");
    for (const key of augmentedKeys(text)) declared.add(key);
    for (const { specifier } of importsOf(text)) {
      if (!specifier.startsWith(".")) continue;
      const target = resolveRelative(queue[i], specifier);
      if (target !== undefined && !seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  for (const name of wanted) {
    if (!declared.has(name)) {
      report(
        pkg,
        `export "./register" (${entry}) does not type its key: no file it imports declares module "@openrath/core" { interface ${name} { <key>: <Spec> } }, so importing only the register entry leaves the key untyped; import the file that declares it (for example import "./index.js") or move the declaration next to the factory it registers`,
      );
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
    if (typeof register === "string") checkRegisterTypesKey(pkg, dir, register);
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
