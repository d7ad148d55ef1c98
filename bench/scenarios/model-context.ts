/**
 * What a model reads to get a task done: classic MCP tool calling against Rewind's front door,
 * over one toolset of 1,000 generated tools and the reference servers `everything` and `memory`.
 * Tokens are counted with o200k_base (token-count.ts), every exchange made for real.
 *
 * Classic tool calling: the model's context holds every tool's definition (name, description,
 * input schema, as an MCP client lists them), the task, and every call and result so far; it
 * makes one call per turn and reads each result before the next. Rewind's front door: the four
 * tools' definitions as its `tools/list` gives them, then search_tools, describe_tools and one
 * run_script, each answer read in the next turn. Both are counted the same way: each turn, the
 * model reads its whole context again (no prompt caching), and the last turn writes the answer.
 * What is reported per task is the sum over its turns of the tokens read.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { listAllTools, openMcpConnection, type McpConnection } from "../../src/mcp/index.ts";
import { connectCodeMode, type CodeModeAnswer, type CodeModeConnection } from "../../src/sdk/code-mode.ts";
import { startEverythingServer } from "../../test/helpers/everything-server.ts";
import { startStdioGateway } from "../../test/helpers/stdio-gateway.ts";
import type { BenchContext } from "../context.ts";
import { MODEL_CONTEXT_TASKS, type ModelContextTask, type ToolCallStep } from "../model-context-tasks.ts";
import { median, round } from "../stats.ts";
import { tokensOf } from "../token-count.ts";

export interface ModelContextTaskRow {
  task: string;
  calls: number;
  /** Tokens read over all turns. */
  classicTokens: number;
  rewindTokens: number;
  /** 1 − rewind / classic. */
  saved: number;
  /** Classic tool calling with only the reference servers' tools defined (no generated tools). */
  classicReferenceOnlyTokens: number;
  /** 1 − rewind / classic with the reference servers only. */
  savedReferenceOnly: number;
  classicTurns: number;
  rewindTurns: number;
}

export interface ModelContextResult {
  tools: number;
  /** Tokens of the tools' definitions a model holds in every turn. */
  fixedContext: { classic: number; classicReferenceOnly: number; rewind: number };
  tasks: ModelContextTaskRow[];
  medianSaved: number;
  medianSavedReferenceOnly: number;
}

const CALL_TIMEOUT_MS = 60_000;
const RUN_WAIT_MS = 60_000;

interface Exchange {
  /** What the model wrote: a tool call (name and arguments as JSON). */
  call: string;
  /** What it read back. */
  answer: string;
}

/** Tokens read over the turns of one conversation: each turn reads the fixed part and every exchange before it. */
function tokensRead(fixed: string, ask: string, exchanges: Exchange[]): number {
  const base = tokensOf(fixed) + tokensOf(ask);
  let total = 0;
  let history = 0;
  for (const { call, answer } of exchanges) {
    total += base + history;
    history += tokensOf(call) + tokensOf(answer);
  }
  return total + base + history;
}

/** A tool's definition as a model API takes it. */
const definition = (name: string, description: string | undefined, parameters: unknown) => ({
  name,
  description: description ?? "",
  parameters,
});

/** What a model reads of an MCP result: its text, or its structured content when it has no text. */
function answerText(content: unknown[], structuredContent: unknown): string {
  const texts = content
    .map((block) =>
      (block as { type?: unknown; text?: unknown }).type === "text" ? String((block as { text?: unknown }).text) : "",
    )
    .filter(Boolean);
  if (texts.length > 0) return texts.join("\n");
  return JSON.stringify(structuredContent ?? content);
}

const codeModeText = (answer: CodeModeAnswer) => answer.text || JSON.stringify(answer.structuredContent ?? null);

async function classicExchanges(servers: Record<string, McpConnection>, steps: ToolCallStep[]): Promise<Exchange[]> {
  const exchanges: Exchange[] = [];
  for (const step of steps) {
    const connection = servers[step.group];
    if (!connection) throw new Error(`no server for group ${step.group}`);
    const outcome = await connection.callTool({
      name: step.tool,
      arguments: step.args,
      meta: {},
      timeoutMs: CALL_TIMEOUT_MS,
    });
    if (outcome.isError)
      throw new Error(`${step.group}.${step.tool} failed: ${answerText(outcome.content, outcome.structuredContent)}`);
    exchanges.push({
      call: JSON.stringify({ name: step.tool, arguments: step.args }),
      answer: answerText(outcome.content, outcome.structuredContent),
    });
  }
  return exchanges;
}

