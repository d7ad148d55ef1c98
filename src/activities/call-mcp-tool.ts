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
  type McpCallOutcome,
  type McpPool,
  type McpTaskHandle,
  type McpToolDescriptor,
  scrubberFor,
  type Scrubber,
} from "../mcp/index.ts";
import type { SchemaValidator } from "../sandbox/index.ts";
import type { EndpointResolver } from "../events/index.ts";
import type { CredentialRevisions, CredentialScope, JsonSchema, SpeculativeStep } from "../shared/index.ts";
import {
  CALL_FAILURE,
  IDEMPOTENCY_META_KEY,
  MAX_RESULT_BYTES,
  encodeCallEvent,
  idempotencyKey,
  runtimeVersionOf,
  type McpCallInput,
  type ToolCallResult,
} from "../shared/index.ts";
import type { AttemptSpan, Tracing } from "../tracing/index.ts";
import { exchangeAttributes, mcpAttemptSpan, thrownErrorType } from "./attempt-spans.ts";
import { withEventsEndpoint } from "./run-end.ts";
import type { CallRef, CallReports } from "./call-reports.ts";
import { createSchemaWatch, schemaChangeOf, type SchemaWatch } from "./schema-watch.ts";
import { createOutageWait, neverReachedServer, type OutageWait } from "./outage-wait.ts";
import { noStepsAhead, type StepsAhead } from "./steps-ahead.ts";

export interface McpCallDeps {
  mcpPool: McpPool;
  /** Where a finished call's result may take the run's next step here (steps-ahead.ts); default: nowhere, the workflow feeds it. */
  stepsAhead?: StepsAhead;
  /** Whether a run's namespace takes events, told with a step that ends the run. */
  endpoints?: EndpointResolver;
  tracing: Tracing;
  credentials: CredentialResolver;
  validate: SchemaValidator;
  /** Where a call's progress and its server's questions go: the run's journal and the harness. */
  callReports?: CallReports;
}

/** What an attempt leaves in its heartbeat for the attempts after it. */
interface AttemptNotes {
  task?: McpTaskHandle;
  /** An attempt of this call sent it (it may have reached the server): carried to later attempts. */
  sent?: true;
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
  const noted = typeof details === "object" && details !== null ? (details as { task?: unknown; sent?: unknown }) : {};
  const sent: AttemptNotes = noted.sent === true ? { sent: true } : {};
  const task = noted.task;
  if (typeof task !== "object" || task === null) return sent;
  const { taskId, sessionId } = task as { taskId?: unknown; sessionId?: unknown };
  return typeof taskId === "string" && typeof sessionId === "string" ? { ...sent, task: { taskId, sessionId } } : sent;
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
  questions: Attempt["questions"],
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
      questions.waiting += 1;
      questions.last = asked.message;
      return deps.callReports.askInput(call, asked, AbortSignal.any([signal, attemptEnded])).finally(() => {
        questions.waiting -= 1;
      });
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
    const step = await (deps.stepsAhead ?? noStepsAhead).take(
      input.runId,
      { seq: input.seq, ok: true, value },
      encodeCallEvent(input.seq, value, valueJson),
    );
    return step
      ? {
          step: {
            ...step,
            result: await withEventsEndpoint(step.result, input.credentials.namespace, deps.endpoints),
          },
        }
      : {};
  } catch {
    return {};
  }
}

/** Who the attempt is, once its credentials are resolved: what every stage after it needs. */
interface Attempt {
  input: McpCallInput;
  /** Attempts as the server saw them: a call sent again on a new session counts twice. */
  attempt: number;
  scope: CredentialScope | undefined;
  headers: Record<string, string>;
  revisions: CredentialRevisions | undefined;
  /** Whose credentials the server saw, for the journal: a scope's name, never its values. */
  usedScope: { credentials?: CredentialScope };
  /**
   * The connection scrubs what the server sends (listings, results, progress, questions,
   * errors); the attempt scrubs again what it quotes of them, with the same pieces.
   */
  scrubber: Scrubber;
  poolKey: string;
  sharedKey: string;
  notes: AttemptNotes;
  /** Set when the server could not be reached for the whole of the call's timeout. */
  outage?: { ms: number; tries: number };
  /** The server's questions waiting for the user now, and the last one asked (scrubbed). */
  questions: { waiting: number; last?: string };
}

