import { libraryConfig } from "@openrath/tooling/tsup";

export default libraryConfig({ index: "src/index.ts", sandbox: "src/sandbox/index.ts" }, { external: ["vitest"] });
