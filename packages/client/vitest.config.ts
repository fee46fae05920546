import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("client", { testTimeout: 60_000, hookTimeout: 60_000 });
