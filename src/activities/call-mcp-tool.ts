/**
 * The `callMcpTool` activity: one attempt of an MCP tool call through the worker's connection
 * pool. Credentials are resolved and opened here, and only here; they go into the connection's
 * headers and are scrubbed from any text that leaves. Before sending, the call is checked
 * against the server's current schema. The idempotency key (`<run_id>/<seq>`) is derived from
 * the input, so every attempt carries the same one. A tool's own error is returned as a result
 * (never retried); an interruption is thrown as a typed failure the workflow understands.
 * A result also carries the script's next step when the run's isolate is warm on this worker.
 *
 * Each run has its own MCP session per server (the pool key names the run). While the call is
 * out, the server's progress reaches the run's journal (and keeps the attempt's heartbeat
 * going), and a question it asks (elicitation) parks the call until the harness answers. A tool
 * the server runs as a task is called as one; the task's id goes into the heartbeat, so the
 * attempt after a lost worker waits for that task instead of calling the tool again.
 */
import { createHash } from "node:crypto";
import { Context } from "@temporalio/activity";
import { ApplicationFailure, CancelledFailure } from "@temporalio/common";
import type { CredentialResolver } from "../credentials/index.ts";
import {
  McpCallError,
  McpConnectError,
  resultValue,
  type McpCallHooks,
  type McpPool,
  type McpTaskHandle,
  type McpToolDescriptor,
  scrubberFor,
  type Scrubber,
} from "../mcp/index.ts";
import type { SchemaValidator, Sandbox } from "../sandbox/index.ts";
import type { EndpointResolver } from "../events/index.ts";
import type { SpeculativeStep } from "../shared/index.ts";
import {
  CALL_FAILURE,
  IDEMPOTENCY_META_KEY,
  MAX_RESULT_BYTES,
  encodeCallEvent,
  idempotencyKey,
  type McpCallInput,
  type ToolCallResult,
} from "../shared/index.ts";
import type { Tracing } from "../tracing/index.ts";
import { exchangeAttributes, mcpAttemptSpan, thrownErrorType } from "./attempt-spans.ts";
import { placed } from "./advance-script.ts";
import { withEventsEndpoint } from "./run-end.ts";
import type { CallRef, CallReports } from "./call-reports.ts";
import { createSchemaWatch, schemaChangeOf, type SchemaWatch } from "./schema-watch.ts";

export interface McpCallDeps {
  mcpPool: McpPool;
  /** The worker's sandbox: a finished call is fed to its run's warm script right away (a speculative step). */
  sandbox?: Pick<Sandbox, "speculate" | "notSpeculated">;
  /** Whether a finished call is fed to its run's warm script here (default: yes); off, the workflow always feeds it. */
  speculativeSteps?: boolean;
  /** Whether a run's namespace takes events, told with a step that ends the run. */
  endpoints?: EndpointResolver;
  /** The task queue only this worker polls, told with each speculative step (`StepPlace`). */
  sessionQueue?: string | undefined;
  tracing: Tracing;
  credentials: CredentialResolver;
  validate: SchemaValidator;
  /** Where a call's progress and its server's questions go: the run's journal and the harness. */
  callReports?: CallReports;
}

/** What an attempt leaves in its heartbeat for the attempts after it. */
interface AttemptNotes {
  task?: McpTaskHandle;
}

/** How often a pending call tells Temporal the worker is still alive. */
const HEARTBEAT_EVERY_MS = 3_000;

const FAILURE_OF_REASON: Record<string, { type: string; retryable: boolean }> = {
  unreachable: { type: CALL_FAILURE.unreachable, retryable: true },
  interrupted: { type: CALL_FAILURE.interrupted, retryable: true },
  timedOut: { type: CALL_FAILURE.attemptTimedOut, retryable: true },
  unauthorized: { type: CALL_FAILURE.unauthorized, retryable: false },
  forbidden: { type: CALL_FAILURE.forbidden, retryable: false },
  targetNotAllowed: { type: CALL_FAILURE.targetNotAllowed, retryable: false },
};