/** Stage 1, resolve: the call's credentials, opened, and the keys of its sessions. */
async function resolveAttempt(deps: McpCallDeps, input: McpCallInput, context: Context): Promise<Attempt> {
  const { scope, headers, revisions } = await deps.credentials.resolve(input.credentials, input.server);
  return {
    input,
    attempt: context.info.attempt,
    scope,
    headers,
    revisions,
    usedScope: scope ? { credentials: scope } : {},
    scrubber: scrubberFor(headers, input.url),
    ...sessionKeys(input.credentials.namespace, input.runId, input.url, headers),
    notes: notesOf(context.info.heartbeatDetails),
    questions: { waiting: 0 },
  };
}

/**
 * Stage 2, check: the server's current listing, and whether the call still fits the tool's
 * schema there (a call that does not is refused `schemaChanged`, unsent). An attempt resuming
 * a task lists nothing: the task was created by a call that passed.
 */
async function checkSchema(
  deps: McpCallDeps,
  schemas: SchemaWatch,
  a: Attempt,
): Promise<McpToolDescriptor | undefined> {
  const { input } = a;
  if (a.notes.task) return undefined;
  const listed = await currentTool(schemas, a);
  const change = input.skipSchemaCheck
    ? undefined
    : schemaChangeOf(listed, input.tool, input.args ?? {}, deps.validate);
  if (change) throw schemaChangedFailure(a, change.message, change.current);
  return listed;
}

/** The call's tool as its server lists it now (see schema-watch.ts for when that lists again). */
function currentTool(schemas: SchemaWatch, a: Attempt): Promise<McpToolDescriptor | undefined> {
  const { input } = a;
  return schemas.current({
    url: input.url,
    headers: a.headers,
    poolKey: a.poolKey,
    sharedKey: a.sharedKey,
    tool: input.tool,
    waits: input.waits ?? 0,
  });
}

/** The call no longer fits the tool as listed now: it parks (`schemaChanged`), unsent or refused. */
function schemaChangedFailure(a: Attempt, message: string, current: JsonSchema | null): ApplicationFailure {
  return ApplicationFailure.create({
    type: CALL_FAILURE.schemaChanged,
    message: a.scrubber.text(message),
    nonRetryable: true,
    details: [{ attempt: a.attempt, current }],
  });
}

/** Stage 3, send: the call on the run's session, with its idempotency key; as a task when the tool runs as one. */
function sendCall(
  deps: McpCallDeps,
  a: Attempt,
  listed: McpToolDescriptor | undefined,
  context: Context,
  live: { beat(): void; ended: AbortSignal; span: AttemptSpan | undefined },
) {
  const { input, notes } = a;
  const call: CallRef = {
    namespace: input.credentials.namespace,
    runId: input.runId,
    seq: input.seq,
    attempt: a.attempt,
  };
  const resumed = notes.task;
  const asTask = resumed !== undefined || callsAsTask(listed);
  const { span } = live;
  return {
    call,
    sent: deps.mcpPool.callTool({
      url: input.url,
      headers: a.headers,
      poolKey: a.poolKey,
      spareKey: a.sharedKey,
      name: input.tool,
      arguments: input.args ?? {},
      meta: {
        [IDEMPOTENCY_META_KEY]: idempotencyKey(input.runId, input.seq),
        ...(span ? { traceparent: span.traceparent } : input.traceparent ? { traceparent: input.traceparent } : {}),
      },
      timeoutMs: input.timeoutMs,
      signal: context.cancellationSignal,
      hooks: {
        ...hooksFor(deps, call, live.beat, live.ended, a.scrubber, a.questions),
        onSent: (exchange) => {
          if (!notes.sent) {
            notes.sent = true;
            live.beat();
          }
          span?.annotate(exchangeAttributes(exchange));
        },
      },
      ...(asTask
        ? {
            task: {
              ...(resumed ? { resume: resumed } : {}),
              onCreated: (task: McpTaskHandle) => {
                notes.task = task;
                live.beat();
              },
            },
          }
        : {}),
    }),
  };
}

/**
 * Why a result does not fit the tool's pinned output schema, if it does not. MCP says a tool that
 * declares one sends `structuredContent` that fits it, and that clients should check: the script
 * was typed against the schema, so a result that breaks it fails the call rather than reaching
 * code that trusts the type. Validation is linear (patterns run on RE2) and the result is bounded.
 */
