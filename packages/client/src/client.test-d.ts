import { describe, expectTypeOf, it } from "vitest";
import type { components, paths } from "./generated/openapi.js";
import type { OpenRathClient } from "./openrath-client.js";

type Json<T> = T extends { content: { "application/json": infer B } } ? B : never;
type Schemas = components["schemas"];

describe("the client's types come from the generated paths", () => {
  it("returns the response bodies the document declares", () => {
    expectTypeOf<Awaited<ReturnType<OpenRathClient["runs"]["get"]>>>().toEqualTypeOf<Schemas["Run"]>();
    expectTypeOf<Awaited<ReturnType<OpenRathClient["runs"]["create"]>>>().toEqualTypeOf<
      Json<paths["/v1/runs"]["post"]["responses"][201]>
    >();
    expectTypeOf<Awaited<ReturnType<OpenRathClient["interrupts"]["decide"]>>>().toEqualTypeOf<{
      interrupt: Schemas["Interrupt"];
      run: Schemas["Run"];
    }>();
    expectTypeOf<Awaited<ReturnType<OpenRathClient["events"]["list"]>>>().toEqualTypeOf<{
      items: Schemas["Event"][];
      next: string | null;
    }>();
  });

  it("takes the request bodies the document declares", () => {
    expectTypeOf<Parameters<OpenRathClient["runs"]["createOrEnqueue"]>[0]>().toEqualTypeOf<
      paths["/v1/runs"]["post"]["requestBody"]["content"]["application/json"]
    >();
    expectTypeOf<Parameters<OpenRathClient["interrupts"]["decide"]>[1]>().toHaveProperty("kind");
    // @ts-expect-error: a decision's kind is one of the document's enum
    expectTypeOf<Parameters<OpenRathClient["interrupts"]["decide"]>[1]>().toEqualTypeOf<{ kind: "maybe" }>();
  });
});
