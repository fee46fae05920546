import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("client", {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // The type tests need the client alone, not the server the runtime tests start from source.
  typecheck: { enabled: true, include: ["src/**/*.test-d.ts"], tsconfig: "./tsconfig.typecheck.json" },
});
