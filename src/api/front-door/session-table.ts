/**
 * The front door's sessions in this API process, each under the scope it was opened with. Its
 * one rule: a namespace holds at most `perNamespace` sessions, and a session is closed once no
 * request of it has been open for `idleMs` (a client's open stream counts as a request). A new
 * session of a namespace that holds as many as it may takes the place of its longest-unused idle
 * one; when none is idle, it is refused. What a session is, this table does not know: anything
 * that can be closed.
 */

export interface SessionTableOptions {
  /** A session with no request open for this long is closed by `sweep`. */
  idleMs: number;
  /** Sessions one namespace may hold at once. */
  perNamespace: number;
  /** The clock; default Date.now. */
  now?: () => number;
}

interface Entry<S> {
  session: S;
  scopeKey: string;
  namespace: string;
  /** Requests of the session whose HTTP exchange is still open. */
  open: number;
  lastSeen: number;
}

export class SessionTable<S extends { close(): Promise<void> }> {
  readonly #entries = new Map<string, Entry<S>>();
  readonly #options: Required<SessionTableOptions>;

  constructor(options: SessionTableOptions) {
    this.#options = { now: Date.now, ...options };
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The session `id` names, only under the scope it was opened with. */
  find(id: string, scopeKey: string): S | undefined {
    const entry = this.#entries.get(id);
    return entry?.scopeKey === scopeKey ? entry.session : undefined;
  }

  /**
   * Room for one more session of `namespace`: its longest-unused idle session is closed when it
   * holds as many as it may. False when all of them are in use.
   */
  async makeRoom(namespace: string): Promise<boolean> {
    const own = [...this.#entries.values()].filter((e) => e.namespace === namespace);
    if (own.length < this.#options.perNamespace) return true;
    const idle = own.filter((e) => e.open === 0).sort((a, b) => a.lastSeen - b.lastSeen)[0];
    if (!idle) return false;
    await idle.session.close();
    return true;
  }

  add(id: string, session: S, scope: { scopeKey: string; namespace: string }): void {
    this.#entries.set(id, { session, ...scope, open: 0, lastSeen: this.#options.now() });
  }

  remove(id: string): void {
    this.#entries.delete(id);
  }

  /** A request of session `id` began; the returned function says it ended. */
  begin(id: string): () => void {
    const entry = this.#entries.get(id);
    if (!entry) return () => undefined;
    entry.open += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      entry.open -= 1;
      entry.lastSeen = this.#options.now();
    };
  }

  /** Closes the sessions idle for `idleMs`; answers how many. */
  async sweep(): Promise<number> {
    const now = this.#options.now();
    const idle = [...this.#entries.values()].filter((e) => e.open === 0 && now - e.lastSeen >= this.#options.idleMs);
    await Promise.all(idle.map((e) => e.session.close()));
    return idle.length;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((e) => e.session.close()));
  }
}
