/**
 * Rewind's code mode as OpenAI Agents SDK tools: the four tools of a toolset's MCP server
 * (code-mode.ts) as `tool()`s for an `Agent`. The one file that touches `@openai/agents`, loaded
 * on first use so the SDK does not require it.
 */
import type { FunctionTool } from "@openai/agents";
import { connectCodeMode, modelOutputOf, type CodeModeOptions } from "./code-mode.ts";

/**
 * The type the Agents SDK gives a non-strict JSON schema. It passes such a schema through to the
 * model unchanged, so the server's own schema goes in as it is, whatever its fields say.
 */
interface NonStrictParameters {
  type: "object";
  properties: Record<string, never>;
  required: never[];
  additionalProperties: true;
}

export interface RewindAgentsTools {
  /** search_tools, describe_tools, run_script and get_run, ready for `new Agent({ tools })`. */
  tools: FunctionTool<unknown, NonStrictParameters, string>[];
  /** Closes the connection to the toolset's MCP server. */
  close(): Promise<void>;
}

/** An answer of the server that is an error: the model gets its whole text. */
class CodeModeAnswerError extends Error {}

/**
 * The model's view of a tool that threw. The Agents SDK's own handler says only "An error occurred
 * while running the tool", which would hide tsc's line/column messages or the run's failure.
 */
function errorForModel(_context: unknown, error: unknown): string {
  if (error instanceof CodeModeAnswerError) return error.message;
  return `An error occurred while running the tool: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * A tool whose answer is an error (a script that does not type-check, a run that failed) fails
 * the tool call, and the model gets the answer's text as the tool's output: it reads tsc's
 * line/column messages or the run's failure and tries again.
 *
 * @example
 * const rewind = await rewindAgentsTools({ apiUrl, toolset, apiKey });
 * const agent = new Agent({ name: "scripter", instructions, tools: rewind.tools });
 * const result = await run(agent, "…");
 * await rewind.close();
 */
export async function rewindAgentsTools(options: CodeModeOptions): Promise<RewindAgentsTools> {
  const { tool } = await import("@openai/agents");
  const codeMode = await connectCodeMode(options);
  const tools = codeMode.tools.map((codeModeTool) =>
    tool({
      name: codeModeTool.name,
      description: codeModeTool.description,
      // The server's schemas are not written for OpenAI's strict mode (optional fields).
      strict: false,
      errorFunction: errorForModel,
      parameters: codeModeTool.inputSchema as unknown as NonStrictParameters,
      execute: async (input: unknown, _context, details) => {
        const answer = await codeModeTool.call((input ?? {}) as Record<string, unknown>, details?.signal);
        if (answer.isError) throw new CodeModeAnswerError(answer.text);
        const output = modelOutputOf(answer);
        return typeof output === "string" ? output : JSON.stringify(output);
      },
    }),
  );
  return { tools, close: () => codeMode.close() };
}
