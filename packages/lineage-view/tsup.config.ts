import { libraryConfig } from "@openrath/tooling/tsup";

export default libraryConfig({ index: "src/index.ts" });
