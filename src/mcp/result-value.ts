/**
 * What a script gets back from an MCP tool. MCP results are content blocks meant for a model;
 * scripts want values. The rule is small and fixed, because recorded results and the observed
 * result types in declarations both depend on it; it changed once, with sandbox runtime 3, and
 * a run keeps the rule of the runtime it started on (its scripts were checked against it).
 */
import { runtimeVersionOf } from "../shared/index.ts";
import type { McpCallOutcome } from "./mcp-types.ts";

/**
 * The value of a tool result, in this order:
 * 1. `structuredContent` when the server sent it;
 * 2. when the content is exactly one text block: from runtime 3 on, its text parsed when it is a
 *    JSON object or array (leading and trailing whitespace aside), else the text itself, so a
 *    number, `true` or `null` written as text stays the string the server wrote and never loses
 *    digits; runtimes 1–2 parsed any JSON text (`"9007199254740993"` became 9007199254740992);
 * 3. otherwise (no block, several blocks, images, resources…) the content array as it is.
 *
 * `runtimeVersion` is the sandbox runtime of the run the call belongs to; absent, version 1.
 *
 * @example
 * resultValue({ kind: "result", isError: false, content: [{ type: "text", text: '{"n":1}' }] }, 3); // { n: 1 }
 * resultValue({ kind: "result", isError: false, content: [{ type: "text", text: "42" }] }, 3); // "42"
 * resultValue({ kind: "result", isError: false, content: [{ type: "text", text: "Echo: hi" }] }, 3); // "Echo: hi"
 */
export function resultValue(outcome: McpCallOutcome, runtimeVersion?: number): unknown {
  if (outcome.structuredContent !== undefined) return outcome.structuredContent;
  const [only, ...rest] = outcome.content;
  if (rest.length === 0 && isTextBlock(only)) {
    return runtimeVersionOf({ runtimeVersion }) >= 3 ? objectOrText(only.text) : anyJsonOrText(only.text);
  }
  return outcome.content;
}

/** Runtime 3 on: only a JSON object or array becomes a value. */
function objectOrText(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return text;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return text;
  }
}

/** Runtimes 1–2: any JSON text became a value. */
function anyJsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isTextBlock(block: unknown): block is { type: "text"; text: string } {
  return (
    typeof block === "object" &&
    block !== null &&
    "type" in block &&
    block.type === "text" &&
    "text" in block &&
    typeof block.text === "string"
  );
}
