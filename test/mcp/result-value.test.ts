/** What a script gets from an MCP tool result: the documented rules, one case each. */
import { describe, expect, it } from "vitest";
import { resultValue, type McpCallOutcome } from "../../src/mcp/index.ts";

const result = (content: unknown[], structuredContent?: unknown): McpCallOutcome =>
  structuredContent === undefined ? { kind: "result", isError: false, content } : { kind: "result", isError: false, content, structuredContent };
const text = (value: string) => ({ type: "text", text: value });

describe("resultValue", () => {
  it("prefers structuredContent", () => {
    expect(resultValue(result([text('{"other":true}')], { count: 2 }))).toEqual({ count: 2 });
  });

  it("parses a single text block that is JSON", () => {
    expect(resultValue(result([text('[{"number":1,"title":"x"}]')]))).toEqual([{ number: 1, title: "x" }]);
    expect(resultValue(result([text("42")]))).toBe(42);
    expect(resultValue(result([text('"quoted"')]))).toBe("quoted");
  });

  it("returns a single text block that is not JSON as the text", () => {
    expect(resultValue(result([text("Echo: hello")]))).toBe("Echo: hello");
    expect(resultValue(result([text("")]))).toBe("");
  });

  it("returns several blocks, images or no block as the content array", () => {
    const two = [text("a"), text("b")];
    const image = [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }];
    expect(resultValue(result(two))).toEqual(two);
    expect(resultValue(result(image))).toEqual(image);
    expect(resultValue(result([]))).toEqual([]);
  });

  it("applies the same rules to a tool's own failure", () => {
    expect(resultValue({ kind: "result", isError: true, content: [text("no such repository")] })).toBe("no such repository");
  });
});
