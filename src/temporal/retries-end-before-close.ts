/**
 * A client connection whose retries end before its channel does. The SDK retries a failed gRPC
 * call after a backoff timer; when the connection is closed while that timer waits, the timer's
 * next attempt opens a call on the shut channel and throws "Channel has been shut down" from the
 * timer, where no caller can catch it, and the process (or a test run) dies of an uncaught error.
 *
 * Here the retry decision refuses a new attempt once close() has begun, and close() waits out the
 * backoff timers already set (the SDK caps each at 5 s, jittered) before it shuts the channel: the
 * attempt a timer makes still finds the channel open, fails or succeeds, and its caller hears of
 * it. Calls made after close() fail in their caller's own stack, as the SDK has them.
 */
import {
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
  type GrpcRetryOptions,
} from "@temporalio/client";

/** The backoff timers one connection's retries have set, and whether it is closing. */
class RetryTimers {
  private closing = false;
  private pending = 0;
  private allFired: (() => void) | undefined;

  /**
   * The SDK's default retry policy, told no once closing. Each backoff gets a marker timer of
   * its own, 1 ms longer, set in the same tick as the SDK's (the SDK computes the delay as it
   * calls setTimeout): both start at the same loop time, so the marker fires after the SDK's timer
   * has made its attempt, however late the event loop runs them. (Waiting until a due time read
   * from the wall clock, as this did before, once let a loaded test run close first: the wall
   * clock and the timers' monotonic clock are two clocks.)
   */
  options(): GrpcRetryOptions {
    const defaults = defaultGrpcRetryOptions();
    return {
      retryableDecider: (attempt, status) => !this.closing && defaults.retryableDecider(attempt, status),
      delayFunction: (attempt, status) => {
        const delayMs = defaults.delayFunction(attempt, status);
        this.pending += 1;
        // Not unref'd: a close waits on it, and it outlives the SDK's own timer by 1 ms only.
        setTimeout(() => this.fired(), delayMs + 1);
        return delayMs;
      },
    };
  }

  private fired(): void {
    this.pending -= 1;
    if (this.pending === 0) this.allFired?.();
  }

  /** Refuses further retries, then waits until every backoff already set has made its attempt. */
  async stop(): Promise<void> {
    this.closing = true;
    if (this.pending === 0) return;
    await new Promise<void>((resolve) => (this.allFired = resolve));
  }
}

/** Connection, with close() waiting for the retries under way (see the file's header). */
class ConnectionClosedAfterRetries extends Connection {
  retryTimers: RetryTimers | undefined;

  override async close(): Promise<void> {
    await this.retryTimers?.stop();
    await super.close();
  }
}

type Options = Omit<ConnectionOptions, "interceptors">;

/** `Connection.lazy` with retries that end before the channel closes: nothing is sent yet. */
export function lazyConnectionWithRetriesEndingBeforeClose(options: Options): Connection {
  const timers = new RetryTimers();
  const connection = ConnectionClosedAfterRetries.lazy({
    ...options,
    interceptors: [makeGrpcRetryInterceptor(timers.options())],
  });
  if (!(connection instanceof ConnectionClosedAfterRetries)) throw new TypeError("Connection.lazy built another class");
  connection.retryTimers = timers;
  return connection;
}

/**
 * `Connection.connect` with retries that end before the channel closes; a connection that fails
 * its first contact is closed before the error is thrown, so it leaves nothing behind either.
 */
export async function connectWithRetriesEndingBeforeClose(options: Options): Promise<Connection> {
  const connection = lazyConnectionWithRetriesEndingBeforeClose(options);
  try {
    await connection.ensureConnected();
  } catch (error) {
    await connection.close();
    throw error;
  }
  return connection;
}
