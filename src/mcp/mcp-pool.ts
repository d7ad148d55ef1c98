/**
 * Pooled MCP sessions for the dispatcher: one initialized connection per pool key, shared by the
 * concurrent calls that give that key. The dispatcher's keys name a run, a server and the
 * credentials, so each run has a session of its own per server (servers keep state per session)
 * and reuses it across its calls. A connection that failed is retired (closed once its calls are
 * done) and never used again; the next call opens a new one; one idle for `maxIdleMs` is closed.
 * A call that found its session forgotten by the server (404, or 400 naming the session, e.g.
 * after a restart) was not run, so it is sent once more on a new session and the outcome says so.
 * Tools called as tasks are waited for here (task-wait.ts); a task an earlier attempt started is
 * found again on the session it was started on. A pool made with `spareIdleMs` keeps a session
 * ready for the next run of each server and credentials (spare-sessions.ts): a request that
 * gives a `spareKey` and finds no session of its own takes that spare instead of opening one.
 */
import type { TargetPolicy } from "../http-tool/index.ts";
import { openMcpConnection, type McpConnection } from "./mcp-client.ts";
import { McpCallError, McpConnectError, describeUrl, type McpCallReason, type McpConnectReason } from "./mcp-errors.ts";
import { waitForTask } from "./task-wait.ts";
import type { McpCallOutcome, McpCallRequest, McpListing, McpPool, McpPoolOptions } from "./mcp-types.ts";
import { startDeadline } from "./request-watch.ts";
import { createSpareSessions } from "./spare-sessions.ts";
import { openOnDemand, type SessionSource } from "./session-source.ts";

/** Wait before opening the next spare session (spare-sessions.ts). */
const SPARE_REFILL_DELAY_MS = 50;
/** Spare sessions kept at once, over every server and set of credentials. */
const MAX_SPARES = 64;
/** Bound of listing tools on a pooled connection. */
const LIST_TIMEOUT_MS = 10_000;
/** After these, the session is not worth reusing. */
const CALL_RETIRES = new Set<McpCallReason>([
  "unreachable",
  "interrupted",
  "unauthorized",
  "forbidden",
  "targetNotAllowed",
]);
const LIST_RETIRES = new Set<McpConnectReason>([
  "unreachable",
  "notMcp",
  "unauthorized",
  "forbidden",
  "protocol",
  "targetNotAllowed",
]);

interface Entry {
  key: string;
  ready: Promise<McpConnection>;
  connection: McpConnection | undefined;
  inFlight: number;
  lastUsed: number;
  retired: boolean;
  closing: Promise<void> | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

/** Waits for the entry's connection within the caller's own bound and signal. */
async function connectionOf(
  entry: Entry,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  where: string,
): Promise<McpConnection> {
  if (entry.connection?.open) return entry.connection;
  const deadline = startDeadline(timeoutMs, signal);
  try {
    const gaveUp = new Promise<never>((_, reject) =>
      deadline.signal.addEventListener(
        "abort",
        () =>
          reject(
            deadline.cancelled
              ? new McpConnectError("cancelled", `connecting to ${where} was cancelled`, { url: where })
              : new McpConnectError("timedOut", `${where} did not open a session within ${timeoutMs} ms`, {
                  url: where,
                }),
          ),
        { once: true },
      ),
    );
    return await Promise.race([entry.ready, gaveUp]);
  } finally {
    deadline.dispose();
  }
}

/** A failure to get a session, as the call sees it: nothing was sent. */
function notSent(error: unknown, where: string): McpCallError {
  if (!(error instanceof McpConnectError))
    return new McpCallError("unreachable", `could not open a session with ${where}`, {
      url: where,
      outcomeUnknown: false,
    });
  const details = {
    url: where,
    status: error.status,
    insufficientScope: error.insufficientScope,
    outcomeUnknown: false,
    ...(error.scopeAsked === undefined ? {} : { scopeAsked: error.scopeAsked }),
  };
  if (
    error.reason === "unauthorized" ||
    error.reason === "forbidden" ||
    error.reason === "cancelled" ||
    error.reason === "targetNotAllowed"
  )
    return new McpCallError(error.reason, error.message, details);
  return new McpCallError("unreachable", `could not open a session: ${error.message}`, details);
}

/**
 * Creates a pool. Call `close()` when the worker shuts down.
 *
 * @example
 * const pool = createMcpPool({ maxIdleMs: 60_000 });
 * const outcome = await pool.callTool({ url, headers, poolKey, name: "create_issue", arguments: { title: "x" },
 *   meta: { "codes.rewind/idempotency-key": "run_x/3" }, timeoutMs: 300_000 });
 */
export function createMcpPool(options: McpPoolOptions = {}): McpPool {
  return new McpSessionPool(options);
}

/** The pool of the header: its entries by pool key, and where its new sessions come from. */
class McpSessionPool implements McpPool {
  private readonly maxIdleMs: number;
  private readonly maxConnections: number;
  private readonly connectTimeoutMs: number;
  private readonly targets: TargetPolicy | undefined;
  private readonly entries = new Map<string, Entry>();
  /** Where new sessions come from (session-source.ts): opened on demand, or spares opened ahead. */
  private readonly sessions: SessionSource;
  private closed = false;

