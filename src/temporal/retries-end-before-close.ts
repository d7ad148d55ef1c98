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
  private lastDueAt = 0;

  /** The SDK's default retry policy, told no once closing, with each timer's due time noted. */
  options(): GrpcRetryOptions {
    const defaults = defaultGrpcRetryOptions();
    return {
      retryableDecider: (attempt, status) => !this.closing && defaults.retryableDecider(attempt, status),
      delayFunction: (attempt, status) => {
        const delayMs = defaults.delayFunction(attempt, status);
        this.lastDueAt = Math.max(this.lastDueAt, Date.now() + delayMs);
        return delayMs;
      },
    };
  }

  /** Refuses further retries, then waits until every timer already set has fired. */
  async stop(): Promise<void> {
    this.closing = true;
    // A timer set for the same moment fires in the order it was set: the margin puts this one last.
    const waitMs = this.lastDueAt - Date.now();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs + 20));
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
