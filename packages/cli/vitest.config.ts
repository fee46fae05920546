// The config is loaded without the source condition, so the plugin comes from its source file.

import { packageProject } from "../../tooling/vitest.shared.js";
import { tc39Decorators } from "../runtime-durable/src/vite.js";

const project = packageProject("cli", { testTimeout: 60_000, hookTimeout: 120_000 });

// `demo --durable` loads the durable MAMS workflow, declared with standard decorators, which
// Vite 8's Oxc does not compile.
export default { ...project, plugins: [tc39Decorators()] };