  constructor(options: McpPoolOptions) {
    this.maxIdleMs = options.maxIdleMs ?? 60_000;
    this.maxConnections = options.maxConnections ?? 256;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.targets = options.targets;
    const spareIdleMs = options.spareIdleMs ?? 0;
    this.sessions =
      spareIdleMs > 0
        ? createSpareSessions({
            idleMs: spareIdleMs,
            refillDelayMs: SPARE_REFILL_DELAY_MS,
            max: MAX_SPARES,
          })
        : openOnDemand;
  }

  readonly callTool = async (request: McpCallRequest): Promise<McpCallOutcome> => {
    const where = describeUrl(request.url);
    if (this.closed)
      throw new McpCallError("unreachable", `the MCP connection pool is closed (call to ${where})`, {
        url: where,
        outcomeUnknown: false,
      });
    const startedAt = Date.now();
    if (request.task?.resume) return await this.resumeTask(request, startedAt, where);
    try {
      return await this.callOnce(request, startedAt, where, request.spareKey);
    } catch (error) {
      if (!(error instanceof McpCallError && error.sessionExpired)) throw error;
      // A server that forgot one session forgot the spare opened beside it too.
      if (request.spareKey !== undefined) this.sessions.discard(request.spareKey);
      return { ...(await this.callOnce(request, startedAt, where, undefined)), resent: 1 };
    }
  };

  readonly listTools = async (
    url: string,
    headers: Record<string, string> | undefined,
    poolKey: string,
    spareKey?: string,
  ): Promise<McpListing> => {
    if (this.closed)
      throw new McpConnectError("unreachable", `the MCP connection pool is closed (listing ${describeUrl(url)})`, {
        url: describeUrl(url),
      });
    try {
      return await this.listOnce(url, headers, poolKey, spareKey);
    } catch (error) {
      if (!(error instanceof McpConnectError && error.sessionExpired)) throw error;
      if (spareKey !== undefined) this.sessions.discard(spareKey);
      return await this.listOnce(url, headers, poolKey, undefined);
    }
  };

  readonly open = (
    url: string,
    headers: Record<string, string> | undefined,
    poolKey: string,
    spareKey?: string,
  ): void => {
    if (this.closed || this.entries.has(poolKey)) return;
    // Checked out and in at once: the session opens, and closes when idle like any other.
    this.checkIn(this.checkOut(poolKey, url, headers, spareKey));
  };

  get spareSessions(): number {
    return this.sessions.size;
  }

  readonly retireWhereKeyStarts = (prefix: string): void => {
    for (const [key, entry] of [...this.entries]) if (key.startsWith(prefix)) this.retire(entry);
  };

  readonly close = async (): Promise<void> => {
    this.closed = true;
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all([
      this.sessions.close(),
      ...all.map((entry) => {
        entry.retired = true;
        return this.shut(entry);
      }),
    ]);
  };

  private shut(entry: Entry): Promise<void> {
    clearTimeout(entry.idleTimer);
    entry.closing ??= entry.ready.then(
      (connection) => connection.close(),
      () => undefined,
    );
    return entry.closing;
  }

  private retire(entry: Entry): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    entry.retired = true;
    if (entry.inFlight === 0) void this.shut(entry);
  }

  private trim(): void {
    // Sorting every session on every call cost each call O(n log n) with many runs open.
    if (this.entries.size <= this.maxConnections) return;
    const idle = [...this.entries.values()]
      .filter((entry) => entry.inFlight === 0)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    for (const entry of idle.slice(0, Math.max(0, this.entries.size - this.maxConnections))) this.retire(entry);
  }

  private checkOut(
    key: string,
    url: string,
    headers: Record<string, string> | undefined,
    spareKey: string | undefined,
  ): Entry {
    let entry = this.entries.get(key);
    if (entry?.connection && !entry.connection.open) this.retire(entry);
    entry = this.entries.get(key);
    if (!entry) {
      const targets = this.targets;
      const opened = () => openMcpConnection({ url, headers, timeoutMs: this.connectTimeoutMs, targets });
      // A spare was checked when it opened; a guarded policy checks its target again for this run.
      const vet = targets?.guarded ? () => targets.check(url) : undefined;
      const created: Entry = {
        key,
        ready: this.sessions.take({ spareKey, open: opened, ...(vet ? { vet } : {}) }),
        connection: undefined,
        inFlight: 0,
        lastUsed: Date.now(),
        retired: false,
        closing: undefined,
        idleTimer: undefined,
      };
      void created.ready.then(
        (connection) => {
          created.connection = connection;
        },
        () => this.retire(created),
      );
      this.entries.set(key, created);
      entry = created;
    }
    clearTimeout(entry.idleTimer);
    entry.inFlight++;
    entry.lastUsed = Date.now();
    this.trim();
    return entry;
  }

