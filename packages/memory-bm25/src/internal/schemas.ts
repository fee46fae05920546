import * as z from "zod";
import { STEM_LANGUAGES, type StemLanguage } from "./language.js";
import type { EmbedFunction, Warning } from "./settings.js";

const fn = <T>(signature: string) =>
  z.custom<T>((value) => typeof value === "function", { error: `it must be a function ${signature}` });

const atLeast = (min: number) =>
  z.number({ error: `it must be a number >= ${min}` }).min(min, `it must be a number >= ${min}`);

/** The options of `bm25Memory`, with their defaults (what follows from several is in `settingsOf`). */
export const Bm25MemoryOptionsSchema = z
  .strictObject({
    embed: fn<EmbedFunction>("(texts: string[]) => Promise<number[][]>").optional(),
    embedModel: z.string().min(1, "it must be a non-empty string").optional(),
    embedBatchSize: z
      .int({ error: "it must be an integer >= 1" })
      .min(1, "it must be an integer >= 1")
      .default(64),
    search: z.enum(["fulltext", "vector", "hybrid"]).optional(),
    k1: atLeast(0).default(1.2),
    b: z.number({ error: "it must be a number from 0 to 1" }).min(0).max(1).default(0.75),
    d: atLeast(0).default(0.5),
    minSimilarity: z
      .number({ error: "it must be a number > 0 and <= 1" })
      .positive("it must be a number > 0 and <= 1")
      .max(1, "it must be a number > 0 and <= 1")
      .default(0.3),
    hybridWeights: z
      .strictObject(
        {
          text: z.number().positive("both weights must be > 0"),
          vector: z.number().positive("both weights must be > 0"),
        },
        {
          error:
            'it must be { text, vector } with both numbers > 0 (use search: "fulltext" or "vector" for one side only)',
        },
      )
      .default({ text: 0.5, vector: 0.5 }),
    stopWords: z.array(z.string(), { error: "it must be an array of strings" }).default([]),
    stemming: z
      .union(
        [
          z.literal("auto"),
          z.literal(false),
          z.array(z.enum(STEM_LANGUAGES as unknown as [StemLanguage, ...StemLanguage[]])),
        ],
        { error: `it must be "auto", false, or a list of languages (${STEM_LANGUAGES.join(", ")})` },
      )
      .default("auto"),
    identifiers: z.boolean().default(true),
    lengthUnit: z.enum(["words", "terms"]).default("words"),
    prefix: z.boolean().default(true),
    fuzzy: z.boolean().default(true),
    durability: z.enum(["fsync", "write"]).default("fsync"),
    compactLogBytes: z
      .int({ error: "it must be a whole number of bytes >= 0" })
      .min(0, "it must be a whole number of bytes >= 0")
      .default(4 * 1024 * 1024),
    onCorrupt: z.enum(["throw", "use-backup"]).default("throw"),
    onWarning: fn<(warning: Warning) => void>("(warning) => void").optional(),
  })
  .refine((options) => options.search === undefined || options.search === "fulltext" || options.embed, {
    path: ["search"],
    message:
      'it ranks by embeddings, but no "embed" function was given: pass embed, or use search: "fulltext"',
  });

/** The `bm25` spec: the scope is normalized afterwards, so a bad level is `invalid_scope`. */
export const Bm25MemorySpecSchema = z.strictObject(
  {
    path: z
      .string({ error: "it must be a non-empty directory path" })
      .min(1, "it must be a non-empty directory path")
      .optional(),
    scope: z
      .record(z.string(), z.unknown(), {
        error: 'it must be an object such as { tenant: "acme", user: "ada" }',
      })
      .optional(),
  },
  { error: 'it must be an object such as { path: "./memory" }, or undefined' },
);
