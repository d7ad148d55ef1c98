/**
 * The one way a test waits for something to happen: `probe` is called every `intervalMs` until
 * what it returns is ready, and that value is returned. Ready means `until(value)` when `until`
 * is given, else a value other than `undefined`, `null` or `false`. When `timeoutMs` passes first
 * the wait throws an Error naming `what` it waited for and the last value the probe returned (or
 * the last error it threw), so a wait never ends silently and its failure says what was seen.
 *
 * An error thrown by the probe ends the wait at once, unless `retryErrors` is set (for a probe
 * that may fail while what it reads is coming up: a query to a restarting worker, a server not
 * yet listening).
 */
export interface WaitOptions {
  /** How long to wait before failing; 30 s unless told. */
  timeoutMs?: number;
  /** How long between two probes; 100 ms unless told. */
  intervalMs?: number;
  /** Keep probing when the probe throws; the last error is in the timeout's message. */
  retryErrors?: boolean;
}

type Ready<T> = Exclude<T, undefined | null | false>;

export class WaitTimeoutError extends Error {
  override name = "WaitTimeoutError";
}

interface ValueOptions<T> {
  /** What of the last value the timeout's message shows (all of it, as JSON, unless told). */
  shown?: (value: T) => unknown;
}

export function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: WaitOptions & ValueOptions<T> & { until: (value: T) => boolean },
): Promise<T>;
export function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  options?: WaitOptions & ValueOptions<T>,
): Promise<Ready<T>>;
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: WaitOptions & ValueOptions<T> & { until?: (value: T) => boolean } = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 100, retryErrors = false, until, shown = (value: T) => value } = options;
  const ready = until ?? ((value: T) => value !== undefined && value !== null && value !== false);
  const began = Date.now();
  let last: { value: unknown } | { error: unknown } | undefined;
  for (;;) {
    try {
      const value = await probe();
      if (ready(value)) return value;
      last = { value: shown(value) };
    } catch (error) {
      if (!retryErrors) throw error;
      last = { error };
    }
    if (Date.now() - began >= timeoutMs) {
      throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${what}; ${describe(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

const MAX_SHOWN = 2_000;

function describe(last: { value: unknown } | { error: unknown } | undefined): string {
  if (last === undefined) return "the probe never answered";
  if ("error" in last) {
    const error = last.error;
    return `the probe last threw: ${error instanceof Error ? `${error.name}: ${error.message}` : show(error)}`;
  }
  return `the probe last returned: ${show(last.value)}`;
}

function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}… (${text.length} characters)` : text;
}
