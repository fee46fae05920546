import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("lineage-view");
