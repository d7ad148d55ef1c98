/** What a script gets from an MCP tool result: the documented rules, one case each, by runtime. */
import { describe, expect, it } from "vitest";
import { resultValue, type McpCallOutcome } from "../../src/mcp/index.ts";
import { SANDBOX_RUNTIME_VERSION } from "../../src/shared/runtime-version.ts";

const result = (content: unknown[], structuredContent?: unknown): McpCallOutcome =>
  structuredContent === undefined
    ? { kind: "result", isError: false, content }
    : { kind: "result", isError: false, content, structuredContent };
const text = (value: string) => ({ type: "text", text: value });
const now = (outcome: McpCallOutcome) => resultValue(outcome, SANDBOX_RUNTIME_VERSION);

describe("resultValue", () => {
  it("prefers structuredContent", () => {
    expect(now(result([text('{"other":true}')], { count: 2 }))).toEqual({ count: 2 });
    expect(resultValue(result([text('{"other":true}')], { count: 2 }), 1)).toEqual({ count: 2 });
  });

  it("parses a single text block that is a JSON object or array", () => {
    expect(now(result([text('[{"number":1,"title":"x"}]')]))).toEqual([{ number: 1, title: "x" }]);
    expect(now(result([text('{"a":1}')]))).toEqual({ a: 1 });
    expect(now(result([text('\n  {"a":[]}\t\n')]))).toEqual({ a: [] });
    expect(now(result([text("[]")]))).toEqual([]);
  });

  it("gives any other single text block as the string the server wrote, never a lossy number", () => {
    expect(now(result([text("9007199254740993")]))).toBe("9007199254740993");
    expect(now(result([text("1e400")]))).toBe("1e400");
    expect(now(result([text("42")]))).toBe("42");
    expect(now(result([text("true")]))).toBe("true");
    expect(now(result([text("null")]))).toBe("null");
    expect(now(result([text('"quoted"')]))).toBe('"quoted"');
    expect(now(result([text("Echo: hello")]))).toBe("Echo: hello");
    expect(now(result([text("")]))).toBe("");
  });

  it("keeps text that only looks like an object or array, untrimmed", () => {
    expect(now(result([text("{not json")]))).toBe("{not json");
    expect(now(result([text(" [1, 2 ")]))).toBe(" [1, 2 ");
  });

  it("keeps the rule of runtimes 1 and 2 for runs that started on them: any JSON text parsed", () => {
    for (const version of [undefined, 1, 2]) {
      expect(resultValue(result([text("9007199254740993")]), version)).toBe(9007199254740992);
      expect(resultValue(result([text("42")]), version)).toBe(42);
      expect(resultValue(result([text('"quoted"')]), version)).toBe("quoted");
      expect(resultValue(result([text("true")]), version)).toBe(true);
      expect(resultValue(result([text('{"a":1}')]), version)).toEqual({ a: 1 });
      expect(resultValue(result([text("Echo: hello")]), version)).toBe("Echo: hello");
    }
  });

  it("returns several blocks, images or no block as the content array", () => {
    const two = [text("a"), text("b")];
    const image = [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }];
    expect(now(result(two))).toEqual(two);
    expect(now(result(image))).toEqual(image);
    expect(now(result([]))).toEqual([]);
  });

  it("applies the same rules to a tool's own failure", () => {
    expect(now({ kind: "result", isError: true, content: [text("no such repository")] })).toBe("no such repository");
  });
});