function resultMisfit(
  deps: McpCallDeps,
  input: McpCallInput,
  outcome: McpCallOutcome,
): { message: string; details: Record<string, unknown> } | undefined {
  if (input.outputSchema === undefined) return undefined;
  if (outcome.structuredContent === undefined)
    return {
      message: "the tool declares an output schema but its result has no structuredContent",
      details: { reason: "noStructuredContent" },
    };
  const problem = deps.validate(input.outputSchema, outcome.structuredContent, "result");
  if (!problem) return undefined;
  const errors = (problem.details as { errors?: unknown } | undefined)?.errors;
  return {
    message: `the result does not fit the tool's output schema: ${problem.message}`,
    details: { reason: "outputSchema", ...(errors === undefined ? {} : { errors }) },
  };
}

/** What stage 4 answers: the call's result, and the attempt span's `error.type` (none on success). */
interface ReadOutcome {
  result: ToolCallResult;
  errorType: string | undefined;
  speculated: boolean;
}

/**
 * Stage 4, read: the server's answer as the call's result. `isError` is the tool's own failure
 * (`tool_error`, as the MCP conventions say); a value over the size limit fails the call; any
 * other value is fed to the run's warm isolate here, if it is warm here (a speculative step).
 */
async function readOutcome(deps: McpCallDeps, a: Attempt, outcome: McpCallOutcome): Promise<ReadOutcome> {
  const { input, usedScope, attempt } = a;
  const checksResults = runtimeVersionOf(input) >= 4;
  if (outcome.isError) {
    const { content, structuredContent } = outcome;
    return {
      result: {
        ok: false,
        error: {
          code: "toolFailed",
          message: a.scrubber.text(`${input.server}.${input.tool}: ${textOf(outcome.content)}`),
          // From runtime 4 on, what the tool said of its failure in structured form too.
          details: checksResults && structuredContent !== undefined ? { content, structuredContent } : { content },
        },
        attempt,
        ...usedScope,
      },
      errorType: "tool_error",
      speculated: false,
    };
  }
  // A server may echo what it was sent: the connection scrubbed the result of the credentials.
  const value = resultValue(outcome, input.runtimeVersion);
  // Serialized once: for the size, and for the isolate if a speculative step feeds it.
  const valueJson = JSON.stringify(value) ?? "null";
  const bytes = Buffer.byteLength(valueJson);
  if (bytes > MAX_RESULT_BYTES) {
    const message = `${input.server}.${input.tool}: the result is ${bytes} bytes of JSON, more than the ${MAX_RESULT_BYTES} a tool result may be`;
    return {
      result: {
        ok: false,
        error: { code: "toolFailed", message, details: { reason: "resultTooLarge", bytes } },
        attempt,
        ...usedScope,
      },
      errorType: "resultTooLarge",
      speculated: false,
    };
  }
  const misfit = checksResults ? resultMisfit(deps, input, outcome) : undefined;
  if (misfit) {
    return {
      result: {
        ok: false,
        error: {
          code: "invalidResult",
          message: a.scrubber.text(`${input.server}.${input.tool}: ${misfit.message}`),
          details: {
            ...misfit.details,
            content: outcome.content,
            structuredContent: outcome.structuredContent ?? null,
          },
        },
        attempt,
        ...usedScope,
      },
      errorType: "invalidResult",
      speculated: false,
    };
  }
  const speculative = await takeSpeculativeStep(deps, input, value, valueJson);
  return {
    result: {
      ok: true,
      value,
      attempt,
      ...usedScope,
      ...speculative,
    },
    errorType: undefined,
    speculated: speculative.step !== undefined,
  };
}

/** What a failure thrown for the workflow carries: whose credentials, and the scope the server asked for. */
function failureDetails(a: Attempt, error: McpConnectError | McpCallError): Record<string, unknown> {
  return {
    attempt: a.attempt,
    // For the final error's wording: "not sent" only when no attempt sent the call.
    ...(a.notes.sent ? { sentBefore: true } : {}),
    ...(a.outage ? { unreachableForMs: Math.round(a.outage.ms), tries: a.outage.tries } : {}),
    scope: a.scope ?? null,
    ...(a.revisions ? { revisions: a.revisions } : {}),
    insufficientScope: error.insufficientScope,
    scopeAsked: error.scopeAsked === undefined ? null : a.scrubber.text(error.scopeAsked),
  };
}

