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
import { openMcpConnection, type McpConnection } from "./mcp-client.ts";
import { McpCallError, McpConnectError, describeUrl, type McpCallReason, type McpConnectReason } from "./mcp-errors.ts";
import { waitForTask } from "./task-wait.ts";
import type { McpCallOutcome, McpCallRequest, McpListing, McpPool, McpPoolOptions } from "./mcp-types.ts";
import { startDeadline } from "./request-watch.ts";
import { createSpareSessions, type SpareSessions } from "./spare-sessions.ts";

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
  const maxIdleMs = options.maxIdleMs ?? 60_000;
  const maxConnections = options.maxConnections ?? 256;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const targets = options.targets;
  const entries = new Map<string, Entry>();
  const spareIdleMs = options.spareIdleMs ?? 0;
  const spares: SpareSessions | undefined =
    spareIdleMs > 0
      ? createSpareSessions({
          idleMs: spareIdleMs,
          refillDelayMs: SPARE_REFILL_DELAY_MS,
          max: MAX_SPARES,
        })
      : undefined;
  let closed = false;

  const shut = (entry: Entry): Promise<void> => {
    clearTimeout(entry.idleTimer);
    entry.closing ??= entry.ready.then(
      (connection) => connection.close(),
      () => undefined,
    );
    return entry.closing;
  };
  const retire = (entry: Entry): void => {
    if (entries.get(entry.key) === entry) entries.delete(entry.key);
    entry.retired = true;
    if (entry.inFlight === 0) void shut(entry);
  };
  const trim = (): void => {
    // Sorting every session on every call cost each call O(n log n) with many runs open.
    if (entries.size <= maxConnections) return;
    const idle = [...entries.values()].filter((entry) => entry.inFlight === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const entry of idle.slice(0, Math.max(0, entries.size - maxConnections))) retire(entry);
  };

  function checkOut(
    key: string,
    url: string,
    headers: Record<string, string> | undefined,
    spareKey: string | undefined,
  ): Entry {
    let entry = entries.get(key);
    if (entry?.connection && !entry.connection.open) retire(entry);
    entry = entries.get(key);
    if (!entry) {
      const opened = () => openMcpConnection({ url, headers, timeoutMs: connectTimeoutMs, targets });
      // A spare was checked when it opened; a guarded policy checks its target again for this run.
      const vet = targets?.guarded ? () => targets.check(url) : undefined;
      const created: Entry = {
        key,
        ready: spares && spareKey !== undefined ? spares.take(spareKey, opened, vet) : opened(),
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
        () => retire(created),
      );
      entries.set(key, created);
      entry = created;
    }
    clearTimeout(entry.idleTimer);
    entry.inFlight++;
    entry.lastUsed = Date.now();
    trim();
    return entry;
  }

  function checkIn(entry: Entry): void {
    entry.inFlight--;
    entry.lastUsed = Date.now();
    if (entry.inFlight > 0) return;
    if (entry.retired || closed) {
      void shut(entry);
      return;
    }
    entry.idleTimer = setTimeout(() => retire(entry), maxIdleMs);
    entry.idleTimer.unref();
  }

  /** Sends the call (as a task when asked) on an open connection. */
  async function callOn(
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
  async function resumeTask(request: McpCallRequest, startedAt: number, where: string): Promise<McpCallOutcome> {
    const handle = request.task?.resume;
    if (!handle) throw new Error("resumeTask needs a task to resume");
    let connection: McpConnection;
    try {
      connection = await openMcpConnection({
        url: request.url,
        headers: request.headers,
        timeoutMs: Math.min(connectTimeoutMs, request.timeoutMs),
        sessionId: handle.sessionId,
        targets,
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

  async function callOnce(
    request: McpCallRequest,
    startedAt: number,
    where: string,
    spareKey: string | undefined,
  ): Promise<McpCallOutcome> {
    const entry = checkOut(request.poolKey, request.url, request.headers, spareKey);
    const left = () => Math.max(1, request.timeoutMs - (Date.now() - startedAt));
    try {
      const connection = await connectionOf(entry, left(), request.signal, where).catch((error: unknown) => {
        throw notSent(error, where);
      });
      return await callOn(connection, request, startedAt, where);
    } catch (error) {
      if (error instanceof McpCallError && CALL_RETIRES.has(error.reason)) retire(entry);
      throw error;
    } finally {
      checkIn(entry);
    }
  }

  async function listOnce(
    url: string,
    headers: Record<string, string> | undefined,
    poolKey: string,
    spareKey: string | undefined,
  ): Promise<McpListing> {
    const entry = checkOut(poolKey, url, headers, spareKey);
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
      if (error instanceof McpConnectError && LIST_RETIRES.has(error.reason)) retire(entry);
      throw error;
    } finally {
      checkIn(entry);
    }
  }

  return {
    async callTool(request) {
      const where = describeUrl(request.url);
      if (closed)
        throw new McpCallError("unreachable", `the MCP connection pool is closed (call to ${where})`, {
          url: where,
          outcomeUnknown: false,
        });
      const startedAt = Date.now();
      if (request.task?.resume) return await resumeTask(request, startedAt, where);
      try {
        return await callOnce(request, startedAt, where, request.spareKey);
      } catch (error) {
        if (!(error instanceof McpCallError && error.sessionExpired)) throw error;
        // A server that forgot one session forgot the spare opened beside it too.
        if (request.spareKey !== undefined) spares?.discard(request.spareKey);
        return { ...(await callOnce(request, startedAt, where, undefined)), resent: 1 };
      }
    },
    async listTools(url, headers, poolKey, spareKey) {
      if (closed)
        throw new McpConnectError("unreachable", `the MCP connection pool is closed (listing ${describeUrl(url)})`, {
          url: describeUrl(url),
        });
      try {
        return await listOnce(url, headers, poolKey, spareKey);
      } catch (error) {
        if (!(error instanceof McpConnectError && error.sessionExpired)) throw error;
        if (spareKey !== undefined) spares?.discard(spareKey);
        return await listOnce(url, headers, poolKey, undefined);
      }
    },
    open(url, headers, poolKey, spareKey) {
      if (closed || entries.has(poolKey)) return;
      // Checked out and in at once: the session opens, and closes when idle like any other.
      checkIn(checkOut(poolKey, url, headers, spareKey));
    },
    get spareSessions() {
      return spares?.size ?? 0;
    },
    retireWhereKeyStarts(prefix) {
      for (const [key, entry] of [...entries]) if (key.startsWith(prefix)) retire(entry);
    },
    async close() {
      closed = true;
      const all = [...entries.values()];
      entries.clear();
      await Promise.all([
        spares?.close(),
        ...all.map((entry) => {
          entry.retired = true;
          return shut(entry);
        }),
      ]);
    },
  };
}
