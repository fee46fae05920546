import { libraryConfig } from "@openrath/tooling/tsup";

export default libraryConfig(
  { index: "src/index.ts", sandbox: "src/sandbox/index.ts", memory: "src/memory/index.ts" },
  { external: ["vitest"] },
);
