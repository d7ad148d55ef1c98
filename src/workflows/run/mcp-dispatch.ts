/**
 * Sends an MCP tool call as a `callMcpTool` activity with the tool's policy: activity id = seq,
 * the same idempotency key on every attempt, a heartbeat so a lost worker is noticed quickly.
 * A call the server refuses for its credentials (401, or 403 for lack of scope) or that no
 * longer fits the server's current schema is parked, not failed: once the harness renews the
 * credentials or approves, it is sent again with the same key.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../../activities/index.ts";
import type {
  CredentialRef,
  CredentialRevisions,
  JournalEntry,
  JsonSchema,
  RunInput,
  PinnedToolset,
  RunTrace,
} from "../../shared/index.ts";
import { runtimeVersionOf, CALL_FAILURE, DEFAULT_MCP_TIMEOUT_MS } from "../../shared/index.ts";
import { failure, outcomeOfFailure, retryPolicyFor, type CallOutcome } from "./call-outcome.ts";
import { callTraceparent } from "./call-spans.ts";
import { neverStartedOnSessionQueue } from "./legacy/index.ts";
import type { Decision, ParkDetails, ParkReason } from "./parking.ts";

export function traceOf(trace: RunTrace | undefined, seq: number): { traceparent?: string } {
  const traceparent = callTraceparent(trace, seq);
  return traceparent ? { traceparent } : {};
}

/** A worker that stops heartbeating for this long is taken as lost, and the attempt as interrupted. */
const HEARTBEAT_TIMEOUT_MS = 15_000;

export function splitTool(qualified: string): { group: string; tool: string } {
  const dot = qualified.indexOf(".");
  return { group: qualified.slice(0, dot), tool: qualified.slice(dot + 1) };
}

export interface McpDispatchContext {
  runId: string;
  /** The run, for the sandbox runtime it started on. */
  run: Pick<RunInput, "runtimeVersion">;
  trace?: RunTrace | undefined;
  toolset: PinnedToolset;
  credentials: CredentialRef;
  /**
   * Parks the call until it is decided; approved, it is running again. `seen`: the stored
   * credentials' revisions a call refused for its credentials was sent with.
   */
  park(entry: JournalEntry, reason: ParkReason, details: ParkDetails, seen?: CredentialRevisions): Promise<Decision>;
  /** Waits the run has finished so far, for the activity's schema check (see McpCallInput.waits). */
  waits?: () => number;
}

/**
 * The run's sandbox runtime, for the activity to turn the result into a value by that runtime's
 * rule (`resultValue`). Only from runtime 3 on, so that every call of an older run is scheduled
 * with the input it always had (absent means 1 or 2 to the activity). No patch: Temporal's
 * determinism check compares the command (ScheduleActivityTask, its type and id), never the
 * activity's input payload; and a run of runtime 3 can only have started on this code.
 */
function runtimeOf(run: Pick<RunInput, "runtimeVersion">): { runtimeVersion?: number } {
  const version = runtimeVersionOf(run);
  return version >= 3 ? { runtimeVersion: version } : {};
}

/**
 * The tool's pinned output schema, which its result must fit: for runs of runtime 4 on only (older
 * runs get results unchecked, as they always did). Not a command change, as `runtimeOf` says.
 */
function outputSchemaOf(
  run: Pick<RunInput, "runtimeVersion">,
  server: PinnedToolset["mcpServers"][string],
  tool: string,
): { outputSchema?: JsonSchema } {
  if (runtimeVersionOf(run) < 4) return {};
  const outputSchema = server.tools.find((t) => t.name === tool)?.outputSchema;
  return outputSchema === undefined ? {} : { outputSchema };
}

/** The run's finished waits for the activity's schema check; none (the activity's default) is not sent. */
function waitsOf(context: McpDispatchContext): { waits?: number } {
  const waits = context.waits?.() ?? 0;
  return waits > 0 ? { waits } : {};
}

/** The attempts an activity's final failure says it made (1 when it does not say). */
function attemptsOfFailure(cause: unknown): number {
  const attempt =
    cause instanceof ApplicationFailure
      ? (cause.details?.[0] as { attempt?: unknown } | undefined)?.attempt
      : undefined;
  return typeof attempt === "number" ? attempt : 1;
}

