/**
 * Sessions opened ahead of the run that will want one. Opening an MCP session costs a run's first
 * call `initialize`, `notifications/initialized` and the server's event stream: several round
 * trips and a few milliseconds of this process's CPU, on the path between the run's start and its
 * first call. A session nobody has used yet is the same whoever takes it, so the pool keeps one
 * such session ready for each server and set of credentials a run has lately opened one for
 * (their `spareKey`, which names the namespace too), and hands it to the next run that asks, once.
 * Runs still never share a session: a spare belongs to nobody until it is taken, and to that run
 * alone afterwards.
 *
 * A spare is opened a moment (`refillDelayMs`) after the session the last run took is ready, so
 * that opening it does not compete with that run's first call, and it is closed (its session
 * deleted at the server) when no run took it within `idleMs`. A spare that failed to open, or
 * closed meanwhile, is never handed over: the run opens its own. A spare the server has forgotten
 * (it restarted) fails its first request like any lost session, and the pool discards the key's
 * spare before it opens the next session. Under a guarded target policy a spare is vetted again as it is taken
 * (`vet`: its server's name resolved and checked anew): a name that now answers a refused address
 * gets the run a session of its own, whose opening refuses it, never the spare opened earlier.
 */
import type { McpConnection } from "./mcp-client.ts";
import type { SessionSource } from "./session-source.ts";

export interface SpareSessionOptions {
  /** A spare not taken within this long is closed. */
  idleMs: number;
  /** Wait before opening the next spare once the session a run took (the spare or its own) is ready. */
  refillDelayMs: number;
  /** Spares kept at once, over all keys. */
  max: number;
}

/**
 * The spare sessions are a `SessionSource`: a request with a `spareKey` gets the spare kept for it
 * if it opened, is open and passes `vet`, else a new one from `open`; either way, another spare
 * for the key is opened a moment after that session is ready. A request without one opens its own.
 */
export type SpareSessions = SessionSource;

interface Spare {
  ready: Promise<McpConnection | undefined>;
  idleTimer: NodeJS.Timeout;
}

/**
 * @example
 * const spares = createSpareSessions({ idleMs: 30_000, refillDelayMs: 50, max: 64 });
 * const connection = await spares.take({ spareKey: `${namespace}#${url}#${fingerprint}`, open: () => openMcpConnection({ url, timeoutMs }) });
 */
export function createSpareSessions(options: SpareSessionOptions): SpareSessions {
  const kept = new Map<string, Spare>();
  const refills = new Map<string, NodeJS.Timeout>();
  let closed = false;

  const closeUnused = (spare: Spare): Promise<void> =>
    spare.ready.then((connection) => connection?.close()).catch(() => undefined);

  function drop(spareKey: string): Spare | undefined {
    const spare = kept.get(spareKey);
    if (!spare) return undefined;
    kept.delete(spareKey);
    clearTimeout(spare.idleTimer);
    return spare;
  }

  function refillLater(spareKey: string, open: () => Promise<McpConnection>): void {
    if (closed || kept.has(spareKey) || refills.has(spareKey)) return;
    const timer = setTimeout(() => {
      refills.delete(spareKey);
      if (closed || kept.has(spareKey) || kept.size >= options.max) return;
      const spare: Spare = {
        // A spare that failed to open is nobody's failure: the run that would have taken it opens its own.
        ready: open().catch(() => undefined),
        idleTimer: setTimeout(() => {
          if (kept.get(spareKey) !== spare) return;
          drop(spareKey);
          void closeUnused(spare);
        }, options.idleMs),
      };
      spare.idleTimer.unref();
      void spare.ready.then((connection) => {
        if (connection === undefined && kept.get(spareKey) === spare) drop(spareKey);
      });
      kept.set(spareKey, spare);
    }, options.refillDelayMs);
    timer.unref();
    refills.set(spareKey, timer);
  }

  function fromSpare(spare: Spare, open: () => Promise<McpConnection>, vet?: () => Promise<void>) {
    const vetted = vet
      ? vet().then(
          () => true,
          () => false,
        )
      : Promise.resolve(true);
    return Promise.all([spare.ready, vetted]).then(([connection, passed]) => {
      if (connection?.open && passed) return connection;
      void connection?.close();
      return open();
    });
  }

  return {
    take({ spareKey, open, vet }) {
      if (spareKey === undefined) return open();
      const spare = drop(spareKey);
      const taken = spare ? fromSpare(spare, open, vet) : open();
      // The next spare waits for this run's session, so that it never competes with its opening.
      const refill = () => refillLater(spareKey, open);
      taken.then(refill, refill);
      return taken;
    },
    discard(spareKey) {
      const spare = drop(spareKey);
      if (spare) void closeUnused(spare);
    },
    get size() {
      return kept.size;
    },
    async close() {
      closed = true;
      for (const timer of refills.values()) clearTimeout(timer);
      refills.clear();
      const all = [...kept.keys()].map((key) => drop(key)).filter((spare) => spare !== undefined);
      await Promise.all(all.map(closeUnused));
    },
  };
}
