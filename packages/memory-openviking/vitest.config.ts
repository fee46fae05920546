import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("memory-openviking", { testTimeout: 30_000, hookTimeout: 30_000 });
