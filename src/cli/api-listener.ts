/**
 * The API's HTTP listener, up before the API itself: it serves a stand-in (the waiting app, while
 * the API waits for its cluster) until `serve` hands it the real app, so probes get an answer from
 * the first moment and a port already taken is found before anything else is opened.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { answerRefusedRequests } from "../api/index.ts";

export interface ApiListener {
  /** `http://host:port`, with the port the system picked when 0 was asked for. */
  url: string;
  /** From now on, requests go to `app`. */
  serve(app: RequestListener): void;
  /** Stops listening and closes the connections still open. */
  close(): Promise<void>;
}

/**
 * How long an idle connection stays open: longer than clients keep idle connections themselves
 * (undici: 4 s, or the server's hint less 2 s), so that a client never sends a request on a
 * connection the API is closing at that moment. With Node's 5 s, a loaded client (an MCP client
 * polling a task, a test on a busy machine) reused such a connection and read ECONNRESET.
 */
export const KEEP_ALIVE_MS = 65_000;

export async function listenApi(where: { host: string; port: number }, first: RequestListener): Promise<ApiListener> {
  let current = first;
  const server: Server = createServer((req, res) => current(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(where.port, where.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  answerRefusedRequests(server);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  const { port } = server.address() as AddressInfo;
  const host = where.host.includes(":") ? `[${where.host}]` : where.host;
  return {
    url: `http://${host}:${port}`,
    serve(app) {
      current = app;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A keep-alive connection busy when the close began stays open once idle, for KEEP_ALIVE_MS:
      // closed as soon as it is idle instead.
      const idle = setInterval(() => server.closeIdleConnections(), 50);
      await closed;
      clearInterval(idle);
      server.closeAllConnections();
    },
  };
}
