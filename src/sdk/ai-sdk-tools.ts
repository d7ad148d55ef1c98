/**
 * Rewind's code mode as a Vercel AI SDK toolset: the four tools of a toolset's MCP server
 * (code-mode.ts) as AI SDK `tool()`s, for `generateText`/`streamText` or an Agent. The one file
 * that touches the `ai` package, loaded on first use so the SDK does not require it.
 */
import type { JSONSchema7, ToolSet } from "ai";
import { connectCodeMode, modelOutputOf, type CodeModeOptions } from "./code-mode.ts";

export interface RewindAiSdkTools {
  /** search_tools, describe_tools, run_script and get_run, ready for `tools:`. */
  tools: ToolSet;
  /** Closes the connection to the toolset's MCP server. */
  close(): Promise<void>;
}

/**
 * A tool whose answer is an error (a script that does not type-check, a run that failed) throws
 * its text, which the AI SDK hands the model as the tool's error: the model reads tsc's
 * line/column messages or the run's failure and tries again.
 *
 * @example
 * const rewind = await rewindAiSdkTools({ apiUrl, toolset, apiKey });
 * const { text } = await generateText({ model, tools: rewind.tools, stopWhen: stepCountIs(8), prompt });
 * await rewind.close();
 */
export async function rewindAiSdkTools(options: CodeModeOptions): Promise<RewindAiSdkTools> {
  const { tool, jsonSchema } = await import("ai");
  const codeMode = await connectCodeMode(options);
  const tools: ToolSet = {};
  for (const codeModeTool of codeMode.tools) {
    tools[codeModeTool.name] = tool({
      description: codeModeTool.description,
      inputSchema: jsonSchema<Record<string, unknown>>(codeModeTool.inputSchema as JSONSchema7),
      execute: async (args: Record<string, unknown>, { abortSignal }) => {
        const answer = await codeModeTool.call(args, abortSignal);
        if (answer.isError) throw new Error(answer.text);
        return modelOutputOf(answer);
      },
    });
  }
  return { tools, close: () => codeMode.close() };
}
