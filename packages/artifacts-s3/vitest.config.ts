import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("artifacts-s3", { testTimeout: 60_000 });
