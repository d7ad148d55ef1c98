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
 *
 * Behind that, a guard between the retries and the channel: once the channel is closing, an
 * attempt gets a call that ends at once with CANCELLED instead of a new call on the channel. The
 * marker timers order the backoffs against close() by the event loop's timer lists, and a loaded
 * CI run once saw a retry reach the shut channel all the same; the guard does not depend on timers.
 */
import {
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
  type GrpcRetryOptions,
} from "@temporalio/client";

type Interceptor = NonNullable<ConnectionOptions["interceptors"]>[number];
/** What an interceptor answers: grpc-js types it as its InterceptingCall class, and uses its methods only. */
type CallOf = ReturnType<Interceptor>;

/** gRPC's CANCELLED status code. */
const CANCELLED = 1;

/**
 * A call that never reaches the channel: started, it ends with CANCELLED (on a later turn, once
 * its starter has sent its message and half-closed, as the SDK's retry does right after start).
 */
function cancelledCall(): CallOf {
  const call = {
    start(metadata: unknown, listener: { onReceiveStatus(status: unknown): void }) {
      setImmediate(() =>
        listener.onReceiveStatus({ code: CANCELLED, details: "the connection to Temporal is closed", metadata }),
      );
    },
    sendMessage() {},
    sendMessageWithContext() {},
    halfClose() {},
    startRead() {},
    cancelWithStatus() {},
    getPeer: () => "",
    getAuthContext: () => null,
  };
  return call as unknown as CallOf;
}

/** The backoff timers one connection's retries have set, and whether it is closing. */
class RetryTimers {
  private closing = false;
  private pending = 0;
  private allFired: (() => void) | undefined;
  /** Set as the channel is about to close: attempts from then on get `cancelledCall()`. */
  channelClosing = false;

  /** The interceptor between the retries and the channel (see the file's header). */
  guard(): Interceptor {
    return (options, nextCall) => (this.channelClosing ? cancelledCall() : (nextCall(options) as CallOf));
  }

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
    if (this.retryTimers) this.retryTimers.channelClosing = true;
    await super.close();
  }
}

type Options = Omit<ConnectionOptions, "interceptors">;

/** `Connection.lazy` with retries that end before the channel closes: nothing is sent yet. */
export function lazyConnectionWithRetriesEndingBeforeClose(options: Options): Connection {
  const timers = new RetryTimers();
  const connection = ConnectionClosedAfterRetries.lazy({
    ...options,
    interceptors: [makeGrpcRetryInterceptor(timers.options()), timers.guard()],
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