async function rewindExchanges(codeMode: CodeModeConnection, task: ModelContextTask): Promise<Exchange[]> {
  const call = async (name: string, args: Record<string, unknown>): Promise<Exchange & { raw: CodeModeAnswer }> => {
    const tool = codeMode.tools.find((t) => t.name === name);
    if (!tool) throw new Error(`the front door has no ${name}`);
    const raw = await tool.call(args);
    return { call: JSON.stringify({ name, arguments: args }), answer: codeModeText(raw), raw };
  };
  const exchanges: Exchange[] = [];
  exchanges.push(await call("search_tools", { query: task.search }));
  const described = await call("describe_tools", { names: task.describe });
  if (described.raw.isError) throw new Error(`describe_tools ${task.describe.join(", ")}: ${described.answer}`);
  exchanges.push(described);
  let ran = await call("run_script", { script: task.script });
  exchanges.push(ran);
  const deadline = Date.now() + RUN_WAIT_MS;
  // A run still going when run_script answers is followed with get_run, each a turn of its own.
  for (;;) {
    if (ran.raw.isError) throw new Error(`task ${task.name}: run_script failed: ${ran.answer}`);
    const status = (ran.raw.structuredContent as { status?: unknown } | undefined)?.status;
    if (status !== "running") break;
    if (Date.now() > deadline) throw new Error(`task ${task.name}: its run did not end within ${RUN_WAIT_MS} ms`);
    const runId = String((ran.raw.structuredContent as { runId?: unknown }).runId);
    ran = await call("get_run", { runId });
    exchanges.push(ran);
  }
  return exchanges;
}

export async function measureModelContext(ctx: BenchContext): Promise<ModelContextResult> {
  const { stack, log } = ctx;
  const memoryDir = await mkdtemp(path.join(tmpdir(), "rewind-bench-memory-"));
  const memoryEntry = path.join(process.cwd(), "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
  const [everything, memory] = await Promise.all([
    startEverythingServer(),
    startStdioGateway({
      command: `MEMORY_FILE_PATH='${path.join(memoryDir, "memory.jsonl")}' '${process.execPath}' '${memoryEntry}'`,
    }),
  ]);
  const urls = { gen: `${stack.mcpUrl}/tools-1000`, everything: everything.url, memory: memory.url };
  const opened: McpConnection[] = [];
  let codeMode: CodeModeConnection | undefined;
  try {
    const registered = await fetch(`${stack.api.url}/v1/toolsets`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mcpServers: Object.fromEntries(Object.entries(urls).map(([g, url]) => [g, { url }])) }),
    });
    const toolset = (await registered.json()) as { id?: string };
    if (!registered.ok || !toolset.id)
      throw new Error(`registering the toolset answered ${registered.status}: ${JSON.stringify(toolset)}`);

    const listed = await Promise.all(
      Object.values(urls).map((url) => listAllTools({ url, timeoutMs: CALL_TIMEOUT_MS })),
    );
    const definitions = (lists: typeof listed) =>
      JSON.stringify(lists.flat().map((t) => definition(t.name, t.description, t.inputSchema)));
    const classicFixed = definitions(listed);
    // The same without the 1,000 generated tools: what classic tool calling reads with only the servers the tasks use.
    const referenceFixed = definitions(listed.slice(1));
    codeMode = await connectCodeMode({ apiUrl: stack.api.url, toolset: toolset.id, timeoutMs: CALL_TIMEOUT_MS });
    const rewindFixed = JSON.stringify(codeMode.tools.map((t) => definition(t.name, t.description, t.inputSchema)));
    const tools = listed.reduce((sum, list) => sum + list.length, 0);
    log(
      `model-context: ${tools} tools; fixed context ${tokensOf(classicFixed)} tokens classic, ${tokensOf(rewindFixed)} Rewind`,
    );

    const servers: Record<string, McpConnection> = {};
    for (const [group, url] of Object.entries(urls)) {
      const connection = await openMcpConnection({ url, timeoutMs: CALL_TIMEOUT_MS });
      opened.push(connection);
      servers[group] = connection;
    }
    const rows: ModelContextTaskRow[] = [];
    for (const task of MODEL_CONTEXT_TASKS) {
      const classic = await classicExchanges(servers, task.calls);
      const rewind = await rewindExchanges(codeMode, task);
      const classicTokens = tokensRead(classicFixed, task.ask, classic);
      const rewindTokens = tokensRead(rewindFixed, task.ask, rewind);
      const classicReferenceOnlyTokens = tokensRead(referenceFixed, task.ask, classic);
      rows.push({
        task: task.name,
        calls: task.calls.length,
        classicTokens,
        rewindTokens,
        saved: round(1 - rewindTokens / classicTokens, 4),
        classicReferenceOnlyTokens,
        savedReferenceOnly: round(1 - rewindTokens / classicReferenceOnlyTokens, 4),
        classicTurns: classic.length + 1,
        rewindTurns: rewind.length + 1,
      });
      log(`model-context: ${task.name}: ${classicTokens} tokens classic, ${rewindTokens} Rewind`);
    }
    return {
      tools,
      fixedContext: {
        classic: tokensOf(classicFixed),
        classicReferenceOnly: tokensOf(referenceFixed),
        rewind: tokensOf(rewindFixed),
      },
      tasks: rows,
      medianSaved: round(median(rows.map((r) => r.saved)), 4),
      medianSavedReferenceOnly: round(median(rows.map((r) => r.savedReferenceOnly)), 4),
    };
  } finally {
    await Promise.all(opened.map((c) => c.close()));
    await codeMode?.close();
    await Promise.all([everything.close(), memory.stop()]);
    await rm(memoryDir, { recursive: true, force: true });
  }
}
