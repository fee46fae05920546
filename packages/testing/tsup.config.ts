import { libraryConfig } from "@openrath/tooling/tsup";

export default libraryConfig(
  {
    index: "src/index.ts",
    sandbox: "src/sandbox/index.ts",
    memory: "src/memory/index.ts",
    "memory-writer": "src/memory/writer.ts",
    provider: "src/provider/index.ts",
    artifacts: "src/artifacts/index.ts",
    store: "src/store/index.ts",
    signals: "src/signals/index.ts",
  },
  { external: ["vitest"] },
);
