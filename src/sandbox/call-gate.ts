/**
 * Decides, synchronously and before a call gets into the journal, whether a call the script
 * issued may be dispatched: the tool must exist in the pinned toolset, its arguments must fit
 * the pinned schema, and built-ins get their arguments normalized (durations to ms). A refused
 * call still takes a seq, so replay stays aligned, but is never dispatched.
 */
import { parseDuration } from "../shared/index.ts";
import type { PinnedTool, PinnedToolset } from "../shared/index.ts";

export type GateVerdict =
  { args: unknown } | { refused: { code: "invalidArguments" | "unknownTool"; message: string; details?: unknown } };

/** Validates arguments against a JSON Schema; returns undefined when they fit. */
/** Why `value` does not fit `schema`, or undefined; `subject` names the value in the message (default: arguments). */
export type SchemaValidator = (
  schema: PinnedTool["inputSchema"],
  value: unknown,
  subject?: "arguments" | "result" | "content",
) => { message: string; details?: unknown } | undefined;

export const MAX_ARGS_BYTES = 1024 * 1024;

const invalid = (message: string, details?: unknown): GateVerdict => ({
  refused: { code: "invalidArguments", message, details },
});

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function signalName(value: unknown, what: string): string | GateVerdict {
  if (typeof value !== "string" || value.length === 0 || value.length > 200)
    return invalid(`${what} must be a non-empty string of at most 200 characters`);
  return value;
}

/** `fetch(url, init)` as the dispatcher sends it: method upper-cased, headers as strings. */
function fetchArgs(args: Record<string, unknown>): GateVerdict {
  const url = args["url"];
  if (typeof url !== "string" || url.length === 0 || url.length > 8192)
    return invalid("fetch: the URL must be a string of at most 8192 characters");
  const init = record(args["init"]) ?? {};
  const method = init["method"] ?? "GET";
  if (typeof method !== "string") return invalid("fetch: init.method must be a string");
  const headers = record(init["headers"]) ?? {};
  const plain: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== "string") return invalid(`fetch: header "${name}" must be a string`);
    plain[name] = value;
  }
  const body = init["body"];
  if (body !== undefined && body !== null && typeof body !== "string")
    return invalid("fetch: init.body must be a string (use JSON.stringify)");
  return { args: { url, method: method.toUpperCase(), headers: plain, ...(typeof body === "string" ? { body } : {}) } };
}

function builtin(toolset: PinnedToolset, tool: string, args: Record<string, unknown>): GateVerdict {
  switch (tool) {
    case "rewind.sleep": {
      const parsed = parseDuration(args["duration"]);
      return "error" in parsed ? invalid(`sleep: ${parsed.error}`) : { args: { ms: parsed.ms } };
    }
    case "rewind.waitForSignal": {
      const name = signalName(args["name"], "waitForSignal: the signal name");
      if (typeof name !== "string") return name;
      if (args["timeout"] === null) return { args: { name, timeoutMs: null } };
      const parsed = parseDuration(args["timeout"]);
      return "error" in parsed
        ? invalid(`waitForSignal: timeout: ${parsed.error}`)
        : { args: { name, timeoutMs: parsed.ms } };
    }
    case "rewind.webhook": {
      const name = signalName(args["name"], "webhook: the name");
      return typeof name === "string" ? { args: { name } } : name;
    }
    case "rewind.workflows.start":
    case "rewind.workflows.signal": {
      const workflow = args["workflow"];
      if (typeof workflow !== "string" || !Object.hasOwn(toolset.workflows, workflow))
        return { refused: { code: "unknownTool", message: `no workflow "${String(workflow)}" in this toolset` } };
      if (tool === "rewind.workflows.start") return { args };
      const runId = signalName(args["runId"], "signal: the run id");
      if (typeof runId !== "string") return runId;
      const signal = signalName(args["signal"], "signal: the signal name");
      return typeof signal === "string"
        ? { args: { workflow, runId, signal, payload: args["payload"] ?? null } }
        : signal;
    }
    case "rewind.workflows.result": {
      const runId = args["runId"];
      return typeof runId === "string" && /^run_[0-9A-Za-z]{10,64}$/.test(runId)
        ? { args: { runId } }
        : invalid("result(): not a run id");
    }
    case "http.fetch":
      if (!toolset.http) return { refused: { code: "unknownTool", message: "this toolset does not enable http" } };
      return fetchArgs(args);
    default:
      return { refused: { code: "unknownTool", message: `unknown built-in ${tool}` } };
  }
}

export function createCallGate(
  toolset: PinnedToolset,
  validate: SchemaValidator,
): (tool: string, args: unknown, argsBytes: number) => GateVerdict {
  const tools = new Map<string, PinnedTool>();
  for (const [group, server] of Object.entries({ ...toolset.mcpServers, ...toolset.hostTools })) {
    for (const t of server.tools) tools.set(`${group}.${t.name}`, t);
  }
  return (tool, args, argsBytes) => {
    if (argsBytes > MAX_ARGS_BYTES)
      return invalid(`${tool}: arguments are ${argsBytes} bytes of JSON, more than the limit of ${MAX_ARGS_BYTES}`);
    const pinned = tools.get(tool);
    if (pinned) {
      const problem = validate(pinned.inputSchema, args ?? {});
      return problem ? invalid(`${tool}: ${problem.message}`, problem.details) : { args: args ?? {} };
    }
    const fields = record(args);
    if (!fields) return invalid(`${tool}: arguments must be an object`);
    return builtin(toolset, tool, fields);
  };
}
