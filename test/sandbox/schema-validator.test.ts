/**
 * The run-time validator of tools' arguments, on real ajv: each JSON Schema dialect validates
 * with its own rules (chosen from `$schema`), a `$ref` reaches the tool's own schema and nothing
 * else, and two schemas under one `$id` each validate against their own content.
 */
import { describe, expect, it } from "vitest";
import { schemaProblem, validateAgainstSchema } from "../../src/schemas/index.ts";
import type { JsonSchema } from "../../src/shared/toolset.ts";

const fits = (schema: JsonSchema, args: unknown) => validateAgainstSchema(schema, args) === undefined;
const why = (schema: JsonSchema, args: unknown) => validateAgainstSchema(schema, args)?.message;

describe("dialects, chosen from $schema", () => {
  it("draft-04: exclusiveMaximum is a boolean beside maximum, and ids are `id`", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-04/schema#",
      id: "urn:example:legacy",
      type: "object",
      properties: { n: { type: "number", maximum: 5, exclusiveMaximum: true } },
    };
    expect(schemaProblem(schema)).toBeUndefined();
    expect(fits(schema, { n: 4.9 })).toBe(true);
    expect(why(schema, { n: 5 })).toBe("arguments/n must be < 5");
  });

  it("draft-06: exclusiveMaximum is a number", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-06/schema#",
      type: "object",
      properties: { n: { type: "number", exclusiveMaximum: 5 } },
    };
    expect(fits(schema, { n: 4 })).toBe(true);
    expect(why(schema, { n: 5 })).toBe("arguments/n must be < 5");
  });

  it("draft-07, also when there is no $schema: if/then", () => {
    const body = { type: "object", if: { properties: { kind: { const: "user" } } }, then: { required: ["name"] } };
    for (const schema of [body, { $schema: "http://json-schema.org/draft-07/schema#", ...body }]) {
      expect(fits(schema, { kind: "user", name: "a" })).toBe(true);
      expect(fits(schema, { kind: "bot" })).toBe(true);
      expect(why(schema, { kind: "user" })).toMatch(/must have required property 'name'/);
    }
  });

  it("draft-07 refuses draft-04's boolean exclusiveMaximum, as its meta-schema says", () => {
    expect(schemaProblem({ type: "number", maximum: 5, exclusiveMaximum: true })).toMatchObject({
      reason: "invalidSchema",
      message: expect.stringMatching(/draft-07.*exclusiveMaximum must be number/),
    });
  });

  it("2019-09: $recursiveRef and unevaluatedProperties", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2019-09/schema",
      $recursiveAnchor: true,
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $recursiveRef: "#" } } },
      unevaluatedProperties: false,
    };
    expect(fits(schema, { name: "a", children: [{ name: "b", children: [] }] })).toBe(true);
    expect(why(schema, { name: "a", children: [{ name: "b", extra: 1 }] })).toBe(
      "arguments/children/0 must NOT have unevaluated properties",
    );
  });

  it("2020-12: prefixItems, with items for the rest", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "array",
      prefixItems: [{ type: "string" }, { type: "number" }],
      items: false,
    };
    expect(fits(schema, ["a", 1])).toBe(true);
    expect(why(schema, ["a", "b"])).toBe("arguments/1 must be number");
    expect(why(schema, ["a", 1, 2])).toMatch(/must NOT have more than 2 items/);
  });

  it("reads the meta-schema URI as servers spell it (https, no fragment)", () => {
    expect(
      why(
        { $schema: "https://json-schema.org/draft-04/schema", type: "number", maximum: 1, exclusiveMaximum: true },
        1,
      ),
    ).toBe("arguments must be < 1");
    expect(
      why({ $schema: "https://json-schema.org/draft/2020-12/schema#", prefixItems: [{ type: "string" }] }, [1]),
    ).toBe("arguments/0 must be string");
  });

  it("says an unknown dialect can't be used", () => {
    expect(schemaProblem({ $schema: "http://json-schema.org/draft-03/schema#", type: "object" })).toMatchObject({
      reason: "unsupportedDialect",
      message: expect.stringMatching(/draft-03/),
    });
    expect(why({ $schema: "https://example.com/my-meta", type: "object" }, {})).toMatch(
      /^the tool's input schema can't be used: unsupported \$schema/,
    );
  });
});

