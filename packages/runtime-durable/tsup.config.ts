import { libraryConfig } from "@openrath/tooling/tsup";

export default libraryConfig(
  { index: "src/index.ts", store: "src/store.ts", vite: "src/vite.ts" },
  { external: ["esbuild"] },
);
