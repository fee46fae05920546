import type { PGlite } from "@electric-sql/pglite";
import { describe, expectTypeOf, it } from "vitest";
import type { PGliteDialect } from "./driver/pglite-dialect.js";
import type { PGliteInstance } from "./pglite-instance.js";
import type { PgliteStoreOptions } from "./postgres-store.js";

describe("PGliteInstance", () => {
  it("a PGlite is one, so pgliteStore({ db }) and new PGliteDialect(db) take it as before", () => {
    expectTypeOf<PGlite>().toExtend<PGliteInstance>();
    expectTypeOf<PGlite>().toExtend<NonNullable<PgliteStoreOptions["db"]>>();
    expectTypeOf<PGlite>().toExtend<ConstructorParameters<typeof PGliteDialect>[0]>();
  });

  it("something that is not a database is not", () => {
    expectTypeOf<{ closed: boolean; close(): Promise<void> }>().not.toExtend<PGliteInstance>();
    expectTypeOf<string>().not.toExtend<NonNullable<PgliteStoreOptions["db"]>>();
  });
});
