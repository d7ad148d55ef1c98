/**
 * Turns a registration request into the pinned document: connect to every MCP server, keep the
 * tools its `tools` selection keeps, and pin each one's name, description, schemas and
 * annotations; pin host tools from the request; validate policies against the tools. What is
 * wrong with the request or a server is a RegistrationError that names the server or field at
 * fault, and nothing is pinned; a server's tool whose schema can't be used is only left out,
 * and said so beside the document.
 */
import type { PinnedHostToolGroup, PinnedMcpServer, PinnedTool, PinnedToolset } from "../shared/index.ts";
import { AllowedHostError, normalizeAllowedHosts } from "./allowed-hosts.ts";
import { PolicyError, pinPolicies } from "./pin-policies.ts";
import { RevertPolicyError } from "./pin-revert.ts";
import type { OmittedTool, RegisterToolsetBody } from "../contract/index.ts";
import { pinListedTool, pinTool, type ListedTool } from "./pin-tool.ts";
import { RegistrationError } from "./registration-error.ts";
import { selectTools } from "./tool-selection.ts";

export interface PinDeps {
  /** Lists every tool of the MCP server at `url` (all pages); throws with a reason on failure. */
  listTools(url: string, headers: Record<string, string>): Promise<ListedTool[]>;
  /** The base toolset's document, if the caller may use it. */
  loadBase(id: string): Promise<PinnedToolset | undefined>;
}

