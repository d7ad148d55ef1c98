/**
 * Telling "nothing answers at TEMPORAL_ADDRESS" apart from "something answered and refused", for
 * a process starting up: the first is a cluster restarting (or started after us: compose, a
 * rollout), and waiting fixes it; the second is a refused TLS handshake, an unauthenticated or
 * forbidden answer, a missing namespace, and waiting never fixes it, so it still fails at once.
 * Only what is known to be silence counts as silence: anything else keeps failing fast.
 */
import net from "node:net";
import { TemporalUnreachableError } from "./connection.ts";
import { temporalCallFailure } from "./unreachable.ts";

/**
 * Words of a refusal, in any layer's error text (rustls, the Rust core, grpc-js): checked first,
 * because a refused handshake may also end in "connection closed".
 */
const REFUSAL =
  /certificate|fatal alert|handshake|\btls\b|\bssl\b|unauthenticated|authentication credentials|permission ?denied|not have permission/i;

/** The Rust core's words (tonic, hyper, std::io) for nothing answering, and what we say for each. */
const SILENCES: [RegExp, string][] = [
  [/ConnectionRefused|Connection refused|ECONNREFUSED/, "connection refused"],
  [/dns error|failed to lookup address|ENOTFOUND|EAI_AGAIN/, "its name does not resolve"],
  [/TimedOut|timed out|ETIMEDOUT|Deadline expired|Timeout ?expired/i, "no answer in time"],
  [/HostUnreachable|NetworkUnreachable|EHOSTUNREACH|ENETUNREACH|No route to host/, "no route to it"],
  [/ConnectionReset|Connection reset|ECONNRESET/, "connection reset"],
  [/service is currently unavailable|\bUnavailable\b/, "the server says it is unavailable"],
];

function textsOf(error: unknown): string[] {
  const texts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      const code = (current as NodeJS.ErrnoException).code;
      texts.push(`${current.message}${typeof code === "string" ? ` ${code}` : ""}`);
      current = current.cause;
    } else {
      texts.push(String(current));
      current = undefined;
    }
  }
  return texts;
}

/**
 * Why nothing answered, when `error` (a failed connection or first call) says so:
 * `connection refused`, `its name does not resolve`…; undefined when something answered and
 * refused, or when the failure is not one known to be silence.
 */
export function clusterSilence(error: unknown): string | undefined {
  if (error instanceof TemporalUnreachableError && error.silent)
    return "it accepts connections but does not answer in time";
  // Our own wrapper's words name the transport ("no TLS"), which the refusal words would take for
  // a refusal: only what it wraps is read.
  const texts = textsOf(error instanceof TemporalUnreachableError ? error.cause : error);
  if (texts.some((text) => REFUSAL.test(text))) return undefined;
  const failure = temporalCallFailure(error);
  if (failure) return failure.kind === "unavailable" ? `unavailable: ${failure.reason}` : "no answer in time";
  for (const [pattern, reason] of SILENCES) if (texts.some((text) => pattern.test(text))) return reason;
  return undefined;
}

/** `host` and `port` of `host:port` or `[v6]:port`; the port defaults to Temporal's 7233. */
function hostAndPort(address: string): { host: string; port: number } {
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(address) ?? /^([^:]+)(?::(\d+))?$/.exec(address);
  return { host: match?.[1] ?? address, port: Number(match?.[2] ?? 7233) };
}

/**
 * Whether a TCP connection to `address` opens within `ms`: undefined when it does (something
 * listens; whether it is Temporal, and will have us, the real connection tells), else why not.
 * Asked before each connection attempt, because the client connection only says that its deadline
 * (10 s) passed, where this answers a refused port in a millisecond.
 */
export function tcpSilence(address: string, ms: number): Promise<string | undefined> {
  const { host, port } = hostAndPort(address);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(ms, () => done("no answer in time"));
    socket.once("connect", () => done(undefined));
    socket.once("error", (error) => done(clusterSilence(error) ?? error.message));
  });
}
