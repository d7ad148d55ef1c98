/**
 * Turns a registration request into the pinned document: connect to every MCP server and pin
 * each tool's name, description, schemas and annotations; pin host tools from the request;
 * validate policies against the tools. Anything wrong is a RegistrationError that names the
 * server or field at fault, and nothing is pinned.
 */
import type { JsonSchema, PinnedHostToolGroup, PinnedMcpServer, PinnedTool, PinnedToolset } from "../shared/toolset.ts";
import { RESERVED_EXPORTS, schemaProblem } from "../sandbox/index.ts";
import { AllowedHostError, normalizeAllowedHosts } from "./allowed-hosts.ts";
import { PolicyError, pinPolicies } from "./pin-policies.ts";
import type { RegisterToolsetBody } from "./registration-request.ts";

/** A tool as an MCP server lists it. */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

export interface PinDeps {
  /** Lists every tool of the MCP server at `url` (all pages); throws with a reason on failure. */
  listTools(url: string, headers: Record<string, string>): Promise<ListedTool[]>;
  /** The base toolset's document, if the caller may use it. */
  loadBase(id: string): Promise<PinnedToolset | undefined>;
}

export class RegistrationError extends Error {
  override name = "RegistrationError";
  readonly status: 400 | 404 | 422;
  readonly details: Record<string, unknown>;

  constructor(status: 400 | 404 | 422, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.details = details;
  }
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkSchema(schema: unknown, where: string, details: Record<string, unknown>): JsonSchema {
  if (!isRecord(schema) && typeof schema !== "boolean") throw new RegistrationError(422, `${where} is not a JSON Schema`, details);
  const problem = schemaProblem(schema);
  if (problem) throw new RegistrationError(422, `${where} can't be used: ${problem.message}`, { ...details, reason: problem.reason });
  return schema;
}

export function pinTool(listed: ListedTool, where: string, details: Record<string, unknown>): PinnedTool {
  if (typeof listed.name !== "string" || listed.name.length === 0 || listed.name.length > 128) {
    throw new RegistrationError(422, `${where}: a tool has no usable name`, { ...details, reason: "invalidTool" });
  }
  const at = `${where}: tool "${listed.name}"`;
  const tool: PinnedTool = { name: listed.name, inputSchema: checkSchema(listed.inputSchema, `${at} input schema`, details) };
  if (typeof listed.description === "string") tool.description = listed.description;
  if (listed.outputSchema !== undefined) tool.outputSchema = checkSchema(listed.outputSchema, `${at} output schema`, details);
  if (isRecord(listed.annotations)) tool.annotations = listed.annotations;
  return tool;
}

function uniqueSorted(tools: PinnedTool[], where: string, details: Record<string, unknown>): PinnedTool[] {
  const sorted = [...tools].sort(byName);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]?.name === sorted[i - 1]?.name) {
      throw new RegistrationError(422, `${where} lists the tool "${sorted[i]?.name}" more than once`, { ...details, reason: "duplicateTool" });
    }
  }
  return sorted;
}

async function pinServers(servers: NonNullable<RegisterToolsetBody["mcpServers"]>, deps: PinDeps, credentials: RegisterToolsetBody["credentials"]): Promise<Record<string, PinnedMcpServer>> {
  const entries = await Promise.all(Object.entries(servers).map(async ([group, { url }]) => {
    const details = { server: group, url };
    let listed: ListedTool[];
    try {
      listed = await deps.listTools(url, credentials?.mcpServers[group]?.headers ?? {});
    } catch (error) {
      const reason = (error as { reason?: unknown }).reason;
      throw new RegistrationError(422, `MCP server "${group}" (${url}): ${error instanceof Error ? error.message : String(error)}`, { ...details, reason: typeof reason === "string" ? reason : "unreachable" });
    }
    const where = `MCP server "${group}"`;
    const tools = uniqueSorted(listed.map((t) => pinTool(t, where, details)), where, details);
    return [group, { url, tools }] as const;
  }));
  return Object.fromEntries(entries);
}

function pinHostTools(groups: NonNullable<RegisterToolsetBody["hostTools"]>): Record<string, PinnedHostToolGroup> {
  return Object.fromEntries(Object.entries(groups).map(([group, { taskQueue, tools }]) => {
    const where = `host-tool group "${group}"`;
    const pinned = Object.entries(tools).map(([name, t]) => pinTool({ name, ...t }, where, { group }));
    return [group, { taskQueue, tools: pinned.sort(byName) }];
  }));
}

function checkGroupNames(request: RegisterToolsetBody): void {
  const mcp = Object.keys(request.mcpServers ?? {});
  const host = Object.keys(request.hostTools ?? {});
  for (const name of [...mcp, ...host]) {
    if (RESERVED_EXPORTS.has(name)) throw new RegistrationError(400, `"${name}" is a built-in of rewind:tools and can't name a tool group`, { group: name });
  }
  const both = mcp.find((name) => host.includes(name));
  if (both) throw new RegistrationError(400, `"${both}" names both an MCP server and a host-tool group`, { group: both });
}

function pinHttp(request: RegisterToolsetBody): PinnedToolset["http"] {
  if (!request.http) return undefined;
  try {
    return { allowedHosts: normalizeAllowedHosts(request.http.allowedHosts) };
  } catch (error) {
    if (error instanceof AllowedHostError) throw new RegistrationError(400, `http.allowedHosts: ${error.message}`, { field: "http.allowedHosts" });
    throw error;
  }
}

export async function pinToolset(request: RegisterToolsetBody, deps: PinDeps): Promise<PinnedToolset> {
  const http = pinHttp(request);
  if (request.base) {
    if (request.mcpServers || request.hostTools || request.policies) {
      throw new RegistrationError(400, "a derived toolset takes its servers, host tools and policies from its base; give only base, workflows and http");
    }
    const base = await deps.loadBase(request.base);
    if (!base) throw new RegistrationError(404, `base toolset ${request.base} was not found`, { base: request.base });
    const derived: PinnedToolset = { ...base, base: request.base, workflows: request.workflows ?? {} };
    const httpSettings = http ?? base.http;
    if (httpSettings) derived.http = httpSettings;
    else delete derived.http;
    return derived;
  }
  checkGroupNames(request);
  const unpinned = {
    format: 1 as const,
    mcpServers: await pinServers(request.mcpServers ?? {}, deps, request.credentials),
    hostTools: pinHostTools(request.hostTools ?? {}),
    workflows: request.workflows ?? {},
    ...(http ? { http } : {}),
  };
  try {
    return { ...unpinned, policies: pinPolicies(unpinned, request.policies ?? {}) };
  } catch (error) {
    if (error instanceof PolicyError) throw new RegistrationError(400, error.message, { field: "policies" });
    throw error;
  }
}