export interface PinnedRegistration {
  document: PinnedToolset;
  /** Tools of the servers left out because a schema of theirs can't be used. */
  omittedTools: OmittedTool[];
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function checkUnique(tools: ListedTool[], where: string, details: Record<string, unknown>): void {
  const seen = new Set<string>();
  for (const { name } of tools) {
    if (seen.has(name))
      throw new RegistrationError(422, `${where} lists the tool "${name}" more than once`, {
        ...details,
        reason: "duplicateTool",
      });
    seen.add(name);
  }
}

interface PinnedServers {
  servers: Record<string, PinnedMcpServer>;
  omitted: OmittedTool[];
  /** Qualified names (`group.tool`) the request's selections left out, with the selection's field. */
  filteredOut: Map<string, string>;
}

async function pinServers(
  servers: NonNullable<RegisterToolsetBody["mcpServers"]>,
  deps: PinDeps,
  credentials: RegisterToolsetBody["credentials"],
): Promise<PinnedServers> {
  const result: PinnedServers = { servers: {}, omitted: [], filteredOut: new Map() };
  const pinned = await Promise.all(
    Object.entries(servers).map(async ([group, { url, tools: selection }]) => {
      const details = { server: group, url };
      let listed: ListedTool[];
      try {
        listed = await deps.listTools(url, credentials?.mcpServers[group]?.headers ?? {});
      } catch (error) {
        const reason = (error as { reason?: unknown }).reason;
        throw new RegistrationError(
          422,
          `MCP server "${group}" (${url}): ${error instanceof Error ? error.message : String(error)}`,
          { ...details, reason: typeof reason === "string" ? reason : "unreachable" },
        );
      }
      const where = `MCP server "${group}"`;
      const { kept, filteredOut } = selectTools(listed, selection, where, details);
      const field = selection && "include" in selection ? "include" : "exclude";
      for (const name of filteredOut) result.filteredOut.set(`${group}.${name}`, `mcpServers.${group}.tools.${field}`);
      const tools: PinnedTool[] = [];
      const omitted: OmittedTool[] = [];
      for (const verdict of kept.map((t) => pinListedTool(t, group, where, details))) {
        if ("tool" in verdict) tools.push(verdict.tool);
        else omitted.push(verdict.omitted);
      }
      checkUnique(kept, where, details);
      return { group, server: { url, tools: tools.sort(byName) }, omitted };
    }),
  );
  for (const { group, server, omitted } of pinned) {
    result.servers[group] = server;
    result.omitted.push(...omitted);
  }
  result.omitted.sort((a, b) =>
    a.server === b.server ? byName({ name: a.tool }, { name: b.tool }) : a.server < b.server ? -1 : 1,
  );
  return result;
}

function pinHostTools(groups: NonNullable<RegisterToolsetBody["hostTools"]>): Record<string, PinnedHostToolGroup> {
  return Object.fromEntries(
    Object.entries(groups).map(([group, { taskQueue, tools }]) => {
      const where = `host-tool group "${group}"`;
      const pinned = Object.entries(tools).map(([name, t]) => pinTool({ name, ...t }, where, { group }));
      return [group, { taskQueue, tools: pinned.sort(byName) }];
    }),
  );
}

function checkGroupNames(request: RegisterToolsetBody): void {
  const mcp = Object.keys(request.mcpServers ?? {});
  const host = Object.keys(request.hostTools ?? {});
  const both = mcp.find((name) => host.includes(name));
  if (both)
    throw new RegistrationError(400, `"${both}" names both an MCP server and a host-tool group`, { group: both });
}

function pinHttp(request: RegisterToolsetBody): PinnedToolset["http"] {
  if (!request.http) return undefined;
  try {
    return { allowedHosts: normalizeAllowedHosts(request.http.allowedHosts) };
  } catch (error) {
    if (error instanceof AllowedHostError)
      throw new RegistrationError(400, `http.allowedHosts: ${error.message}`, { field: "http.allowedHosts" });
    throw error;
  }
}

/** Drops policies of tools left out for their schemas: the response already says they are gone. */
function policiesOfPinned(
  policies: NonNullable<RegisterToolsetBody["policies"]>,
  omitted: OmittedTool[],
): NonNullable<RegisterToolsetBody["policies"]> {
  const gone = new Set(omitted.map((t) => `${t.server}.${t.tool}`));
  return Object.fromEntries(Object.entries(policies).filter(([tool]) => !gone.has(tool)));
}

/** What a derived toolset may set: everything else it takes from its base. */
const DERIVED_FIELDS = new Set(["base", "workflows", "scriptApproval"]);

/**
 * A derived toolset: its base's servers, tools, host tools, policies and http allow-list, with
 * workflows of its own. Its credentials stand before its base's at run time (see the resolver).
 */
async function pinDerived(request: RegisterToolsetBody & { base: string }, deps: PinDeps): Promise<PinnedRegistration> {
  const extra = Object.keys(request).find(
    (field) => !DERIVED_FIELDS.has(field) && request[field as keyof RegisterToolsetBody] !== undefined,
  );
  if (extra) {
    throw new RegistrationError(
      400,
      `${extra}: a derived toolset takes its servers, tools, policies, http allow-list and credentials from its base; give only base, workflows and scriptApproval (write its own credentials with PUT /v1/toolsets/{id}/credentials)`,
      { field: extra },
    );
  }
  const base = await deps.loadBase(request.base);
  if (!base) throw new RegistrationError(404, `base toolset ${request.base} was not found`, { base: request.base });
  // A derived toolset may ask its runs for their script's approval even when its base does not.
  const scriptApproval = request.scriptApproval ? { scriptApproval: request.scriptApproval } : {};
  return {
    document: { ...base, base: request.base, workflows: request.workflows ?? {}, ...scriptApproval },
    omittedTools: [],
  };
}

export async function pinToolset(request: RegisterToolsetBody, deps: PinDeps): Promise<PinnedRegistration> {
  if (request.base) return pinDerived({ ...request, base: request.base }, deps);
  const http = pinHttp(request);
  checkGroupNames(request);
  const { servers, omitted, filteredOut } = await pinServers(request.mcpServers ?? {}, deps, request.credentials);
  const unpinned = {
    format: 1 as const,
    mcpServers: servers,
    hostTools: pinHostTools(request.hostTools ?? {}),
    workflows: request.workflows ?? {},
    ...(http ? { http } : {}),
    ...(request.scriptApproval ? { scriptApproval: request.scriptApproval } : {}),
  };
  try {
    const policies = pinPolicies(unpinned, policiesOfPinned(request.policies ?? {}, omitted), filteredOut);
    return { document: { ...unpinned, policies }, omittedTools: omitted };
  } catch (error) {
    if (error instanceof PolicyError) throw new RegistrationError(400, error.message, { field: "policies" });
    if (error instanceof RevertPolicyError)
      throw new RegistrationError(error.status, error.message, { field: "policies", problems: error.problems });
    throw error;
  }
}
