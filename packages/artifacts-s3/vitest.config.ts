import { packageProject } from "../../tooling/vitest.shared.js";

export default packageProject("artifacts-s3", {
  testTimeout: 60_000,
  // The SDK warns once per process that its 2027 releases will need Node 22; the tests run on 20.
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
});
