/**
 * What the harness offers the model's script: the tickets MCP server, whose `create_ticket` waits
 * for approval, and its own host tool `harness.ask_user`, answered in this terminal. The toolset
 * document depends only on the server's fixed address, so registering it again gives the same id.
 */
import { createInterface } from "node:readline/promises";
import type { ApiClient, HostTool } from "../../src/sdk/index.ts";

/** The task queue the harness's host-tool worker serves `harness.*` on. */
export const HOST_TOOLS_TASK_QUEUE = "example-harness";

export function harnessToolset(ticketsUrl: string): Parameters<ApiClient["registerToolset"]>[0] {
  return {
    mcpServers: { tickets: { url: ticketsUrl } },
    hostTools: {
      harness: {
        taskQueue: HOST_TOOLS_TASK_QUEUE,
        tools: {
          ask_user: {
            description: "Ask the user a yes/no question in the terminal.",
            inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
            outputSchema: { type: "object", properties: { yes: { type: "boolean" } }, required: ["yes"] },
          },
        },
      },
    },
    policies: { "tickets.create_ticket": { approval: true, onInterruption: "retry" } },
  };
}

export interface AskUserOptions {
  /** Answer yes without reading the terminal. */
  yes: boolean;
  /** Aborts a pending question (the harness is stopping). */
  stopping: AbortSignal;
  /** Ctrl-C typed while the question waits (the terminal sends it to the prompt, not as a signal). */
  onInterrupt(): void;
}

/** `harness.ask_user`: a yes/no question in the terminal. */
export function askUserTool(options: AskUserOptions): HostTool {
  return async function askUser({ question }, ctx) {
    const prompt = `? ${String(question)} [y/n] `;
    if (options.yes) {
      process.stdout.write(`${prompt}y\n`);
      return { yes: true };
    }
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    rl.on("SIGINT", () => options.onInterrupt());
    try {
      const answer = await rl.question(prompt, { signal: AbortSignal.any([ctx.signal, options.stopping]) });
      return { yes: /^y/i.test(answer) };
    } finally {
      rl.close();
    }
  };
}