/** A failed listing (the schema check) that is more than the server being unreachable. */
const LISTING_FAILURES: Partial<Record<McpConnectError["reason"], string>> = {
  unauthorized: CALL_FAILURE.unauthorized,
  forbidden: CALL_FAILURE.forbidden,
  targetNotAllowed: CALL_FAILURE.targetNotAllowed,
};

function textOf(content: unknown[]): string {
  const texts = content.flatMap((item) =>
    typeof item === "object" && item !== null && (item as { type?: unknown }).type === "text"
      ? [String((item as { text?: unknown }).text)]
      : [],
  );
  return texts.join("\n").slice(0, 2000) || "the tool reported an error";
}

function notesOf(details: unknown): AttemptNotes {
  const task = typeof details === "object" && details !== null ? (details as { task?: unknown }).task : undefined;
  if (typeof task !== "object" || task === null) return {};
  const { taskId, sessionId } = task as { taskId?: unknown; sessionId?: unknown };
  return typeof taskId === "string" && typeof sessionId === "string" ? { task: { taskId, sessionId } } : {};
}

/**
 * Progress counts as a sign of life; the server's questions go to the harness, and are withdrawn
 * when the attempt ends however it ends (`attemptEnded`), so no stale question stays parked.
 * Both are the server's text, scrubbed (`clean`) like its errors.
 */
function hooksFor(
  deps: McpCallDeps,
  call: CallRef,
  beat: () => void,
  attemptEnded: AbortSignal,
  scrub: Scrubber,
): McpCallHooks {
  const clean = scrub.text;
  return {
    onProgress(progress) {
      beat();
      deps.callReports?.progress(
        call,
        progress.message === undefined ? progress : { ...progress, message: clean(progress.message) },
      );
    },
    onElicitation(request, signal) {
      if (!deps.callReports) return Promise.reject(new Error("this worker can't put questions to the harness"));
      const asked = {
        message: clean(request.message),
        requestedSchema: scrub.value(request.requestedSchema),
      };
      return deps.callReports.askInput(call, asked, AbortSignal.any([signal, attemptEnded]));
    },
  };
}

function callsAsTask(tool: McpToolDescriptor | undefined): boolean {
  return tool?.taskSupport === "required" || tool?.taskSupport === "optional";
}

function fingerprint(headers: Record<string, string>): string {
  return createHash("sha256")
    .update(JSON.stringify(Object.entries(headers).sort()))
    .digest("hex")
    .slice(0, 16);
}

/**
 * The pool keys of a run's calls to a server: its own session (`poolKey`: a server's per-session
 * state never mixes runs or tenants) and the namespace's listing shared between runs (`sharedKey`).
 */
export function sessionKeys(
  namespace: string,
  runId: string,
  url: string,
  headers: Record<string, string>,
): { poolKey: string; sharedKey: string } {
  const credentials = fingerprint(headers);
  return {
    poolKey: `${runSessionsPrefix(namespace, runId)}${url}#${credentials}`,
    sharedKey: `${namespace}#${url}#${credentials}`,
  };
}

/** What the pool keys of a run's sessions start with (`sessionKeys`), whatever their server and credentials. */
export function runSessionsPrefix(namespace: string, runId: string): string {
  return `${namespace}/${runId}#`;
}

/**
 * Takes the run's next step speculatively with this result, on this worker, if its isolate is
 * warm here: when the workflow adopts it, it needs no local activity for it (see
 * `SpeculativeStep`). Never fails the call.
 */
async function takeSpeculativeStep(
  deps: McpCallDeps,
  input: McpCallInput,
  value: unknown,
  valueJson: string,
): Promise<{ step?: SpeculativeStep }> {
  try {
    const step = await speculationOf(deps)?.speculate(
      input.runId,
      { seq: input.seq, ok: true, value },
      encodeCallEvent(input.seq, value, valueJson),
    );
    return step
      ? {
          step: {
            ...step,
            result: placed(
              await withEventsEndpoint(step.result, input.credentials.namespace, deps.endpoints),
              deps.sessionQueue,
            ),
          },
        }
      : {};
  } catch {
    return {};
  }
}

/** Where this worker takes speculative steps: its sandbox, unless they are switched off. */
function speculationOf(deps: McpCallDeps): McpCallDeps["sandbox"] {
  return deps.speculativeSteps === false ? undefined : deps.sandbox;
}

