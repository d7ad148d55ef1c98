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
