/**
 * The cluster wait: `rewind worker` and `rewind api` started while nothing answers at
 * TEMPORAL_ADDRESS (the cluster restarting, or started after them) try again, 0.5 s apart at
 * first and doubling to 10 s, one line per attempt saying what they wait for and why, and go on
 * once it answers. A refusal (TLS, authentication, a missing namespace) still fails at once with
 * its own sentence: waiting would not fix it (cluster-silence.ts tells the two apart).
 * REWIND_CONNECT_TIMEOUT bounds the wait for those who would rather crash and be restarted.
 */
import { describeTransport, type TemporalConnectionSettings } from "./connection.ts";
import { clusterSilence, tcpSilence } from "./cluster-silence.ts";

export interface ClusterWaitOptions {
  /** What waits, for the lines: `the worker`, `the API`. */
  waiter: string;
  /** Give up after this long (REWIND_CONNECT_TIMEOUT); default: wait for as long as it takes. */
  timeoutMs?: number | undefined;
  /** Receives one line per attempt that found nothing answering. */
  log: (line: string) => void;
  /** Stops the wait (the process was told to stop): it rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** The first pause; it doubles up to `maxDelayMs`. Default 500 ms. */
  initialDelayMs?: number;
  /** Default 10 s. */
  maxDelayMs?: number;
}

/** The wait gave up (REWIND_CONNECT_TIMEOUT): the message names what waited, for what, how long and why. */
export class ClusterWaitTimeoutError extends Error {
  override name = "ClusterWaitTimeoutError";
}

/** How long the TCP probe of one attempt may take: a silent network (dropped packets) ends there. */
const TCP_PROBE_MS = 5_000;

/** Resolves after `ms`, or rejects at once with the reason of `signal` when it aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }, ms);
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

function seconds(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : `${Number((ms / 1_000).toFixed(1))} s`;
}

/**
 * Calls `reach` (connect and check the namespace) once something listens at the address, and
 * answers what it answers; while nothing answers, waits and tries again. Throws what `reach`
 * throws when it is not silence, and ClusterWaitTimeoutError past `timeoutMs`.
 */
export async function waitForCluster<T>(
  settings: TemporalConnectionSettings,
  reach: () => Promise<T>,
  options: ClusterWaitOptions,
): Promise<T> {
  const { initialDelayMs = 500, maxDelayMs = 10_000, timeoutMs } = options;
  const began = Date.now();
  const target = `Temporal at ${settings.address} (${describeTransport(settings)})`;
  let delay = initialDelayMs;
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    let silence = await tcpSilence(settings.address, TCP_PROBE_MS);
    if (silence === undefined) {
      try {
        const reached = await reach();
        if (attempt > 1) options.log(`${options.waiter}: ${target} answers after ${seconds(Date.now() - began)}`);
        return reached;
      } catch (error) {
        silence = clusterSilence(error);
        if (silence === undefined) throw error;
      }
    }
    const waited = Date.now() - began;
    if (timeoutMs !== undefined && waited >= timeoutMs)
      throw new ClusterWaitTimeoutError(
        `${options.waiter} gave up waiting for ${target} after ${seconds(waited)} (REWIND_CONNECT_TIMEOUT=${seconds(timeoutMs)}): nothing answers (${silence})`,
      );
    // The last attempt falls on the deadline.
    const next = timeoutMs === undefined ? delay : Math.min(delay, timeoutMs - waited);
    options.log(
      `${options.waiter} is waiting for ${target}: nothing answers (${silence}); attempt ${attempt}, next in ${seconds(next)}`,
    );
    await pause(next, options.signal);
    delay = Math.min(delay * 2, maxDelayMs);
  }
}
