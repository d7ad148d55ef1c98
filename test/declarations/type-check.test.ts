import { describe, expect, it } from "vitest";
import { createTypeChecker } from "../../src/declarations/type-check.ts";

const declarations = (returns: string) => `declare module "rewind:tools" {
  export const svc: { count(args: { n: number }): Promise<${returns}> };
}`;
const script = `import { svc } from "rewind:tools";
export default async function main() {
  const total: number = await svc.count({ n: 1 });
  return total;
}`;

describe("type checker", () => {
  it("answers a repeated check the same, and a caller can't change the remembered answer", () => {
    const checker = createTypeChecker();
    const input = { source: script, declarations: declarations("string"), declarationsKey: "ts_a" };
    const first = checker.check(input);
    expect(first).toEqual([
      expect.objectContaining({ line: 3, message: "Type 'string' is not assignable to type 'number'." }),
    ]);
    first[0]!.message = "changed";
    expect(checker.check(input)).toEqual([
      expect.objectContaining({ line: 3, message: "Type 'string' is not assignable to type 'number'." }),
    ]);
  });

  it("checks again when the declarations behind the same key change", () => {
    const checker = createTypeChecker();
    expect(
      checker.check({ source: script, declarations: declarations("string"), declarationsKey: "ts_b" }),
    ).toHaveLength(1);
    expect(checker.check({ source: script, declarations: declarations("number"), declarationsKey: "ts_b" })).toEqual(
      [],
    );
    expect(
      checker.check({
        source: `${script}\nconst x: string = 1;`,
        declarations: declarations("number"),
        declarationsKey: "ts_b",
      }),
    ).toHaveLength(1);
  });
});

describe("the script's own rules", () => {
  const tools = `declare module "rewind:tools" {
  export const everything: { "get-sum"(args: { a: number; b: number }): Promise<{ result: number }>; echo(args: { message: string }): Promise<{ text: string }> };
}`;
  const check = (source: string) =>
    createTypeChecker().check({ source, declarations: tools, declarationsKey: "ts_rules" });
  const main = (body: string) =>
    `import { everything } from "rewind:tools";\nexport default async function main(input: { offset: number }) {\n${body}\n}`;

  it("refuses a module other than rewind:tools with one message that says what can be imported", () => {
    for (const specifier of ["fs", "node:fs/promises", "lodash"]) {
      const found = check(`import x from "${specifier}";\n${main("  return x;")}`);
      expect(found).toEqual([
        {
          file: "script.ts",
          line: 1,
          column: 15,
          code: 0,
          message: expect.stringMatching(
            new RegExp(`^Only "rewind:tools" can be imported: .* so "${specifier}" is not there\\.`),
          ) as string,
        },
      ]);
      expect(found[0]?.message).not.toMatch(/type definitions|npm i/);
    }
    expect(check(main(`  const fs = await import("fs");\n  return fs;`))).toEqual([
      expect.objectContaining({
        line: 3,
        code: 0,
        message: expect.stringContaining("cannot load modules while it runs"),
      }),
    ]);
  });

  it("refuses a top-level await, which the sandbox cannot load, and keeps those inside functions", () => {
    const found = check(`import { everything } from "rewind:tools";
const first = await everything.echo({ message: "a" });
export default async function main() { return first; }`);
    expect(found).toEqual([
      expect.objectContaining({
        line: 2,
        column: 15,
        code: 0,
        message: expect.stringContaining("`await` outside a function"),
      }),
    ]);
    expect(
      check(`import { everything } from "rewind:tools";
const echo = async () => (await everything.echo({ message: "a" })).text;
class Later { static async run() { for await (const x of [1]) return x; } }
export default async function main() { return [await echo(), await Later.run()]; }`),
    ).toEqual([]);
  });

  it("says how to call a tool with a hyphen in its name instead of dumping the group's type", () => {
    const found = check(main("  return await everything.get-sum({ a: 1, b: 2 });"));
    expect(found).toEqual([
      {
        file: "script.ts",
        line: 3,
        column: 16,
        code: 0,
        message:
          '`everything.get-sum` reads as a subtraction: call a tool whose name has a hyphen with brackets, `everything["get-sum"](…)`.',
      },
    ]);
    // A subtraction of a property that exists is a subtraction.
    expect(
      check(
        main(`  const text = (await everything.echo({ message: "a" })).text;\n  return text.length - input.offset;`),
      ),
    ).toEqual([]);
    expect(check(main('  return (await everything["get-sum"]({ a: 1, b: 2 })).result;'))).toEqual([]);
  });
});
