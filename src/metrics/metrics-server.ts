/**
 * The metrics listener a process opens when REWIND_METRICS_PORT is set: `GET /metrics` and
 * nothing else, on an address of its own, so Prometheus can scrape a worker (which has no HTTP
 * API) and an API whose port serves tenants. It never keeps the process alive by itself.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface MetricsServerOptions {
  host: string;
  /** 0: a port the OS picks (tests). */
  port: number;
  contentType: string;
  scrape(): Promise<string>;
  /** Told when a scrape fails (the listener answers 500). */
  onError?(error: unknown): void;
}

export interface MetricsServer {
  /** `http://host:port/metrics`. */
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer(function serveMetrics(req, res) {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: this listener serves GET /metrics only\n");
      return;
    }
    options.scrape().then(
      (text) => {
        res.writeHead(200, { "content-type": options.contentType }).end(req.method === "HEAD" ? undefined : text);
      },
      (error: unknown) => {
        options.onError?.(error);
        res.writeHead(500, { "content-type": "text/plain" }).end("metrics are not available\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
