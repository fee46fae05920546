/**
 * `@openrath/runtime-durable/vite`: a Vite/Vitest plugin that compiles standard (TC39) decorators.
 *
 * Vite 8 transforms TypeScript with Oxc, which implements only the legacy (`experimentalDecorators`)
 * form, so a file using `@step` fails to load with "Invalid or unexpected token". This plugin runs
 * esbuild (which lowers standard decorators, like `tsx` and `tsup` do) on the files that contain
 * decorators, before Oxc sees them. It needs `esbuild` installed (an optional peer dependency).
 *
 * @example
 * ```ts
 * // vitest.config.ts
 * import { defineConfig } from "vitest/config";
 * import { tc39Decorators } from "@openrath/runtime-durable/vite";
 * export default defineConfig({ plugins: [tc39Decorators()] });
 * ```
 */

/** The subset of a Vite plugin this one is (structurally typed, so Vite is not a dependency). */
export interface DecoratorPlugin {
  readonly name: string;
  readonly enforce: "pre";
  transform(code: string, id: string): Promise<{ code: string; map: string } | null>;
}

const DECORATOR = /^\s*@[A-Za-z_$][\w$]*/m;

/**
 * A plugin that compiles standard decorators in TypeScript files with esbuild.
 *
 * @param options.include - which module ids to consider (default: `.ts`, `.mts`, `.cts`, `.tsx`).
 * @param options.target - the esbuild target (default `es2022`, which lowers decorators).
 */
export function tc39Decorators(options: { include?: RegExp; target?: string } = {}): DecoratorPlugin {
  const include = options.include ?? /\.[cm]?tsx?$/;
  const target = options.target ?? "es2022";
  let esbuild: Promise<typeof import("esbuild")> | undefined;
  return {
    name: "openrath:tc39-decorators",
    enforce: "pre",
    async transform(code, id) {
      const file = id.split("?")[0] ?? id;
      if (file.includes("/node_modules/") || !include.test(file) || !DECORATOR.test(code)) return null;
      esbuild ??= import("esbuild");
      const { transform } = await esbuild;
      const out = await transform(code, {
        loader: file.endsWith("x") ? "tsx" : "ts",
        target,
        format: "esm",
        sourcemap: "external",
        sourcefile: file,
      });
      return { code: out.code, map: out.map };
    },
  };
}
