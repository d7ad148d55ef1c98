/**
 * The four tools of a toolset's MCP server, as `tools/list` shows them to a model, and the zod
 * schemas their arguments are checked with (the listed JSON Schemas are made from the same).
 * Their text is the model's fixed context: it is measured (docs/api.md) and every word must earn
 * its place. `run_script` carries the guide to writing a script and, for a toolset small enough,
 * its whole prompt rendering; for a larger one it says to search and describe tools first.
 */
import { z } from "zod";
import { MAX_SCRIPT_BYTES, SCRIPT_GUIDE } from "../../declarations/index.ts";
import { listToolGroups } from "../../shared/index.ts";
import type { ResolvedToolset } from "../../toolsets/index.ts";
import type { ToolDefinition } from "./front-door-types.ts";

/** A prompt rendering up to this long (about 3,000 tokens) goes whole into `run_script`'s description. */
export const INLINE_PROMPT_CHARS = 12_000;

/** Group names a large toolset's description lists at most. */
const GROUPS_NAMED = 8;

export const searchToolsArgs = z.object({
  query: z.string().trim().min(1).max(500).describe("What the tool should do, or part of its name"),
  limit: z.number().int().min(1).max(50).optional().describe("At most this many (default 10)"),
});

export const describeToolsArgs = z.object({
  names: z.array(z.string().min(1).max(300)).min(1).max(50).describe("Qualified names (group.tool)"),
});

export const runScriptArgs = z.object({
  script: z.string().min(1).max(MAX_SCRIPT_BYTES).describe("The TypeScript module"),
  input: z.unknown().optional().describe("JSON passed to main(input)"),
});

export const getRunArgs = z.object({
  runId: z.string().min(1).max(100).describe("The runId run_script answered"),
});

function jsonSchemaOf(schema: z.ZodObject): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}

/** What `run_script`'s description says of the toolset: its declarations, or how to find them. */
function toolsetPart(toolset: ResolvedToolset): string {
  if (toolset.prompt.length <= INLINE_PROMPT_CHARS) return `# The toolset\n${toolset.prompt}`;
  const groups = listToolGroups(toolset.document);
  const count = groups.reduce((sum, g) => sum + g.tools.length, 0);
  const named = groups.slice(0, GROUPS_NAMED).map((g) => g.group);
  const more = groups.length > named.length ? ", …" : "";
  return (
    `# The toolset\n${count} tools in ${groups.length} groups (${named.join(", ")}${more}): ` +
    "call search_tools, then describe_tools for the ones you need, before writing the script.\n"
  );
}

export function runScriptDescription(toolset: ResolvedToolset): string {
  const intro =
    "Type-checks a TypeScript script against this toolset and runs it durably: every tool call is journaled; " +
    "a run survives restarts and may sleep or wait for people for days. A type error comes back with tsc's " +
    "line and column. Answers the result, or for a longer run its runId and status: then call get_run.";
  return `${intro}\n\n${SCRIPT_GUIDE}\n${toolsetPart(toolset)}`;
}

export function frontDoorTools(toolset: ResolvedToolset): ToolDefinition[] {
  return [
    {
      name: "search_tools",
      description: "Finds this toolset's tools by a few words: the best matches, one line each.",
      inputSchema: jsonSchemaOf(searchToolsArgs),
    },
    {
      name: "describe_tools",
      description:
        'The declarations of the named tools, as a script imports them from "rewind:tools": arguments, result and descriptions.',
      inputSchema: jsonSchemaOf(describeToolsArgs),
    },
    {
      name: "run_script",
      description: runScriptDescription(toolset),
      inputSchema: jsonSchemaOf(runScriptArgs),
      execution: { taskSupport: "optional" },
    },
    {
      name: "get_run",
      description: "A run's status, with its result or error, or what it waits for.",
      inputSchema: jsonSchemaOf(getRunArgs),
    },
  ];
}
