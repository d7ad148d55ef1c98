/**
 * The cluster wait, in process: its setting; which failures count as "nothing answers" (the Rust core's and
 * grpc-js's words, copied from real failures) and which are refusals that must still fail at
 * once; and the loop itself against a loopback port nothing listens on — its lines, its doubling
 * pauses, REWIND_CONNECT_TIMEOUT's bound and a stop that ends it — and against one that listens.
 * No Temporal runtime is created here (the test processes share it): `reach` is the test's own.
 */
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { getFreePort } from "../../src/dev/index.ts";
import { clusterSilence } from "../../src/temporal/cluster-silence.ts";
import { ClusterWaitTimeoutError, waitForCluster } from "../../src/temporal/cluster-wait.ts";
import { TemporalUnreachableError } from "../../src/temporal/connection.ts";

/** A Rust core failure as the SDK throws it: a TransportError with the core's text. */
function coreError(message: string): Error {
  const error = new Error(message);
  error.name = "TransportError";
  return error;
}

describe("REWIND_CONNECT_TIMEOUT", () => {
  it("is a duration or milliseconds; unset, the wait has no end", () => {
    const bound = (value?: string) =>
      loadConfig(value === undefined ? {} : { REWIND_CONNECT_TIMEOUT: value }).temporal.connectTimeoutMs;
    expect(bound()).toBeUndefined();
    expect(bound("")).toBeUndefined();
    expect(bound("30s")).toBe(30_000);
    expect(bound("5m")).toBe(300_000);
    expect(bound("1500")).toBe(1_500);
    expect(() => bound("soon")).toThrow(ConfigError);
    expect(() => bound("soon")).toThrow(/^REWIND_CONNECT_TIMEOUT: "soon" is not a duration/);
  });
});

describe("clusterSilence", () => {
  it("names why nothing answers: a refused port, a name that does not resolve, a silent network", () => {
    expect(
      clusterSilence(
        coreError(
          'tonic::transport::Error(Transport, ConnectError(ConnectError("tcp connect error", 127.0.0.1:1, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })))',
        ),
      ),
    ).toBe("connection refused");
    expect(
      clusterSilence(
        coreError(
          'tonic::transport::Error(Transport, ConnectError(ConnectError("dns error", Custom { kind: Uncategorized, error: "failed to lookup address information: Name or service not known" })))',
        ),
      ),
    ).toBe("its name does not resolve");
    expect(clusterSilence(Object.assign(new Error("connect ETIMEDOUT 10.0.0.1:7233"), { code: "ETIMEDOUT" }))).toBe(
      "no answer in time",
    );
    // A port that accepts connections and never speaks: the client's deadline, and nothing the native client could add.
    expect(
      clusterSilence(
        new TemporalUnreachableError(
          "cannot connect to Temporal at 127.0.0.1:1 (plaintext (no TLS)): Failed to connect before the deadline; check TEMPORAL_ADDRESS",
          { cause: new Error("Failed to connect before the deadline"), silent: true },
        ),
      ),
    ).toBe("it accepts connections but does not answer in time");
    // The native client's words for it, behind our wrapper, whose own words ("no TLS") are not read as a refusal.
    expect(
      clusterSilence(
        new TemporalUnreachableError("cannot connect to Temporal at 127.0.0.1:1 (plaintext (no TLS)): …", {
          cause: coreError(
            "Failed to call GetSystemInfo: code: 'The operation was cancelled', message: \"Timeout expired\", source: tonic::transport::Error(Transport, TimeoutExpired(()))",
          ),
          silent: false,
        }),
      ),
    ).toBe("no answer in time");
    // Wrapped, as connectNative wraps it: the cause is followed.
    expect(clusterSilence(new Error("cannot connect", { cause: coreError("Os { kind: ConnectionRefused }") }))).toBe(
      "connection refused",
    );
  });

  it("does not wait on a refusal: a TLS handshake, an unauthenticated or forbidden answer, anything unknown", () => {
    expect(
      clusterSilence(
        coreError(
          'tonic::transport::Error(Transport, ConnectError(Custom { kind: InvalidData, error: "received fatal alert: CertificateRequired" }))',
        ),
      ),
    ).toBeUndefined();
    expect(
      clusterSilence(coreError('InvalidCertificate(NotValidForNameContext { expected: DnsName("wrong.internal") })')),
    ).toBeUndefined();
    // A refused handshake may end in a closed connection: the alert decides.
    expect(
      clusterSilence(
        coreError('received fatal alert: CertificateRequired; hyper::Error(Canceled, "connection reset")'),
      ),
    ).toBeUndefined();
    expect(
      clusterSilence(
        coreError(
          "Failed to call GetSystemInfo: code: 'The request does not have valid authentication credentials', message: \"Request unauthorized\"",
        ),
      ),
    ).toBeUndefined();
    expect(clusterSilence(new Error('Temporal namespace "x" does not exist at 127.0.0.1:7233'))).toBeUndefined();
    expect(clusterSilence(new Error("something nobody has seen before"))).toBeUndefined();
    // A plaintext client at a TLS port: the deadline passed, but the native client names what answered.
    expect(
      clusterSilence(
        new TemporalUnreachableError(
          "cannot connect to Temporal at 127.0.0.1:1 (plaintext (no TLS)): Failed to connect before the deadline (stream closed because of a broken pipe)",
          { cause: new Error("Failed to connect before the deadline"), silent: false },
        ),
      ),
    ).toBeUndefined();
  });
});

