/**
 * Test scaffolding for the http tool: loopback HTTP servers, a resolver that maps made-up names
 * to chosen addresses, and a guard that makes it impossible for a test to open a socket to
 * anything but loopback. The guard is what lets the refusal tests use addresses such as
 * 169.254.169.254 safely: had the fetcher's own guard failed, the connect would be stopped here
 * and recorded, never sent.
 */
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import type { Resolver } from "../../src/http-tool/index.ts";

export interface LoopbackServer {
  port: number;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startLoopbackServer(handler: http.RequestListener): Promise<LoopbackServer> {
  const server = http.createServer(handler);
  let connections = 0;
  server.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface RecordingResolver {
  resolve: Resolver;
  calls: string[];
}

/** Answers from a fixed table; a function value may change its answer per call. */
export function tableResolver(table: Record<string, string[] | ((call: number) => string[])>): RecordingResolver {
  const calls: string[] = [];
  const resolve: Resolver = async (hostname) => {
    calls.push(hostname);
    const entry = table[hostname.replace(/\.$/, "")];
    if (entry === undefined) throw Object.assign(new Error(`no test answer for ${hostname}`), { code: "ENOTFOUND" });
    const answers = typeof entry === "function" ? entry(calls.filter((name) => name === hostname).length) : entry;
    return answers.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
  };
  return { resolve, calls };
}

export interface ConnectGuard {
  /** Every connect target, allowed or not. */
  attempts: string[];
  /** Targets the guard stopped: should stay empty. */
  blocked: string[];
  restore(): void;
}

type ConnectFn = (this: net.Socket, ...args: unknown[]) => unknown;

/** Lets sockets connect only to 127.0.0.0/8, ::1 and local IPC paths. */
export function guardConnects(): ConnectGuard {
  const proto = net.Socket.prototype as unknown as { connect: ConnectFn };
  const original = proto.connect;
  const attempts: string[] = [];
  const blocked: string[] = [];
  proto.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const target = connectTarget(args);
    attempts.push(target);
    if (target === "ipc" || target.startsWith("127.") || target === "::1" || target === "localhost") {
      return original.apply(this, args);
    }
    blocked.push(target);
    throw new Error(`test guard: connection to ${target} stopped`);
  };
  return {
    attempts,
    blocked,
    restore: () => {
      proto.connect = original;
    },
  };
}

function connectTarget(args: unknown[]): string {
  // net.connect() hands Socket#connect its normalized arguments as one array.
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === "string") return "ipc";
  if (typeof first === "number") return typeof args[1] === "string" ? args[1] : "localhost";
  if (first !== null && typeof first === "object") {
    const options = first as { path?: unknown; host?: unknown };
    if (typeof options.path === "string") return "ipc";
    return typeof options.host === "string" ? options.host : "localhost";
  }
  return "unknown";
}