/** The failure's message, saying how long the server was tried when it was down for the call's whole timeout. */
function outageMessage(a: Attempt, message: string): string {
  if (!a.outage) return message;
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  return `${message} (tried ${a.outage.tries} times over ${seconds(a.outage.ms)}; the call's timeout is ${seconds(a.input.timeoutMs)})`;
}

/**
 * Stage 5, fail: an error out of the attempt as the workflow understands it. A JSON-RPC error
 * (or an HTTP refusal) is the call's result; a failed listing, an interruption, a refusal of the
 * credentials are thrown typed (`CALL_FAILURE`), retryable or not.
 */
function failureOf(
  a: Attempt,
  error: unknown,
  span: AttemptSpan | undefined,
): { result: ToolCallResult; errorType: string } | { thrown: unknown; errorType: string } {
  const clean = a.scrubber.text;
  const { input } = a;
  if (error instanceof McpConnectError) {
    // Listing the tools for the schema check failed: the call itself was not sent.
    if (error.reason === "cancelled")
      return { thrown: new CancelledFailure(clean(error.message)), errorType: thrownErrorType(error) };
    const type = LISTING_FAILURES[error.reason] ?? CALL_FAILURE.unreachable;
    const thrown = ApplicationFailure.create({
      type,
      message: clean(outageMessage(a, error.message)),
      // An outage that outlasted the call's timeout ends the call: another attempt would wait again.
      nonRetryable: type !== CALL_FAILURE.unreachable || a.outage !== undefined,
      details: [failureDetails(a, error)],
    });
    return { thrown, errorType: type };
  }
  if (!(error instanceof McpCallError)) return { thrown: error, errorType: thrownErrorType(error) };
  if (error.reason === "cancelled")
    return { thrown: new CancelledFailure(clean(error.message)), errorType: thrownErrorType(error) };
  if (error.reason === "toolError") {
    // A JSON-RPC error (or an HTTP refusal): its code is the error's type.
    if (error.code !== undefined) span?.annotate({ "rpc.response.status_code": String(error.code) });
    return {
      result: {
        ok: false,
        error: {
          code: "toolFailed",
          message: clean(`${input.server}.${input.tool}: ${error.message}`),
          details: { reason: "toolError" },
        },
        attempt: a.attempt,
        ...a.usedScope,
      },
      errorType: error.code === undefined ? "tool_error" : String(error.code),
    };
  }
  if (error.reason === "timedOut" && a.questions.waiting > 0) {
    // The server was waiting on the user, not the other way round.
    const thrown = ApplicationFailure.create({
      type: CALL_FAILURE.questionUnanswered,
      message: clean(
        `the user did not answer the server's question (${JSON.stringify(a.questions.last ?? "")}) within the call's timeout of ${Math.round(input.timeoutMs / 1000)} s`,
      ),
      nonRetryable: true,
      details: [failureDetails(a, error)],
    });
    return { thrown, errorType: CALL_FAILURE.questionUnanswered };
  }
  // A call that provably never left (e.g. a connect timeout) is "unreachable" whatever the
  // reason says: at-most-once tools may then be told it was not sent.
  const reason =
    (error.reason === "timedOut" || error.reason === "interrupted") && !error.outcomeUnknown
      ? "unreachable"
      : error.reason;
  const failure = FAILURE_OF_REASON[reason] ?? { type: CALL_FAILURE.interrupted, retryable: true };
  const thrown = ApplicationFailure.create({
    type: failure.type,
    message: clean(outageMessage(a, error.message)),
    nonRetryable: !failure.retryable || a.outage !== undefined,
    details: [failureDetails(a, error)],
  });
  return { thrown, errorType: failure.type };
}

/** JSON-RPC's invalid params (MCP's answer to bad arguments and to an unknown tool) and method not found. */
const INVALID_CALL_CODES = new Set([-32602, -32601]);

/**
 * A server that refuses a call as invalid may have changed the tool since it was listed, with no
 * wait between for the listing to be taken as stale. Then it is listed again: if the call no
 * longer fits the tool as listed now, the call parks `schemaChanged` (it was refused, so nothing
 * took effect) instead of failing `toolFailed`.
 */
