import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("runtime-durable", { testTimeout: 30_000 });
