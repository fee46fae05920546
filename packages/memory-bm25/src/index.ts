export {
  type Bm25EmbedFunction,
  type Bm25Memory,
  type Bm25MemoryOptions,
  type Bm25MemorySpec,
  type Bm25MemoryWarning,
  type Bm25SearchMode,
  type Bm25StemLanguage,
  bm25Memory,
} from "./bm25-memory.js";
