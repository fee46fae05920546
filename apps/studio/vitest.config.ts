import { packageProject } from "../../tooling/vitest.shared.js";

// One browser test file: Studio in Debian's Chromium against `openrath serve` (see README).
export default packageProject("studio", { testTimeout: 120_000, hookTimeout: 240_000 });
