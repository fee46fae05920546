import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("cli", { testTimeout: 60_000, hookTimeout: 120_000 });
