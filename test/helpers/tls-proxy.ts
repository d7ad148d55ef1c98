/**
 * A TLS-terminating TCP proxy for tests, in front of a server that has no TLS of its own (the
 * Temporal dev server): it listens on 127.0.0.1, requires a client certificate signed by the
 * given CA, offers ALPN `h2` (gRPC is HTTP/2, so after TLS the bytes pass through unchanged), and
 * pipes each accepted connection to the target. It counts what it accepted and what it refused,
 * so a test can tell a refusal at the TLS handshake from one anywhere else.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";

export interface TlsProxyOptions {
  /** PEM files of the proxy's certificate and key, and of the CA client certificates must chain to. */
  cert: string;
  key: string;
  clientCa: string;
  /** Where accepted connections go. */
  target: { host: string; port: number };
}

export interface TlsProxy {
  /** `127.0.0.1:<port>`, what TEMPORAL_ADDRESS names. */
  address: string;
  port: number;
  stats: { accepted: number; refused: number; refusals: string[] };
  close(): Promise<void>;
}

export async function startTlsProxy(options: TlsProxyOptions): Promise<TlsProxy> {
  const stats: TlsProxy["stats"] = { accepted: 0, refused: 0, refusals: [] };
  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    {
      cert: readFileSync(options.cert),
      key: readFileSync(options.key),
      ca: readFileSync(options.clientCa),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ["h2"],
    },
    (client) => {
      stats.accepted++;
      const upstream = net.connect(options.target.port, options.target.host);
      sockets.add(client).add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
      client.pipe(upstream).pipe(client);
    },
  );
  server.on("tlsClientError", (error) => {
    stats.refused++;
    stats.refusals.push(error.message);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    port,
    stats,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
