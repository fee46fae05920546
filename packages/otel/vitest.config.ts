// The config is loaded without the source condition, so the plugin comes from its source file.

import { packageProject } from "../../tooling/vitest.shared.js";
import { tc39Decorators } from "../runtime-durable/src/vite.js";

const project = packageProject("otel", { testTimeout: 60_000, hookTimeout: 60_000 });

// The durable MAMS demo is declared with standard decorators, which Vite 8's Oxc does not compile.
export default { ...project, plugins: [tc39Decorators()] };