describe("waitForCluster", () => {
  const servers: net.Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it("waits on a port nothing listens on, one line per attempt, and gives up at REWIND_CONNECT_TIMEOUT naming what it waited for", async () => {
    const address = `127.0.0.1:${await getFreePort()}`;
    const lines: string[] = [];
    let reached = 0;
    const began = Date.now();
    const failure = await waitForCluster(
      { address },
      async () => {
        reached++;
      },
      { waiter: "the worker", timeoutMs: 700, initialDelayMs: 100, maxDelayMs: 200, log: (line) => lines.push(line) },
    ).then(
      () => expect.fail("the wait ended without Temporal"),
      (error: unknown) => error,
    );
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(failure).toBeInstanceOf(ClusterWaitTimeoutError);
    expect((failure as Error).message).toMatch(
      new RegExp(
        `^the worker gave up waiting for Temporal at ${address} \\(plaintext \\(no TLS\\)\\) after [\\d.]+ m?s \\(REWIND_CONNECT_TIMEOUT=700 ms\\): nothing answers \\(connection refused\\)$`,
      ),
    );
    expect(reached, "nothing listens: the connection itself is never tried").toBe(0);
    expect(lines.slice(0, 3)).toEqual([
      `the worker is waiting for Temporal at ${address} (plaintext (no TLS)): nothing answers (connection refused); attempt 1, next in 100 ms`,
      `the worker is waiting for Temporal at ${address} (plaintext (no TLS)): nothing answers (connection refused); attempt 2, next in 200 ms`,
      `the worker is waiting for Temporal at ${address} (plaintext (no TLS)): nothing answers (connection refused); attempt 3, next in 200 ms`,
    ]);
  });

  it("ends when told to stop", async () => {
    const address = `127.0.0.1:${await getFreePort()}`;
    const stop = new AbortController();
    const waiting = waitForCluster({ address }, async () => "reached", {
      waiter: "the API",
      log: () => stop.abort(new Error("stopped by SIGTERM")),
      signal: stop.signal,
    });
    await expect(waiting).rejects.toThrow("stopped by SIGTERM");
  });

  it("goes on once something listens, and fails at once when what answers refuses", async () => {
    const server = net.createServer((socket) => socket.destroy());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const lines: string[] = [];
    const options = { waiter: "the worker", log: (line: string) => lines.push(line) };
    await expect(waitForCluster({ address }, async () => "reached", options)).resolves.toBe("reached");
    const refusal = new Error("received fatal alert: CertificateRequired");
    await expect(
      waitForCluster(
        { address },
        async () => {
          throw refusal;
        },
        options,
      ),
    ).rejects.toBe(refusal);
    expect(lines).toEqual([]);
  });
});
