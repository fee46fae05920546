import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Served by @openrath/server under /studio; workspace packages resolve to their TypeScript sources.
export default defineConfig({
  base: "/studio/",
  plugins: [react()],
  resolve: { conditions: ["@openrath/source"] },
  // The graph's layout worker (src/graph/layout.ts) is an ES module, like the page.
  worker: { format: "es" },
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 2000 },
});
