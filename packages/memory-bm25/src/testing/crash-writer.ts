// The process the memory conformance suite kills with SIGKILL mid-write: a bm25 store on the
// directory in BM25_CRASH_DIR, with the durability in BM25_DURABILITY (default fsync).
import { runMemoryWriter } from "@openrath/testing/memory-writer";
import { bm25Memory } from "../bm25-memory.js";
import { letterEmbed } from "../internal/letter-embed.test-helper.js";

const dir = process.env.BM25_CRASH_DIR;
if (!dir) throw new Error("BM25_CRASH_DIR is not set");
const durability = process.env.BM25_DURABILITY === "write" ? "write" : "fsync";
// BM25_EMBED=letters: the letter-count embedder of the hybrid conformance run.
const embed = process.env.BM25_EMBED === "letters" ? { embed: letterEmbed, minSimilarity: 0.95 } : {};
await runMemoryWriter(() => bm25Memory({ durability, ...embed }).open({ path: dir }));
