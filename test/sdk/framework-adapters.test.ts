/**
 * The SDK's code-mode tools in the agent frameworks' own loops: the AI SDK's `generateText` driven
 * by its mock language model (`ai/test`), and the OpenAI Agents SDK's `run` driven by a model that
 * implements its `Model` interface. Each model writes a script with a type error, reads the error
 * run_script answers, writes it again, and ends with the run's result. The tools are the toolset's
 * MCP server in a real API, the run is a real Temporal run calling a real MCP server.
 */
import { Agent, run, Usage, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rewindAgentsTools, rewindAiSdkTools } from "../../src/sdk/index.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";

/** Line 3 assigns a string to a number: tsc's TS2322 at 3:9. */
const BROKEN = `import { tools } from "rewind:tools";
export default async function main() {
  const n: number = "three";
  return tools.echo({ message: "n=" + n });
}`;
const REPAIRED = `import { tools } from "rewind:tools";
export default async function main() {
  const n: number = 3;
  return tools.echo({ message: "n=" + n });
}`;

let stack: RewindStack;
let mcp: TestMcpServer;
let toolset: string;

beforeAll(async () => {
  [stack, mcp] = await Promise.all([startRewindStack(), startMcpServer({ tools: [echoTool()] })]);
  toolset = await registerToolset(stack, { mcpServers: { tools: { url: mcp.url } } });
});
afterAll(async () => {
  await stack?.stop();
  await mcp?.close();
});

/**
 * The test model's policy, the same in both frameworks: given what its tools answered so far
 * (each as text, and whether it was an error), the next run_script arguments, or the final text.
 */
function nextMove(answers: { error: boolean; text: string }[]): { script: string } | { final: string } {
  if (answers.length === 0) return { script: BROKEN };
  const last = answers[answers.length - 1] as { error: boolean; text: string };
  if (/not assignable/.test(last.text)) return { script: REPAIRED };
  return { final: `done: ${last.text}` };
}

describe("the AI SDK's loop with Rewind's code-mode tools", () => {
  it("repairs a script from run_script's type error and gets the run's result", async () => {
    const rewind = await rewindAiSdkTools({ apiUrl: stack.api.url, toolset });
    const seen: { error: boolean; text: string }[] = [];
    try {
      const model = new MockLanguageModelV4({
        doGenerate: async ({ prompt }) => {
          seen.length = 0;
          for (const message of prompt)
            if (message.role === "tool")
              for (const part of message.content)
                if (part.type === "tool-result")
                  seen.push({
                    error: part.output.type === "error-text" || part.output.type === "error-json",
                    text: "value" in part.output ? JSON.stringify(part.output.value) : "",
                  });
          const move = nextMove(seen);
          const usage = {
            inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: 1, text: 1, reasoning: undefined },
          };
          if ("final" in move)
            return {
              content: [{ type: "text", text: move.final }],
              finishReason: { unified: "stop", raw: "stop" },
              usage,
              warnings: [],
            };
          return {
            content: [
              {
                type: "tool-call",
                toolCallId: `call-${seen.length + 1}`,
                toolName: "run_script",
                input: JSON.stringify({ script: move.script }),
              },
            ],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage,
            warnings: [],
          };
        },
      });
      expect(Object.keys(rewind.tools).sort()).toEqual(["describe_tools", "get_run", "run_script", "search_tools"]);
      const result = await generateText({ model, tools: rewind.tools, stopWhen: stepCountIs(6), prompt: "echo n" });
      expect(seen, "the model read two answers of run_script").toHaveLength(2);
      expect(seen[0]?.error, "the broken script's answer is an error").toBe(true);
      expect(seen[0]?.text).toMatch(/3:9|line 3/);
      expect(seen[1]?.error, JSON.stringify(seen[1])).toBe(false);
      expect(result.text).toContain("n=3");
    } finally {
      await rewind.close();
    }
  });
});

/** A model of the Agents SDK that follows `nextMove`, reading the tool outputs in its input. */
class ScriptedAgentsModel implements Model {
  readonly seen: { error: boolean; text: string }[] = [];

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.seen.length = 0;
    for (const item of typeof request.input === "string" ? [] : request.input) {
      if (item.type !== "function_call_result") continue;
      // The Agents SDK gives a model no flag for a failed tool: its output is the error's text.
      const text = typeof item.output === "string" ? item.output : JSON.stringify(item.output);
      this.seen.push({ error: /does not type-check|failed/.test(text), text });
    }
    const move = nextMove(this.seen);
    const usage = new Usage();
    if ("final" in move)
      return {
        usage,
        output: [
          {
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: move.final }],
          },
        ],
      };
    return {
      usage,
      output: [
        {
          type: "function_call",
          callId: `call-${this.seen.length + 1}`,
          name: "run_script",
          arguments: JSON.stringify({ script: move.script }),
          status: "completed",
        },
      ],
    };
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("this test model does not stream");
  }
}

describe("the OpenAI Agents SDK's loop with Rewind's code-mode tools", () => {
  it("repairs a script from run_script's type error and gets the run's result", async () => {
    const rewind = await rewindAgentsTools({ apiUrl: stack.api.url, toolset });
    try {
      const model = new ScriptedAgentsModel();
      expect(rewind.tools.map((t) => t.name).sort()).toEqual([
        "describe_tools",
        "get_run",
        "run_script",
        "search_tools",
      ]);
      const agent = new Agent({ name: "scripter", instructions: "Write Rewind scripts.", model, tools: rewind.tools });
      const result = await run(agent, "echo n", { maxTurns: 6 });
      expect(model.seen, "the model read two answers of run_script").toHaveLength(2);
      expect(model.seen[0]?.error, "the broken script's answer is an error").toBe(true);
      expect(model.seen[0]?.text).toMatch(/3:9|line 3/);
      expect(model.seen[1]?.error, model.seen[1]?.text).toBe(false);
      expect(String(result.finalOutput)).toContain("n=3");
    } finally {
      await rewind.close();
    }
  });
});

describe("connecting the code-mode tools", () => {
  it("fails with the API's refusal for a toolset the caller can't reach", async () => {
    const unknown = `ts_${"0".repeat(64)}`;
    await expect(rewindAiSdkTools({ apiUrl: stack.api.url, toolset: unknown })).rejects.toThrow(/404/);
    await expect(rewindAgentsTools({ apiUrl: stack.api.url, toolset: unknown })).rejects.toThrow(/404/);
  });
});
