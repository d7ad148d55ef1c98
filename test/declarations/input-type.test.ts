/**
 * A script's declared input type, as the type-check reads it: text that stands on its own in the
 * declarations of another toolset, with the script's own names written out, or nothing when the
 * script declares no input type or its type can't be written without a name of its own.
 */
import { describe, expect, it } from "vitest";
import { compileScript, createTypeChecker } from "../../src/declarations/index.ts";

const checker = createTypeChecker();
const declarations = `declare module "rewind:tools" {
  export type ToolErrorCode = "timedOut" | "rejected";
  export const svc: { echo(args: { message: string }): Promise<unknown> };
}`;

function inputTypeOf(script: string): string | undefined {
  const inspected = checker.inspect({ source: script, declarations, declarationsKey: "ts_input" });
  expect(inspected.diagnostics).toEqual([]);
  return inspected.inputType;
}

const main = (parameter: string, before = "") =>
  `${before}\nexport default async function main(${parameter}) { return input; }\n`;

describe("declared input type", () => {
  it("is an inline object type as written", () => {
    expect(inputTypeOf(main("input: { repo: string; limit?: number }"))).toBe("{ repo: string; limit?: number; }");
  });

  it("writes out the script's own type aliases, nested ones too", () => {
    const before = "type Tag = { name: string; weight?: number | null };\ntype Input = { repo: string; tags: Tag[] };";
    expect(inputTypeOf(main("input: Input", before))).toBe(
      "{ repo: string; tags: { name: string; weight?: number | null; }[]; }",
    );
  });

  it("writes out interfaces, keeping readonly, optional members and library types", () => {
    const before =
      "interface Inner { level: 1 | 2 }\ninterface Input { repo: string; readonly inner: Inner; since?: Date }";
    expect(inputTypeOf(main("input: Input", before))).toBe(
      "{ repo: string; readonly inner: { level: 1 | 2; }; since?: Date; }",
    );
  });

  it("keeps unions, literal types, template literals and library generics", () => {
    expect(inputTypeOf(main('input: "a" | "b" | { kind: "c"; n: number }'))).toBe(
      '{ kind: "c"; n: number; } | "a" | "b"',
    );
    expect(inputTypeOf(main("input: { id: `run_${string}` }"))).toBe("{ id: `run_${string}`; }");
    expect(inputTypeOf(main("input: Record<K, number[]>", 'type K = "x" | "y";'))).toBe('Record<"x" | "y", number[]>');
    expect(inputTypeOf(main("input: Partial<I>", "interface I { a: string; b: number }"))).toBe(
      "{ a?: string; b?: number; }",
    );
  });

  it("writes out a type the toolset's declarations export", () => {
    const script = `import type { ToolErrorCode } from "rewind:tools";\n${main("input: { code: ToolErrorCode }")}`;
    expect(inputTypeOf(script)).toBe('{ code: "timedOut" | "rejected"; }');
  });

  it("does not take a local name for a global one it shadows", () => {
    expect(inputTypeOf(main("input: { at: Date }", "interface Date { x: number }"))).toBe("{ at: { x: number; }; }");
  });

  it("says an optional input may be left out", () => {
    expect(inputTypeOf(main("input?: { a: string }"))).toBe("{ a: string; } | undefined");
    expect(inputTypeOf(main("input: { a: string } | undefined = undefined"))).toBe("{ a: string; } | undefined");
    expect(inputTypeOf(main("input?: (n: number) => string"))).toBe("((n: number) => string) | undefined");
  });

  it("is absent without an annotation, without a parameter, or for unknown and any", () => {
    expect(inputTypeOf("export default async () => 1;")).toBeUndefined();
    expect(inputTypeOf("export default async (input: unknown) => input;")).toBeUndefined();
    expect(inputTypeOf("export default async (input: any) => input;")).toBeUndefined();
    expect(inputTypeOf("export default async (...inputs: string[]) => inputs;")).toBeUndefined();
    const untyped = checker.inspect({
      source: "export default async (input) => input;",
      declarations,
      declarationsKey: "ts_input",
    });
    expect(untyped).toEqual({ diagnostics: [expect.objectContaining({ code: 7006 })] });
  });

  it("is absent for a type that can't be written without a name of the script's", () => {
    expect(inputTypeOf("export default async function main<T>(input: T) { return input; }")).toBeUndefined();
    expect(inputTypeOf(main("input: Tree", "type Tree = { value: number; children: Tree[] };"))).toBeUndefined();
    expect(inputTypeOf(main("input: { run(): void }"))).toBe("{ run(): void; }");
    expect(inputTypeOf(main("input: { make: Maker }", "class Maker { private secret = 1; }"))).toBeUndefined();
  });

  it("is answered by compileScript beside the JavaScript, and absent when the script declares none", async () => {
    const compiled = await compileScript(checker, main("input: { n: number }"), {
      declarations,
      declarationsKey: "ts_input",
    });
    expect(compiled).toMatchObject({ ok: true, inputType: "{ n: number; }" });
    const plain = await compileScript(checker, "export default async () => 1;", {
      declarations,
      declarationsKey: "ts_input",
    });
    expect(plain.ok && "inputType" in plain).toBe(false);
  });
});