/** Why a failed attempt parks the call, if it does. */
function parkingFor(
  cause: unknown,
  entry: JournalEntry,
): { reason: ParkReason; details: ParkDetails; seen?: CredentialRevisions } | undefined {
  if (!(cause instanceof ApplicationFailure)) return undefined;
  const details = (cause.details?.[0] ?? {}) as {
    scope?: ParkDetails["scope"];
    revisions?: CredentialRevisions;
    insufficientScope?: boolean;
    scopeAsked?: string | null;
    current?: unknown;
  };
  // Absent from attempts of workers that did not report them: such a call resumes on any write.
  const seen = details.revisions ? { seen: details.revisions } : {};
  switch (cause.type) {
    case CALL_FAILURE.unauthorized:
      return {
        reason: "credentialsExpired",
        details: { scope: details.scope ?? null, message: cause.message },
        ...seen,
      };
    case CALL_FAILURE.forbidden:
      return details.insufficientScope
        ? {
            reason: "insufficientScope",
            details: { scope: details.scope ?? null, scopeAsked: details.scopeAsked ?? null, message: cause.message },
            ...seen,
          }
        : undefined;
    case CALL_FAILURE.schemaChanged:
      return {
        reason: "schemaChanged",
        details: { message: cause.message, tool: entry.tool, current: details.current ?? null },
      };
    default:
      return undefined;
  }
}

export async function dispatchMcp(entry: JournalEntry, context: McpDispatchContext): Promise<CallOutcome> {
  const { group, tool } = splitTool(entry.tool);
  const server = context.toolset.mcpServers[group];
  if (!server) return failure(entry, "unknownTool", `${entry.tool} is not a tool of this run's toolset`);
  const policy = context.toolset.policies[entry.tool] ?? {};
  const timeoutMs = policy.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
  const options = {
    activityId: String(entry.seq),
    summary: `${entry.tool} #${entry.seq}`,
    // The request's own timeout fires first and fails the attempt cleanly; this is the backstop.
    startToCloseTimeout: timeoutMs + 5_000,
    heartbeatTimeout: Math.min(HEARTBEAT_TIMEOUT_MS, timeoutMs + 5_000),
    retry: retryPolicyFor(policy),
  };
  const { callMcpTool } = proxyActivities<Activities>(options);
  let skipSchemaCheck = false;
  /**
   * Sends of the activities before a park (a 401 or 403 was an answer: the call reached the
   * server), so the journal's `attempts` counts every send of the call. Runs of runtime 4 on;
   * older runs count as they did, the last activity's attempts only.
   */
  let sentBeforeParking = 0;
  const countsEverySend = runtimeVersionOf(context.run) >= 4;
  for (;;) {
    try {
      const result = await callMcpTool({
        runId: context.runId,
        seq: entry.seq,
        server: group,
        tool,
        url: server.url,
        args: entry.args,
        timeoutMs,
        credentials: context.credentials,
        ...(skipSchemaCheck ? { skipSchemaCheck } : {}),
        ...traceOf(context.trace, entry.seq),
        ...runtimeOf(context.run),
        ...outputSchemaOf(context.run, server, tool),
        // Like the runtime: input only, never a command, so no patch (see runtimeOf).
        ...waitsOf(context),
      });
      const taken = {
        attempts: result.attempt + sentBeforeParking,
        ...(result.credentials ? { credentials: result.credentials } : {}),
      };
      // toolFailed, or (runtime 4 on) invalidResult: the activity decides, an older one only ever said toolFailed.
      if (!result.ok)
        return { ...failure(entry, result.error.code, result.error.message, result.error.details), ...taken };
      return result.step
        ? { ok: true, value: result.value, step: result.step, ...taken }
        : { ok: true, value: result.value, ...taken };
    } catch (error) {
      if (isCancellation(error)) throw error;
      if (!(error instanceof ActivityFailure)) throw error;
      if (neverStartedOnSessionQueue(error)) continue;
      const parking = parkingFor(error.cause, entry);
      if (!parking) {
        const outcome = outcomeOfFailure(entry, error, policy);
        return sentBeforeParking > 0 ? { ...outcome, attempts: (outcome.attempts ?? 0) + sentBeforeParking } : outcome;
      }
      if (countsEverySend && parking.reason !== "schemaChanged") sentBeforeParking += attemptsOfFailure(error.cause);
      const pinned = server.tools.find((t) => t.name === tool)?.inputSchema ?? null;
      const decision = await context.park(
        entry,
        parking.reason,
        parking.reason === "schemaChanged" ? { ...parking.details, pinned } : parking.details,
        parking.seen,
      );
      if (!decision.approved)
        return failure(
          entry,
          parking.reason === "schemaChanged" ? "schemaChanged" : "rejected",
          `${entry.tool}: ${decision.reason}`,
        );
      // The call goes on (the journal says running again: see CallRunner's park).
      if (parking.reason === "schemaChanged") skipSchemaCheck = true;
    }
  }
}