describe("$ref within the tool's own schema", () => {
  it("resolves #/definitions, #/$defs, an id inside the schema, and recursion", () => {
    const schema = {
      $id: "https://example.com/tools/tree",
      definitions: { label: { type: "string", minLength: 1 } },
      $defs: { size: { $id: "size", type: "integer" } },
      type: "object",
      properties: {
        label: { $ref: "#/definitions/label" },
        weight: { $ref: "#/$defs/size" },
        size: { $ref: "size" },
        child: { $ref: "#" },
      },
    };
    expect(schemaProblem(schema)).toBeUndefined();
    expect(fits(schema, { label: "a", weight: 1, size: 2, child: { label: "b" } })).toBe(true);
    expect(why(schema, { label: "" })).toBe("arguments/label must NOT have fewer than 1 characters");
    expect(why(schema, { weight: 1.5 })).toBe("arguments/weight must be integer");
    expect(why(schema, { size: "x" })).toBe("arguments/size must be integer");
    expect(why(schema, { child: { child: { label: 1 } } })).toBe("arguments/child/child/label must be string");
  });

  it("says an external or missing $ref can't be used", () => {
    expect(
      schemaProblem({ type: "object", properties: { a: { $ref: "https://example.com/schemas/a.json" } } }),
    ).toMatchObject({
      reason: "unresolvableRef",
      message: expect.stringMatching(/can't resolve reference https:\/\/example.com\/schemas\/a.json/),
    });
    expect(schemaProblem({ $ref: "#/definitions/missing" })).toMatchObject({ reason: "unresolvableRef" });
    expect(schemaProblem({ $ref: "other.json" })).toMatchObject({ reason: "unresolvableRef" });
  });

  it("never reaches another tool's schema, even one compiled before under the $id asked for", () => {
    const other = { $id: "https://example.com/shared/thing", type: "string" };
    expect(schemaProblem(other)).toBeUndefined();
    expect(
      schemaProblem({ type: "object", properties: { a: { $ref: "https://example.com/shared/thing" } } }),
    ).toMatchObject({ reason: "unresolvableRef" });
    expect(
      schemaProblem({ $id: "https://example.com/elsewhere", properties: { a: { $ref: "shared/thing" } } }),
    ).toMatchObject({ reason: "unresolvableRef" });
  });
});

describe("one $id, different schemas", () => {
  const first = {
    $id: "https://example.com/args",
    type: "object",
    properties: { a: { type: "string" } },
    required: ["a"],
  };
  const second = {
    $id: "https://example.com/args",
    type: "object",
    properties: { b: { type: "number" } },
    required: ["b"],
  };
  const nestedFirst = {
    type: "object",
    $defs: { item: { $id: "https://example.com/item", type: "string" } },
    properties: { x: { $ref: "https://example.com/item" } },
  };
  const nestedSecond = {
    type: "object",
    $defs: { item: { $id: "https://example.com/item", type: "boolean" } },
    properties: { x: { $ref: "https://example.com/item" } },
  };

  it("each validates against its own content, in any order, again and again", () => {
    for (let round = 0; round < 3; round++) {
      expect(why(second, { a: "x" })).toMatch(/required property 'b'/);
      expect(fits(first, { a: "x" })).toBe(true);
      expect(fits(second, { b: 1 })).toBe(true);
      expect(why(first, { b: 1 })).toMatch(/required property 'a'/);
    }
  });

  it("also when the id is declared inside the schema", () => {
    expect(fits(nestedFirst, { x: "s" })).toBe(true);
    expect(fits(nestedSecond, { x: true })).toBe(true);
    expect(why(nestedFirst, { x: true })).toBe("arguments/x must be string");
    expect(why(nestedSecond, { x: "s" })).toBe("arguments/x must be boolean");
  });

  it("equal copies of a schema (as a run's toolset and a fresh listing hold) validate alike", () => {
    const copy = JSON.parse(JSON.stringify(first)) as JsonSchema;
    expect(why(copy, {})).toBe(why(first, {}));
    expect(fits(copy, { a: "x" })).toBe(true);
  });
});

describe("schemas that can't be used", () => {
  it("names what is wrong, and a call against one gets that reason", () => {
    expect(schemaProblem({ type: "object", properties: { a: { type: "no-such-type" } } })).toMatchObject({
      reason: "invalidSchema",
      message: expect.stringMatching(/\/properties\/a\/type/),
    });
    expect(schemaProblem({ type: "object", required: "a" })).toMatchObject({ reason: "invalidSchema" });
    expect(why({ type: "object", required: "a" }, {})).toMatch(
      /^the tool's input schema can't be used: not a valid draft-07 schema/,
    );
  });

  it("accepts boolean schemas", () => {
    expect(fits(true, { anything: 1 })).toBe(true);
    expect(why(false, {})).toBe("arguments boolean schema is false");
  });
});