async function throwIfSchemaChanged(deps: McpCallDeps, schemas: SchemaWatch, a: Attempt, error: unknown) {
  const { input } = a;
  if (input.skipSchemaCheck || a.notes.task) return;
  if (!(error instanceof McpCallError) || error.reason !== "toolError") return;
  if (error.code === undefined || !INVALID_CALL_CODES.has(error.code)) return;
  schemas.forget(a);
  let listed: McpToolDescriptor | undefined;
  try {
    listed = await currentTool(schemas, a);
  } catch {
    return; // Listing failed too: the call's own failure stands.
  }
  const change = schemaChangeOf(listed, input.tool, input.args ?? {}, deps.validate);
  if (change)
    throw schemaChangedFailure(a, `${change.message} (the server refused the call: ${error.message})`, change.current);
}

/**
 * Stages 2 and 3, tried again within the attempt while the server can't be reached (nothing was
 * sent), for as long as the call's timeout allows (see outage-wait.ts). Past it, the failure is
 * final: the outage outlasted the call's timeout.
 */
async function reachServer(
  deps: McpCallDeps,
  schemas: SchemaWatch,
  a: Attempt,
  context: Context,
  live: { beat(): void; ended: AbortSignal; span: AttemptSpan | undefined },
): Promise<{ call: CallRef; outcome: McpCallOutcome }> {
  let outage: OutageWait | undefined;
  for (;;) {
    try {
      const listed = await checkSchema(deps, schemas, a);
      const { call, sent } = sendCall(deps, a, listed, context, live);
      return { call, outcome: await sent };
    } catch (error) {
      if (!neverReachedServer(error)) throw error;
      outage ??= createOutageWait(a.input.timeoutMs);
      const again = await outage.beforeRetry(context.cancellationSignal).catch(() => {
        throw new CancelledFailure("the call was cancelled while its server could not be reached");
      });
      if (!again) {
        a.outage = { ms: outage.elapsedMs, tries: outage.tries };
        throw error;
      }
    }
  }
}

export function createCallMcpTool(deps: McpCallDeps) {
  const schemas: SchemaWatch = createSchemaWatch(deps.mcpPool);
  return async function callMcpTool(input: McpCallInput): Promise<ToolCallResult> {
    const context = Context.current();
    const a = await resolveAttempt(deps, input, context);
    const beat = () => context.heartbeat(a.notes);
    const heartbeat = setInterval(beat, HEARTBEAT_EVERY_MS);
    const attemptEnded = new AbortController();
    const spanned = mcpAttemptSpan({
      runId: input.runId,
      seq: input.seq,
      server: input.server,
      tool: input.tool,
      url: input.url,
      attempt: a.attempt,
    });
    const span = deps.tracing.startAttempt(input.traceparent, spanned.name, spanned.attributes);
    if (a.notes.task) span?.annotate({ "mcp.session.id": a.notes.task.sessionId });
    /** The attempt span's `error.type`; set on every way out but success. */
    let errorType: string | undefined = CALL_FAILURE.interrupted;
    /** Whether the result was fed here already; any other way out, the workflow feeds it. */
    let speculated = false;
    try {
      const { call, outcome } = await reachServer(deps, schemas, a, context, {
        beat,
        ended: attemptEnded.signal,
        span,
      });
      a.attempt += outcome.resent ?? 0;
      // The last progress the server reported goes to the journal before the result does.
      await deps.callReports?.settle(call);
      const read = await readOutcome(deps, a, outcome);
      ({ errorType, speculated } = read);
      return read.result;
    } catch (error) {
      await throwIfSchemaChanged(deps, schemas, a, error);
      const failed = failureOf(a, error, span);
      errorType = failed.errorType;
      if ("result" in failed) return failed.result;
      throw failed.thrown;
    } finally {
      // No later result of the run is fed here before the workflow has fed this one (see the sandbox).
      if (!speculated) (deps.stepsAhead ?? noStepsAhead).skipped(input.runId, input.seq);
      attemptEnded.abort(new Error("the attempt ended"));
      clearInterval(heartbeat);
      span?.end(errorType === undefined ? {} : { errorType });
    }
  };
}
