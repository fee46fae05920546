import { libraryConfig } from "@openrath/tooling/tsup";

export default libraryConfig({ index: "src/index.ts", backend: "src/backend.ts", node: "src/node/index.ts" });