  private checkIn(entry: Entry): void {
    entry.inFlight--;
    entry.lastUsed = Date.now();
    if (entry.inFlight > 0) return;
    if (entry.retired || this.closed) {
      void this.shut(entry);
      return;
    }
    entry.idleTimer = setTimeout(() => this.retire(entry), this.maxIdleMs);
    entry.idleTimer.unref();
  }

  /** Sends the call (as a task when asked) on an open connection. */
  private async callOn(
    connection: McpConnection,
    request: McpCallRequest,
    startedAt: number,
    where: string,
  ): Promise<McpCallOutcome> {
    const left = () => Math.max(1, request.timeoutMs - (Date.now() - startedAt));
    const parts = {
      name: request.name,
      arguments: request.arguments,
      meta: request.meta,
      timeoutMs: left(),
      boundMs: request.timeoutMs,
      signal: request.signal,
      hooks: request.hooks,
    };
    if (!request.task) return connection.callTool(parts);
    const created = await connection.startTask({ ...parts, ttlMs: request.task.ttlMs });
    const sessionId = connection.sessionId ?? "";
    request.task.onCreated({ taskId: created.taskId, sessionId });
    return waitForTask({
      connection,
      taskId: created.taskId,
      created,
      endsAt: startedAt + request.timeoutMs,
      boundMs: request.timeoutMs,
      signal: request.signal,
      hooks: request.hooks,
      where,
    });
  }

  /** Waits for a task an earlier attempt started, on the session it was started on. */
  private async resumeTask(request: McpCallRequest, startedAt: number, where: string): Promise<McpCallOutcome> {
    const handle = request.task?.resume;
    if (!handle) throw new Error("resumeTask needs a task to resume");
    let connection: McpConnection;
    try {
      connection = await openMcpConnection({
        url: request.url,
        headers: request.headers,
        timeoutMs: Math.min(this.connectTimeoutMs, request.timeoutMs),
        sessionId: handle.sessionId,
        targets: this.targets,
        ...(request.signal ? { signal: request.signal } : {}),
      });
    } catch (error) {
      throw notSent(error, where);
    }
    try {
      return await waitForTask({
        connection,
        taskId: handle.taskId,
        endsAt: startedAt + request.timeoutMs,
        boundMs: request.timeoutMs,
        signal: request.signal,
        hooks: request.hooks,
        where,
      });
    } catch (error) {
      // The session (and so the task) is gone: the tool may have run; only the policy may send it again.
      if (error instanceof McpCallError && error.sessionExpired) {
        throw new McpCallError(
          "interrupted",
          `${where} no longer knows the session of task ${handle.taskId}; the task's outcome is unknown`,
          { url: where, outcomeUnknown: true },
        );
      }
      throw error;
    } finally {
      await connection.close({ keepSession: true });
    }
  }

  private async callOnce(
    request: McpCallRequest,
    startedAt: number,
    where: string,
    spareKey: string | undefined,
  ): Promise<McpCallOutcome> {
    const entry = this.checkOut(request.poolKey, request.url, request.headers, spareKey);
    const left = () => Math.max(1, request.timeoutMs - (Date.now() - startedAt));
    try {
      const connection = await connectionOf(entry, left(), request.signal, where).catch((error: unknown) => {
        throw notSent(error, where);
      });
      return await this.callOn(connection, request, startedAt, where);
    } catch (error) {
      if (error instanceof McpCallError && CALL_RETIRES.has(error.reason)) this.retire(entry);
      throw error;
    } finally {
      this.checkIn(entry);
    }
  }

  private async listOnce(
    url: string,
    headers: Record<string, string> | undefined,
    poolKey: string,
    spareKey: string | undefined,
  ): Promise<McpListing> {
    const entry = this.checkOut(poolKey, url, headers, spareKey);
    try {
      const connection = await connectionOf(entry, LIST_TIMEOUT_MS, undefined, describeUrl(url));
      const changes = connection.toolChanges;
      const listedAt = Date.now();
      const tools = await connection.listTools({ timeoutMs: LIST_TIMEOUT_MS });
      return {
        tools,
        listedAt,
        notifiesChanges: connection.notifiesToolChanges,
        fresh: () => connection.open && connection.toolChanges === changes,
      };
    } catch (error) {
      if (error instanceof McpConnectError && LIST_RETIRES.has(error.reason)) this.retire(entry);
      throw error;
    } finally {
      this.checkIn(entry);
    }
  }
}