/** Whether a speculative step names `queue` as where it was taken, so the result needs no `ranOn`. */
function stepSaysWhere(step: SpeculativeStep | undefined, queue: string): boolean {
  return step?.result.sessionQueue === queue;
}

export function createCallMcpTool(deps: McpCallDeps) {
  const schemas: SchemaWatch = createSchemaWatch(deps.mcpPool);
  return async function callMcpTool(input: McpCallInput): Promise<ToolCallResult> {
    const context = Context.current();
    /** Attempts as the server saw them: a call sent again on a new session counts twice. */
    let attempt = context.info.attempt;
    const { scope, headers, revisions } = await deps.credentials.resolve(input.credentials, input.server);
    /** Whose credentials the server saw, for the journal: a scope's name, never its values. */
    const usedScope = scope ? { credentials: scope } : {};
    // The connection scrubs what the server sends (listings, results, progress, questions,
    // errors); the activity scrubs again what it quotes of them, with the same pieces.
    const scrubber = scrubberFor(headers, input.url);
    const clean = scrubber.text;
    const { poolKey, sharedKey } = sessionKeys(input.credentials.namespace, input.runId, input.url, headers);
    const notes: AttemptNotes = notesOf(context.info.heartbeatDetails);
    const beat = () => context.heartbeat(notes);
    const heartbeat = setInterval(beat, HEARTBEAT_EVERY_MS);
    const attemptEnded = new AbortController();
    const spanned = mcpAttemptSpan({
      runId: input.runId,
      seq: input.seq,
      server: input.server,
      tool: input.tool,
      url: input.url,
      attempt,
    });
    const span = deps.tracing.startAttempt(input.traceparent, spanned.name, spanned.attributes);
    if (notes.task) span?.annotate({ "mcp.session.id": notes.task.sessionId });
    /** The attempt span's `error.type`; set on every way out but success. */
    let errorType: string | undefined = CALL_FAILURE.interrupted;
    /** Whether the result was fed here already; any other way out, the workflow feeds it. */
    let speculated = false;
    try {
      const resumed = notes.task;
      const listed = resumed
        ? undefined
        : await schemas.current({
            url: input.url,
            headers,
            poolKey,
            sharedKey,
            tool: input.tool,
            waits: input.waits ?? 0,
          });
      if (!input.skipSchemaCheck && !resumed) {
        const change = schemaChangeOf(listed, input.tool, input.args ?? {}, deps.validate);
        if (change) {
          throw ApplicationFailure.create({
            type: CALL_FAILURE.schemaChanged,
            message: clean(change.message),
            nonRetryable: true,
            details: [{ attempt, current: change.current }],
          });
        }
      }
      const call: CallRef = { namespace: input.credentials.namespace, runId: input.runId, seq: input.seq, attempt };
      const asTask = resumed !== undefined || callsAsTask(listed);
      const outcome = await deps.mcpPool.callTool({
        url: input.url,
        headers,
        poolKey,
        spareKey: sharedKey,
        name: input.tool,
        arguments: input.args ?? {},
        meta: {
          [IDEMPOTENCY_META_KEY]: idempotencyKey(input.runId, input.seq),
          ...(span ? { traceparent: span.traceparent } : input.traceparent ? { traceparent: input.traceparent } : {}),
        },
        timeoutMs: input.timeoutMs,
        signal: context.cancellationSignal,
        hooks: {
          ...hooksFor(deps, call, beat, attemptEnded.signal, scrubber),
          onSent: (exchange) => span?.annotate(exchangeAttributes(exchange)),
        },
        ...(asTask
          ? {
              task: {
                ...(resumed ? { resume: resumed } : {}),
                onCreated: (task: McpTaskHandle) => {
                  notes.task = task;
                  beat();
                },
              },
            }
          : {}),
      });
      attempt += outcome.resent ?? 0;
      // The last progress the server reported goes to the journal before the result does.
      await deps.callReports?.settle(call);
      // A result with isError is the tool's own failure: `tool_error`, as the MCP conventions say.
      errorType = outcome.isError ? "tool_error" : undefined;
      if (outcome.isError) {
        const content = outcome.content;
        return {
          ok: false,
          error: {
            code: "toolFailed",
            message: clean(`${input.server}.${input.tool}: ${textOf(outcome.content)}`),
            details: { content },
          },
          attempt,
          ...usedScope,
        };
      }
      // A server may echo what it was sent: the connection scrubbed the result of the credentials.
      const value = resultValue(outcome, input.runtimeVersion);
      // Serialized once: for the size, and for the isolate if a speculative step feeds it.
      const valueJson = JSON.stringify(value) ?? "null";
      const bytes = Buffer.byteLength(valueJson);
      if (bytes > MAX_RESULT_BYTES) {
        const message = `${input.server}.${input.tool}: the result is ${bytes} bytes of JSON, more than the ${MAX_RESULT_BYTES} a tool result may be`;
        errorType = "resultTooLarge";
        return {
          ok: false,
          error: { code: "toolFailed", message, details: { reason: "resultTooLarge", bytes } },
          attempt,
          ...usedScope,
        };
      }
      const speculative = await takeSpeculativeStep(deps, input, value, valueJson);
      speculated = speculative.step !== undefined;
      return {
        ok: true,
        value,
        attempt,
        ...usedScope,
        // A step taken here names this worker's queue already (`ranOnOf` reads it from there).
        ...(deps.sessionQueue === undefined || stepSaysWhere(speculative.step, deps.sessionQueue)
          ? {}
          : { ranOn: deps.sessionQueue }),
        ...speculative,
      };
    } catch (error) {
      errorType = thrownErrorType(error);
      if (error instanceof McpConnectError) {
        // Listing the tools for the schema check failed: the call itself was not sent.
        if (error.reason === "cancelled") throw new CancelledFailure(clean(error.message));
        const type = LISTING_FAILURES[error.reason] ?? CALL_FAILURE.unreachable;
        errorType = type;
        throw ApplicationFailure.create({
          type,
          message: clean(error.message),
          nonRetryable: type !== CALL_FAILURE.unreachable,
          details: [
            {
              attempt,
              scope: scope ?? null,
              ...(revisions ? { revisions } : {}),
              insufficientScope: error.insufficientScope,
              scopeAsked: error.scopeAsked === undefined ? null : clean(error.scopeAsked),
            },
          ],
        });
      }
      if (!(error instanceof McpCallError)) throw error;
      if (error.reason === "cancelled") throw new CancelledFailure(clean(error.message));
      if (error.reason === "toolError") {
        // A JSON-RPC error (or an HTTP refusal): its code is the error's type.
        errorType = error.code === undefined ? "tool_error" : String(error.code);
        if (error.code !== undefined) span?.annotate({ "rpc.response.status_code": String(error.code) });
        return {
          ok: false,
          error: {
            code: "toolFailed",
            message: clean(`${input.server}.${input.tool}: ${error.message}`),
            details: { reason: "toolError" },
          },
          attempt,
          ...usedScope,
        };
      }
      // A call that provably never left (e.g. a connect timeout) is "unreachable" whatever the
      // reason says: at-most-once tools may then be told it was not sent.
      const reason =
        (error.reason === "timedOut" || error.reason === "interrupted") && !error.outcomeUnknown
          ? "unreachable"
          : error.reason;
      const failure = FAILURE_OF_REASON[reason] ?? { type: CALL_FAILURE.interrupted, retryable: true };
      errorType = failure.type;
      throw ApplicationFailure.create({
        type: failure.type,
        message: clean(error.message),
        nonRetryable: !failure.retryable,
        details: [
          {
            attempt,
            scope: scope ?? null,
            ...(revisions ? { revisions } : {}),
            insufficientScope: error.insufficientScope,
            scopeAsked: error.scopeAsked === undefined ? null : clean(error.scopeAsked),
          },
        ],
      });
    } finally {
      // No later result of the run is fed here before the workflow has fed this one (see the sandbox).
      if (!speculated) speculationOf(deps)?.notSpeculated(input.runId, input.seq);
      attemptEnded.abort(new Error("the attempt ended"));
      clearInterval(heartbeat);
      span?.end(errorType === undefined ? {} : { errorType });
    }
  };
}
