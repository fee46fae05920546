import { packageProject } from "../../tooling/vitest.shared.js";
import { tc39Decorators } from "./src/vite.js";

const project = packageProject("runtime-durable", { testTimeout: 30_000 });

// Standard decorators (`@step`, `@router`) go through esbuild; Vite 8's Oxc only knows the legacy form.
export default { ...project, plugins: [tc39Decorators()] };
