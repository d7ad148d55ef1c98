/**
 * Child-process entry of the bench's MCP server: a tool server is another process in real life,
 * and keeping it out of the bench and worker processes keeps their CPU profiles and memory
 * readings about Rewind. The bench asks it over IPC when a run's first call arrived.
 */
import { announceReady, serveIpc } from "./ipc.ts";
import { startBenchMcpServer } from "./mcp-server.ts";

const server = await startBenchMcpServer();

serveIpc({
  firstArrivals(args) {
    const ids = Array.isArray(args) ? args.map(String) : [];
    return Object.fromEntries(ids.map((id) => [id, server.firstArrivals.get(id) ?? null]));
  },
  stats: () => ({ calls: server.calls, listings: server.listings, rss: process.memoryUsage().rss }),
  forget() {
    server.firstArrivals.clear();
    return null;
  },
  async stop() {
    await server.close();
    setImmediate(() => process.exit(0));
    return null;
  },
});
process.on("disconnect", () => process.exit(0));
announceReady({ url: server.url });
