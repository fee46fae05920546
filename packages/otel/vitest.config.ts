import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("otel", { testTimeout: 60_000, hookTimeout: 60_000 });
