/**
 * Policies as pinned: every policy names a tool the toolset has (`http.fetch` when the toolset
 * enables http), durations become milliseconds, and settings that only make sense for one kind
 * of tool (heartbeats are for host tools) are refused. Defaults are not written in, and a
 * setting that states its default is left out: the dispatcher applies defaults, so a toolset
 * that writes `approval: false` or `concurrency: 16` pins, and is named, as one that does not.
 * (Toolsets registered before this rule keep the ids they were given; they are looked up by id.)
 */
import {
  DEFAULT_HOST_TIMEOUT_MS,
  DEFAULT_MCP_TIMEOUT_MS,
  HTTP_TOOL,
  RUN_CONCURRENCY,
  parseDuration,
} from "../shared/index.ts";
import type { PinnedToolset, ToolPolicy } from "../shared/index.ts";
import type { ToolPolicyInput } from "../contract/index.ts";
import { pinRevert } from "./pin-revert.ts";

export class PolicyError extends Error {
  override name = "PolicyError";
}

const MAX_TIMEOUT_MS = 24 * 3_600_000;
/** The http tool's bound on one response, whatever its policy says. */
const HTTP_MAX_TIMEOUT_MS = 30_000;

function milliseconds(value: number | string, where: string): number {
  const parsed = parseDuration(value);
  if ("error" in parsed) throw new PolicyError(`${where}: ${parsed.error}`);
  if (parsed.ms < 1000) throw new PolicyError(`${where}: must be at least 1 second`);
  if (parsed.ms > MAX_TIMEOUT_MS) throw new PolicyError(`${where}: must be at most 24 hours`);
  return parsed.ms;
}

/**
 * `onUnknown` decides what a call whose outcome is unknown does, and only an `at_most_once` call
 * has one: the tool's policy must say so, or, for `http.fetch`, leave it to the per-method rule
 * (its non-safe methods are sent at most once).
 */
function pinOnUnknown(
  tool: string,
  kind: "mcp" | "host" | "http",
  input: ToolPolicyInput,
): NonNullable<ToolPolicy["onUnknown"]> {
  const onUnknown = input.onUnknown ?? "fail";
  const atMostOnce = input.onInterruption === "at_most_once" || (kind === "http" && input.onInterruption === undefined);
  if (!atMostOnce)
    throw new PolicyError(
      `policies["${tool}"].onUnknown: only a call sent at most once can end with an unknown outcome; give onInterruption: "at_most_once"`,
    );
  return onUnknown;
}

/**
 * `filteredOut` maps tools a server lists but the request's `tools` selection left out to the
 * selection's field, so a policy naming one says why the tool is not there.
 */
export function pinPolicies(
  toolset: Omit<PinnedToolset, "policies">,
  policies: Record<string, ToolPolicyInput>,
  filteredOut: ReadonlyMap<string, string> = new Map(),
): Record<string, ToolPolicy> {
  const kinds = new Map<string, "mcp" | "host" | "http">();
  for (const [group, server] of Object.entries(toolset.mcpServers))
    for (const t of server.tools) kinds.set(`${group}.${t.name}`, "mcp");
  for (const [group, host] of Object.entries(toolset.hostTools))
    for (const t of host.tools) kinds.set(`${group}.${t.name}`, "host");
  // The dispatcher sends every `http.fetch` call as a request, whatever the groups are named.
  if (toolset.http) kinds.set(HTTP_TOOL, "http");
  else if (!kinds.has(HTTP_TOOL) && Object.hasOwn(policies, HTTP_TOOL)) {
    throw new PolicyError(`policies["${HTTP_TOOL}"]: this toolset does not enable http (give http.allowedHosts)`);
  }

  const pinned: Record<string, ToolPolicy> = {};
  for (const [tool, input] of Object.entries(policies)) {
    const kind = kinds.get(tool);
    const selection = filteredOut.get(tool);
    if (selection)
      throw new PolicyError(`policies: "${tool}" is not a tool of this toolset: ${selection} leaves it out`);
    if (!kind) throw new PolicyError(`policies: "${tool}" is not a tool of this toolset (write group.tool)`);
    const policy: ToolPolicy = {};
    if (input.onInterruption !== undefined) policy.onInterruption = input.onInterruption;
    if (input.onUnknown !== undefined) policy.onUnknown = pinOnUnknown(tool, kind, input);
    if (input.approval !== undefined) policy.approval = input.approval;
    if (input.timeout !== undefined) policy.timeoutMs = milliseconds(input.timeout, `policies["${tool}"].timeout`);
    if (kind === "http" && (policy.timeoutMs ?? 0) > HTTP_MAX_TIMEOUT_MS) {
      throw new PolicyError(
        `policies["${tool}"].timeout: an http request is bounded to 30 seconds; a policy may shorten it, not lengthen it`,
      );
    }
    if (input.heartbeatTimeout !== undefined) {
      if (kind !== "host") throw new PolicyError(`policies["${tool}"].heartbeatTimeout: only host tools heartbeat`);
      policy.heartbeatTimeoutMs = milliseconds(input.heartbeatTimeout, `policies["${tool}"].heartbeatTimeout`);
    }
    if (input.concurrency !== undefined) policy.concurrency = input.concurrency;
    if (input.revert !== undefined) policy.revert = pinRevert(tool, input.revert, toolset, new Set(kinds.keys()));
    withoutDefaults(policy, kind);
    if (Object.keys(policy).length > 0) pinned[tool] = policy;
  }
  return pinned;
}

/**
 * Drops the settings that say what the dispatcher does anyway. The http tool's interruption rule
 * depends on the method when none is given, so for it an explicit `retry` is not a default.
 */
function withoutDefaults(policy: ToolPolicy, kind: "mcp" | "host" | "http"): void {
  if (policy.approval === false) delete policy.approval;
  if (policy.concurrency === RUN_CONCURRENCY) delete policy.concurrency;
  if (policy.onInterruption === "retry" && kind !== "http") delete policy.onInterruption;
  if (policy.onUnknown === "fail") delete policy.onUnknown;
  const defaultTimeout =
    kind === "mcp" ? DEFAULT_MCP_TIMEOUT_MS : kind === "host" ? DEFAULT_HOST_TIMEOUT_MS : undefined;
  if (policy.timeoutMs !== undefined && policy.timeoutMs === defaultTimeout) delete policy.timeoutMs;
}
