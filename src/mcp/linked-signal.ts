/**
 * One abort signal that follows several, and can let go of them. `AbortSignal.any` would do the
 * following, but Node keeps a signal made by it alive for as long as it has an `abort` listener
 * and has not aborted — and the MCP SDK and undici both add one to every request's signal and
 * never take it off. Each request of a session that never aborted stayed in memory with its
 * call's closure (its progress hook, its activity) for the life of the process. A signal linked
 * here is an ordinary controller's: it lives only as long as something holds it, and `unlink`
 * takes its listeners off the sources, which may live much longer (a session's own signal).
 */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Stops following the sources; the signal keeps whatever state it has. */
  unlink(): void;
}

export function linkSignals(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, unlink: () => undefined };
  }
  const follow = (event: Event): void => {
    unlink();
    controller.abort((event.target as AbortSignal).reason);
  };
  const unlink = (): void => {
    for (const source of sources) source.removeEventListener("abort", follow);
  };
  for (const source of sources) source.addEventListener("abort", follow, { once: true });
  return { signal: controller.signal, unlink };
}
