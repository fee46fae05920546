import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("sandbox-local", { testTimeout: 30_000 });
