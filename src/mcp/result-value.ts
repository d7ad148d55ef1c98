/**
 * What a script gets back from an MCP tool. MCP results are content blocks meant for a model;
 * scripts want values. The rule is small and fixed, because recorded results and the observed
 * result types in declarations both depend on it.
 */
import type { McpCallOutcome } from "./mcp-types.ts";

/**
 * The value of a tool result, in this order:
 * 1. `structuredContent` when the server sent it;
 * 2. when the content is exactly one text block: its text parsed as JSON if it parses, else the
 *    text itself (most servers without an output schema send JSON as text);
 * 3. otherwise (no block, several blocks, images, resources…) the content array as it is.
 *
 * @example
 * resultValue({ kind: "result", isError: false, content: [{ type: "text", text: '{"n":1}' }] }); // { n: 1 }
 * resultValue({ kind: "result", isError: false, content: [{ type: "text", text: "Echo: hi" }] }); // "Echo: hi"
 */
export function resultValue(outcome: McpCallOutcome): unknown {
  if (outcome.structuredContent !== undefined) return outcome.structuredContent;
  const [only, ...rest] = outcome.content;
  if (rest.length === 0 && isTextBlock(only)) {
    try {
      return JSON.parse(only.text) as unknown;
    } catch {
      return only.text;
    }
  }
  return outcome.content;
}

function isTextBlock(block: unknown): block is { type: "text"; text: string } {
  return typeof block === "object" && block !== null && "type" in block && block.type === "text" && "text" in block && typeof block.text === "string";
}
